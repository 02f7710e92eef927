#pragma once
// Request-level metrics, collected as requests progress, in memory independent of the number of
// requests (streaming percentiles, running sums).

#include <cstdint>

#include "common/units.h"
#include "sim/options.h"
#include "sim/percentile.h"
#include "sim/request.h"

namespace kvsim::sim {

// Least-squares slope of queueing delay against arrival time, updated one request at a time
// (Welford's co-moments, numerically stable). In a stable system the delay does not trend; when
// arrivals outpace service it grows like (1 - service rate / arrival rate) × time.
class QueueTrend {
 public:
  void add(TimeNs arrival_ns, TimeNs queue_ns);
  std::int64_t count() const { return n_; }
  // Seconds of extra delay per second of arrival time; 0 with fewer than two points or no spread.
  double slope() const;

 private:
  std::int64_t n_ = 0;
  double mean_x_ = 0, mean_y_ = 0, m2_x_ = 0, c_xy_ = 0;
};

struct Metrics {
  explicit Metrics(SloOptions slo_options) : slo(slo_options) {}

  // Per request: TTFT = first token − arrival; TPOT = (e2e − ttft) / (output − 1) (requests with
  // one output token have none); ITL = every gap between consecutive tokens of a request;
  // E2E = last token − arrival; queueing = first admission − arrival; normalized = E2E / output
  // tokens (the PagedAttention paper's normalized latency, in ns per token, rounded).
  LatencyHistogram ttft, tpot, itl, e2e, queue, normalized;
  QueueTrend queue_trend;
  SloOptions slo;

  std::int64_t arrived = 0;
  std::int64_t completed = 0;
  std::int64_t rejected_prompt_too_long = 0;
  std::int64_t rejected_too_long = 0;
  std::int64_t rejected_never_fits = 0;
  std::int64_t prompt_tokens = 0;  // of completed requests
  std::int64_t output_tokens = 0;  // of completed requests
  std::int64_t slo_good = 0;  // completed within every per-request SLO target (TTFT, TPOT, E2E)
  std::int64_t preemptions_recompute = 0;
  std::int64_t preemptions_swap = 0;
  std::int64_t num_steps = 0;           // engine steps, all replicas
  std::int64_t num_sequence_steps = 0;  // Σ live batch rows over steps (padding included)
  std::int64_t num_step_tokens = 0;     // Σ tokens computed over steps
  Bytes swap_out_bytes = 0;
  Bytes swap_in_bytes = 0;
  // Disaggregated serving: each prompt's KV moved from its prefill to its decode instance (the
  // time from the first token to the end of the transfer, link queueing included), and bytes.
  LatencyHistogram kv_transfer;
  Bytes kv_transfer_bytes = 0;
  // KV offload: admissions that loaded blocks from the CPU tier, the bytes, and the time their
  // copies took on the PCIe link (bytes / bandwidth, queueing on the link not included).
  std::int64_t offload_loads = 0;
  Bytes offload_load_bytes = 0;
  TimeNs offload_load_ns = 0;

  std::int64_t rejected() const {
    return rejected_prompt_too_long + rejected_too_long + rejected_never_fits;
  }
  void on_first_scheduled(const Request& r);
  void on_token_gap(TimeNs gap_ns) { itl.add(gap_ns); }
  // `n` inter-token gaps of the same length (a decode step's many requests).
  void on_token_gaps(TimeNs gap_ns, std::int64_t n) { itl.add(gap_ns, n); }
  void on_finished(const Request& r);
  void on_rejected(const Request& r);
};

}  // namespace kvsim::sim
