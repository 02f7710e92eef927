#pragma once
// The least-squares half of `kvsim calibrate --from-run`: the framework overhead of an engine
// step (model::CostProfile's step_overhead_s, seq_overhead_s, prefill_token_overhead_s) and the
// front end's per-request latency (frontend_latency_s) fitted to latencies a real engine measured.
// run/overhead_calibration.h simulates the run and builds the rows; this file only solves them.
//
// A row says features · θ ≈ target, with θ = (per step, per scheduled sequence, per prompt token,
// per request) in seconds and the features the counts of steps, sequences, prompt tokens and
// requests whose overhead the row's latency depends on (rows are already divided by their
// weight). The fit keeps θ ≥ 0: an exact non-negative least squares (every subset of the free
// terms is solved unconstrained and the best feasible one kept; four terms, sixteen subsets, in a
// fixed order: deterministic).
//
// A term the rows cannot tell apart from the terms before it (order: step, sequence, prompt
// token, request) is undetermined: its column, scaled to unit length, keeps less than
// kOverheadIdentifiable of its length outside the span of the earlier determined columns (a
// column of zeros: none). An undetermined term keeps its prior value (its share of the targets
// is taken out first) and the caller says so.

#include <array>
#include <span>

namespace kvsim::cost {

inline constexpr int kNumOverheadTerms = 4;
using OverheadTerms = std::array<double, kNumOverheadTerms>;  // seconds, in the order below

// The hardware YAML keys of the terms, in order: step_overhead_us, seq_overhead_us,
// prefill_token_overhead_us, frontend_latency_us (per request, outside the steps).
inline constexpr std::array<const char*, kNumOverheadTerms> kOverheadTermKeys = {
    "step_overhead_us", "seq_overhead_us", "prefill_token_overhead_us", "frontend_latency_us"};

inline constexpr double kOverheadIdentifiable = 0.01;

struct OverheadRow {
  OverheadTerms features{};
  double target = 0;
};

struct OverheadFit {
  OverheadTerms terms_s{};  // fitted, or the prior where undetermined
  std::array<bool, kNumOverheadTerms> determined{};
  double rms = 0;  // root mean square of features · terms_s − target over the rows
};

// Fits the terms to `rows`; `prior` holds the values undetermined terms keep. No rows: every term
// undetermined.
OverheadFit fit_overheads(std::span<const OverheadRow> rows, const OverheadTerms& prior);

// The root mean square of features · terms − target over the rows (0 without rows).
double overhead_rms(std::span<const OverheadRow> rows, const OverheadTerms& terms);

}  // namespace kvsim::cost
