#pragma once
// `kvsim calibrate --from-run`: fits the framework overhead of an engine step — per step, per
// scheduled sequence, per prompt token (model::CostProfile's step_overhead_s, seq_overhead_s,
// prefill_token_overhead_s) — and the front end's latency per request (frontend_latency_s) on
// top of the kernel cost model, so that replaying real runs through the deployment gives the
// per-request TTFT and TPOT the real engine measured.
//
// Mechanism (Gauss-Newton with non-negative steps, a fixed number of rounds):
//   1. Simulate every run with the current terms θ. An observer (sim::SimObserver::on_step)
//      records each engine step's features f = (1, scheduled sequences, prompt tokens, 0). A
//      request's TTFT spans the front end (feature 1 for the fourth term) and the steps from the
//      one running when it joined its engine (counted for the part after that) to the one
//      producing its first token; its decode time spans the steps after that to its last token.
//      To first order, lengthening every step by f · Δθ and the front end by Δθ_4 lengthens the
//      TTFT and decode time by S_ttft · Δθ and S_decode · Δθ.
//   2. Rows, relative to the real value: TPOT per request, S_decode / (output − 1) · θ' ≈
//      real − sim + that · θ; TTFT per group of 8 requests of similar prompt length (a single
//      TTFT jumps by a whole step when a step boundary passes its arrival; the group mean does
//      not), weighted like 8 rows; E2E only for requests that record neither. Every row is
//      divided by its real value: the fit minimises relative errors.
//   3. θ' = cost::fit_overheads (exact NNLS, θ' ≥ 0; a term the runs cannot tell apart keeps its
//      prior value and is reported undetermined). Simulate θ'. When it is worse than the best so
//      far (the batch grows with the overhead, which first-order rows do not see), try halfway
//      back to the best instead. Stop when the terms stop moving or after `rounds` simulations;
//      the result is the simulated θ with the smallest root mean square relative error.
// A run identifies the per-step and per-sequence terms apart only when its batch sizes vary
// (light load and bursts), the per-token term when its prompt lengths do, and the front end's
// latency when it has TTFTs and TPOTs (it moves TTFT alone; the step terms move both).
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
