#pragma once
// Fitting a cost profile to measurements, and scoring a profile against measurements.
//
// The fit, per op class with rows: time = max(F / (peak × η_c(log10 F)), B / (bw × η_m(log10 B)))
// + launch + extra (the same roofline as the step-cost model, cost/ops.h). η_c and η_m are
// piecewise-linear in log10 FLOPs / log10 bytes with up to `max_knots` evenly spaced knots over
// the measured range, fitted by Eigen least squares on the log of each row's implied efficiency
// (so the error is relative in time; a small second-difference penalty keeps the
// curves smooth, η clamped to [0.001, 1]). Rows are assigned to the compute or the memory side by
// the current curves, alternating with the fit until the assignment settles. The launch latency
// is chosen from a grid below the fastest row by the least squared log error. Rows of the same
// exact shape family (cost/ops.h: table_coordinates) with at least two points become measured
// tables (duplicates: their median).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cost/measurements.h"
#include "model/cost_profile.h"
#include "model/hardware_spec.h"

namespace kvsim::cost {

struct FitOptions {
  int max_knots = 6;        // knots per efficiency curve (1 = a constant)
  bool keep_tables = true;  // false: no measured tables, the fitted roofline only
  // With keep_tables, the op classes whose rows are tabled ("moe"); empty: every class.
  std::vector<std::string> table_classes;
  int min_table_points = 2;  // shape families with fewer distinct points are not tabled
  // Per-dtype entries ("gemm.fp8") keep their fitted compute curve but take the 16-bit entry's
  // memory curve and launch latency when the same rows fitted one: a kernel streams its bytes
  // at the memory system's rate whatever their element type, while the tensor cores' share of
  // their peak differs by dtype. Not attention entries (per KV-cache type) nor fused-MoE ones
  // (per weight type): each is its own kernel with its own curves.
  bool share_memory_curve = false;
};

struct ClassFit {
  std::string op;
  std::int64_t rows = 0;
  std::int64_t compute_bound_rows = 0;
  std::int64_t memory_bound_rows = 0;
  double launch_latency_s = 0;
  model::OpClassProfile profile;
  double roofline_mape = 0;  // percent, of the fitted roofline (tables not used) on its own rows
};

struct FitResult {
  // `base` profile with every class that has rows replaced, and the tables (if kept) replaced.
  model::CostProfile profile;
  std::vector<ClassFit> classes;  // in op-class order, only classes with rows
  std::int64_t num_tables = 0;
  std::int64_t num_table_points = 0;
};

// The least-squares non-decreasing curve through `curve`'s knots, in log efficiency
// (pool-adjacent-violators: a falling run of knots takes its geometric mean). fit_profile applies
// it to the prefill-attention memory curve.
model::EfficiencyCurve non_decreasing(model::EfficiencyCurve curve);

// Fits `hardware`'s datasheet roofs to `rows`. Provenance is copied from `hardware.cost` (the
// caller sets it). Throws kvsim::Error when `rows` is empty or a row's roof is missing on
// `hardware` (e.g. a 2-GPU all-reduce with no interconnect bandwidth).
FitResult fit_profile(const std::vector<Measurement>& rows, const model::HardwareSpec& hardware,
                      const FitOptions& options);

struct ValidationStats {
  std::int64_t rows = 0;
  std::int64_t table_rows = 0;  // rows answered by a measured table
  double mape = 0;              // mean absolute percentage error, percent
  double median_ape = 0;        // percent
  double p90_ape = 0;           // percent, nearest-rank 90th percentile
};

// Predicted time of one measured kernel under `hardware` (its cost profile; classes it lacks use
// default_op_class_profile): a measured table point when one covers it, else the roofline.
class Predictor {
 public:
  Predictor(const model::HardwareSpec& hardware, bool use_tables);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;
  double predict(const KernelShape& shape, bool* from_table = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> impl_;
};

// A deterministic split of measurements into rows to fit and rows held out to score the fit:
// a row is held out when the FNV-1a hash of (its file's base name, its line, `seed`), mixed by
// splitmix64's finalizer, as a fraction in [0, 1), is below `fraction`. Rows from one line (a Vidur
// operator row) stay together; the same files, fraction and seed give the same split on any machine
// and path.
struct HoldoutSplit {
  std::vector<Measurement> fit;
  std::vector<Measurement> held_out;
};
HoldoutSplit split_holdout(const std::vector<Measurement>& rows, double fraction,
                           std::uint64_t seed);

// Scores `hardware`'s profile on `rows`, per profile entry (keyed "gemm", "gemm.fp8",
// "attn_decode.fp8", ...: op_class_dtype_key, the op-class name for 16-bit rows).
std::map<std::string, ValidationStats> validate_profile(const model::HardwareSpec& hardware,
                                                        const std::vector<Measurement>& rows);

}  // namespace kvsim::cost
