#pragma once
// Latency SLOs for the planner and their verdict on one probe.
//
// An SLO spec has up to three latency targets — TTFT, TPOT and E2E, each "the P-th percentile
// is at most T" — and an optional required attainment: the fraction of arrived requests that
// finish within every per-request target (rejected and unfinished requests count as missing).
// The load is sustainable at a rate when every target holds and the queue is stable.

#include <cstdint>
#include <functional>
#include <string>

#include "plan/load_search.h"

namespace kvsim::plan {

struct LatencySlo {
  double target_s = 0.0;     // 0 = no target
  double percentile = 99.0;  // in (0, 100]
  bool active() const { return target_s > 0.0; }
};

struct SloSpec {
  LatencySlo ttft;  // time to first token
  LatencySlo tpot;  // time per output token (requests with one output token have none)
  LatencySlo e2e;   // arrival to last token
  // Required fraction in (0, 1] of requests meeting every active per-request target; 0 = none.
  double attainment = 0.0;
  bool any() const { return ttft.active() || tpot.active() || e2e.active() || attainment > 0; }
};

// Throws kvsim::Error naming the flag (--slo-ttft, --slo-tpot, --slo-e2e, --slo-percentile,
// --slo-attainment) for a negative or non-finite target, a percentile outside (0, 100] or an
// attainment outside [0, 1].
void validate_slo(const SloSpec& slo);

// "ttft_p99", "tpot_p99.9", "e2e_p50": the name of a latency SLO in verdicts and reports.
std::string latency_slo_name(const std::string& metric, double percentile);

// True when one request meets every active per-request target. `tpot_s` < 0 = the request has
// no TPOT (one output token), which then cannot miss.
bool request_meets(const SloSpec& slo, double ttft_s, double tpot_s, double e2e_s);

// What a probe measured, as the SLO check needs it.
struct SloObservation {
  // Percentile (q in (0, 100]) of each latency in seconds; may be empty when its SLO is inactive.
  std::function<double(double q)> ttft_s, tpot_s, e2e_s;
  double attainment = 1.0;  // fraction of arrived requests within every per-request target
  bool stable = true;       // the queue did not grow without bound
};

// The verdict: slo_met when every active target holds (<=, inclusive); stable as observed.
// `limiting` names the most violated SLO (largest observed / target ratio; ties in the order
// ttft, tpot, e2e, attainment), or "queue_unstable" when only stability failed.
Verdict check_slos(const SloSpec& slo, const SloObservation& observed);

}  // namespace kvsim::plan
