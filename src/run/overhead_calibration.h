#pragma once
// `kvsim calibrate --from-run`: fits the framework overhead of an engine step — per step, per
// scheduled sequence, per prompt token (model::CostProfile's step_overhead_s, seq_overhead_s,
// prefill_token_overhead_s) — on top of the kernel cost model, so that replaying real runs
// through the deployment gives the per-request TTFT and TPOT the real engine measured.
//
// Mechanism (Gauss-Newton with non-negative steps, a fixed number of rounds):
//   1. Simulate every run with the current terms θ. An observer (sim::SimObserver::on_step)
//      follows each engine's steps: the end time of a step moves, to first order, by Σ f · Δθ over
//      the steps of its busy period so far (f = (1, scheduled sequences, prompt tokens) of a
//      step; a step that starts later than the previous one ended starts a new period, its
//      start being fixed by an arrival). Each request's first token and last token are step
//      ends, so its TTFT and decode time have known sensitivities S_ttft and S_decode.
//   2. Rows, relative to the real value: TTFT: S_ttft · θ' ≈ real − sim + S_ttft · θ;
//      TPOT: S_decode / (output − 1) the same way; E2E only where the run records neither. Each
//      row is divided by its real value, so the fit minimises relative errors.
//   3. θ' = cost::fit_overheads (exact NNLS, θ' ≥ 0; a term the runs cannot tell apart keeps
//      its prior value and is reported undetermined). Repeat from 1 with θ' until the terms
//      stop moving or `rounds` simulations ran; the result is the simulated θ with the smallest
//      error (root mean square relative error of the rows), so a round that overshoots is never
//      kept.
// Real requests that failed, and simulated ones that did not finish, give no rows. Deterministic:
// the same runs and deployment give the same terms.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cost/overhead_fit.h"
#include "run/resolve.h"
#include "trace/replay_run.h"

namespace kvsim::run {

// One real run and the scenario replaying it: its workload is the run's requests, in order, the
// i-th with id i (what cli's replay trace writes).
struct ReplayCase {
  const ResolvedScenario* scenario = nullptr;
  const trace::RealRun* run = nullptr;
};

// Simulated against real, over the requests both have (percent).
struct LatencyError {
  std::int64_t requests = 0;
  double mean_error_pct = 0;        // (mean sim − mean real) / mean real
  double median_abs_error_pct = 0;  // median over requests of |sim − real| / real
};
struct ReplayErrors {
  LatencyError ttft, tpot, e2e;
};

struct OverheadCalibrationOptions {
  int rounds = 8;  // simulations of every run, at most (the first is with the prior terms)
};

struct OverheadCalibration {
  cost::OverheadTerms prior_s{};   // the GPU profile's terms (simulated first)
  cost::OverheadTerms fitted_s{};  // the best simulated terms
  std::array<bool, cost::kNumOverheadTerms> determined{};  // of the last fit
  ReplayErrors before, after;                              // with prior_s and with fitted_s
  std::int64_t rows = 0;                                   // rows of the last fit
  int simulations = 0;                                     // rounds run (each simulates every case)
  std::vector<double> rms_by_round;  // root mean square relative error of each round's terms
};

// The overhead terms of a cost profile, and a profile with them replaced.
cost::OverheadTerms overhead_terms(const model::CostProfile& profile);
void set_overhead_terms(model::CostProfile& profile, const cost::OverheadTerms& terms);

// Fits the terms over every case jointly, starting from the first case's GPU profile. Throws
// kvsim::Error when a case has no GPU or a cost model other than the roofline, or when no real
// request has a latency to fit.
OverheadCalibration calibrate_overheads(std::span<const ReplayCase> cases,
                                        const OverheadCalibrationOptions& options = {});

}  // namespace kvsim::run
