#include "sim/metrics.h"

#include "common/assert.h"

namespace kvsim::sim {

void QueueTrend::add(TimeNs arrival_ns, TimeNs queue_ns) {
  const double x = ns_to_seconds(arrival_ns);
  const double y = ns_to_seconds(queue_ns);
  ++n_;
  const double dx = x - mean_x_;
  mean_x_ += dx / static_cast<double>(n_);
  mean_y_ += (y - mean_y_) / static_cast<double>(n_);
  m2_x_ += dx * (x - mean_x_);
  c_xy_ += dx * (y - mean_y_);
}

double QueueTrend::slope() const {
  if (n_ < 2 || m2_x_ <= 0.0) return 0.0;
  return c_xy_ / m2_x_;
}

void Metrics::on_first_scheduled(const Request& r) {
  const TimeNs delay = r.first_scheduled_ns - r.arrival_ns;
  queue.add(delay);
  queue_trend.add(r.arrival_ns, delay);
}

void Metrics::on_finished(const Request& r) {
  KVSIM_ASSERT(r.generated == r.output_tokens, "a finished request produced every token");
  ++completed;
  prompt_tokens += r.prompt_tokens;
  output_tokens += r.output_tokens;
  const TimeNs ttft_ns = r.first_token_ns - r.arrival_ns;
  const TimeNs e2e_ns = r.finish_ns - r.arrival_ns;
  ttft.add(ttft_ns);
  e2e.add(e2e_ns);
  normalized.add((e2e_ns + r.output_tokens / 2) / r.output_tokens);
  if (r.output_tokens > 1) {
    // Rounded to the nearest ns: exact for the integer inputs up to that rounding.
    const std::int64_t gaps = r.output_tokens - 1;
    tpot.add((e2e_ns - ttft_ns + gaps / 2) / gaps);
  }
  if (request_meets(slo, ttft_ns, e2e_ns, r.output_tokens)) ++slo_good;
}

void Metrics::on_rejected(const Request& r) {
  switch (r.reject_reason) {
    case RejectReason::kPromptTooLong:
      ++rejected_prompt_too_long;
      break;
    case RejectReason::kTooLong:
      ++rejected_too_long;
      break;
    case RejectReason::kNeverFits:
      ++rejected_never_fits;
      break;
    case RejectReason::kNone:
      KVSIM_ASSERT(false, "a rejection has a reason");
      break;
  }
}

}  // namespace kvsim::sim
