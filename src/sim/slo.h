#pragma once
// Latency SLOs — the one SLO type of simulate, compare and plan — and their verdicts.
//
// An SLO has up to three latency targets, TTFT, TPOT and E2E, each "the P-th percentile is at
// most T" (T in integer nanoseconds), and an optional required attainment: the fraction of
// arrived requests that finish within every per-request target (rejected and unfinished requests
// count as missing). Two functions judge it: request_meets (one request, exact integer math; the
// simulator's goodput and attainment) and check_slos (a whole run's percentiles and attainment).

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/units.h"

namespace kvsim::sim {

struct Metrics;

struct SloOptions {
  TimeNs ttft_ns = 0;  // time-to-first-token target; 0 = none
  TimeNs tpot_ns = 0;  // time-per-output-token target; 0 = none
  TimeNs e2e_ns = 0;   // end-to-end latency target; 0 = none
  // A target holds when this percentile of its latency is within it, in (0, 100].
  double percentile = 99.0;
  // A target's own percentile instead of `percentile` (plan.slo's ttft_percentile, ...).
  std::optional<double> ttft_percentile, tpot_percentile, e2e_percentile;
  // Required fraction in (0, 1] of arrived requests within every per-request target; 0 = none.
  double attainment = 0.0;

  bool any_latency() const { return ttft_ns > 0 || tpot_ns > 0 || e2e_ns > 0; }
  bool any() const { return any_latency() || attainment > 0; }
};

enum class SloMetric { kTtft, kTpot, kE2e };

// One latency target with its percentile; inactive when target_ns == 0.
struct LatencyTarget {
  SloMetric metric = SloMetric::kTtft;
  const char* metric_name = "ttft";  // "ttft", "tpot", "e2e"
  TimeNs target_ns = 0;
  double percentile = 99.0;
  bool active() const { return target_ns > 0; }
  std::string name() const;  // "ttft_p99", "tpot_p99.9": the SLO's name in verdicts and reports
};
// The three targets of `slo` in the order ttft, tpot, e2e (inactive ones included).
std::array<LatencyTarget, 3> latency_targets(const SloOptions& slo);

// "ttft_p99", "tpot_p99.9", "e2e_p50".
std::string latency_slo_name(const std::string& metric, double percentile);

// Throws kvsim::Error naming the flag (--slo-ttft, --slo-tpot, --slo-e2e, --slo-percentile,
// --slo-attainment) for a negative target, a percentile outside (0, 100] or an attainment outside
// [0, 1].
void validate_slo(const SloOptions& slo);

// True when one finished request meets every active per-request target: TTFT and E2E within
// theirs, and (with more than one output token) its TPOT, (e2e − ttft) / (output_tokens − 1),
// within its target, compared exactly as e2e − ttft <= tpot target × (output_tokens − 1).
bool request_meets(const SloOptions& slo, TimeNs ttft_ns, TimeNs e2e_ns,
                   std::int64_t output_tokens);

// What a run measured, as check_slos needs it.
struct SloObservation {
  // The q-th percentile (q in (0, 100]) of a latency, in nanoseconds; called for active targets.
  std::function<double(SloMetric metric, double q)> latency_ns;
  double attainment = 1.0;  // fraction of arrived requests within every per-request target
};
// A run's observation: the metrics' latency histograms and slo_attainment(m).
SloObservation observe(const Metrics& m);
// Requests within every per-request target over those that arrived (0 when none arrived).
double slo_attainment(const Metrics& m);

struct SloVerdict {
  bool met = true;  // every active target holds (<=, inclusive); true without targets
  // When !met: the most violated SLO (largest observed / target ratio; ties in the order ttft,
  // tpot, e2e, attainment), e.g. "ttft_p99" or "attainment"; empty when met.
  std::string limiting;
};
SloVerdict check_slos(const SloOptions& slo, const SloObservation& observed);

}  // namespace kvsim::sim
