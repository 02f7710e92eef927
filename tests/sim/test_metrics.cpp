// sim/metrics.cpp: per-request latencies, token counts, SLO goodput, rejections by reason, and
// the queueing-delay trend.
#include <catch2/catch.hpp>

#include "common/units.h"
#include "sim/metrics.h"

using namespace kvsim;
using namespace kvsim::sim;

namespace {

// Arrives at 1 s, admitted at 1.2 s, first token at 1.5 s, last of `output` tokens at 2.5 s.
Request finished(std::int64_t output) {
  Request r;
  r.prompt_tokens = 300;
  r.output_tokens = output;
  r.generated = output;
  r.arrival_ns = 1'000'000'000;
  r.first_scheduled_ns = 1'200'000'000;
  r.first_token_ns = 1'500'000'000;
  r.last_token_ns = 2'500'000'000;
  r.finish_ns = 2'500'000'000;
  r.state = RequestState::kFinished;
  return r;
}

}  // namespace

TEST_CASE("metrics: a finished request's TTFT, E2E, TPOT and normalized latency, exact",
          "[sim][metrics]") {
  Metrics m{SloOptions{}};
  const Request r = finished(5);
  m.on_first_scheduled(r);
  m.on_finished(r);
  CHECK(m.completed == 1);
  CHECK(m.prompt_tokens == 300);
  CHECK(m.output_tokens == 5);
  CHECK(m.queue.percentile(50) == 200'000'000);
  CHECK(m.ttft.percentile(50) == 500'000'000);
  CHECK(m.e2e.percentile(50) == 1'500'000'000);
  CHECK(m.tpot.percentile(50) == 250'000'000);        // 1 s over 4 gaps
  CHECK(m.normalized.percentile(50) == 300'000'000);  // 1.5 s over 5 tokens
  CHECK(m.slo_good == 1);                             // no SLO: every request meets it
}

TEST_CASE("metrics: TPOT rounds to the nearest ns and is absent with one output token",
          "[sim][metrics]") {
  Metrics m{SloOptions{}};
  Request r = finished(4);  // 1,000,000,000 ns over 3 gaps = 333,333,333.3
  m.on_finished(r);
  CHECK(m.tpot.count() == 1);
  CHECK(m.tpot.percentile(50) == 333'333'333);
  Request one = finished(1);
  m.on_finished(one);
  CHECK(m.tpot.count() == 1);  // no gap, no TPOT
  CHECK(m.ttft.count() == 2);
  CHECK(m.normalized.max() == 1'500'000'000);
  Request three = finished(3);
  three.finish_ns = three.first_token_ns + 3;  // 3 ns over 2 gaps: 1.5 rounds up to 2
  m.on_finished(three);
  CHECK(m.tpot.min() == 2);
}

TEST_CASE("metrics: goodput counts only requests within every per-request target",
          "[sim][metrics]") {
  SloOptions slo;
  slo.ttft_ns = 500'000'000;  // inclusive
  slo.tpot_ns = 250'000'000;
  Metrics m{slo};
  m.on_finished(finished(5));  // TTFT 0.5 s, TPOT 0.25 s: both exactly at the target
  m.on_finished(finished(4));  // TPOT 0.333 s: misses
  Request slow = finished(5);
  slow.arrival_ns -= 1;  // TTFT one ns over
  m.on_finished(slow);
  CHECK(m.completed == 3);
  CHECK(m.slo_good == 1);
}

TEST_CASE("metrics: rejections are counted by reason", "[sim][metrics]") {
  Metrics m{SloOptions{}};
  Request r;
  r.state = RequestState::kRejected;
  r.reject_reason = RejectReason::kPromptTooLong;
  m.on_rejected(r);
  r.reject_reason = RejectReason::kTooLong;
  m.on_rejected(r);
  m.on_rejected(r);
  r.reject_reason = RejectReason::kNeverFits;
  m.on_rejected(r);
  CHECK(m.rejected_prompt_too_long == 1);
  CHECK(m.rejected_too_long == 2);
  CHECK(m.rejected_never_fits == 1);
  CHECK(m.rejected() == 4);
  CHECK(m.completed == 0);
}

TEST_CASE("metrics: token gaps go to the inter-token latency", "[sim][metrics]") {
  Metrics m{SloOptions{}};
  m.on_token_gap(10);
  m.on_token_gaps(20, 3);
  CHECK(m.itl.count() == 4);
  CHECK(m.itl.min() == 10);
  CHECK(m.itl.max() == 20);
  CHECK(m.itl.mean() == Approx(17.5));
}

TEST_CASE("queue trend: the least-squares slope of delay against arrival", "[sim][metrics]") {
  QueueTrend t;
  CHECK(t.slope() == 0);
  t.add(kNsPerSecond, 0);
  CHECK(t.slope() == 0);  // one point
  t.add(kNsPerSecond, kNsPerSecond);
  CHECK(t.slope() == 0);  // no spread in arrival time
  QueueTrend growing;
  // delay = 0.5 × (arrival − 1 s): slope 0.5 exactly, whatever the order.
  for (const int s : {3, 1, 5, 2, 4}) growing.add(s * kNsPerSecond, (s - 1) * kNsPerSecond / 2);
  CHECK(growing.count() == 5);
  CHECK(growing.slope() == Approx(0.5).epsilon(1e-12));
  QueueTrend flat;
  for (int s = 0; s < 100; ++s) flat.add(s * kNsPerSecond, 7 * kNsPerMs);
  CHECK(flat.slope() == Approx(0.0).margin(1e-12));
}
