#pragma once
// Synthetic workloads: length samplers, arrival processes and the generator reader. Use
// trace::Workload (trace/workload.h); this header is for tests and workload.cpp.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/int_quantiles.h"
#include "common/rng.h"
#include "trace/request.h"
#include "trace/workload.h"

namespace kvsim::trace {

// An empirical distribution of positive integers, sampled exactly in proportion to the counts.
// Invariants: values_ ascending and distinct; cumulative_ strictly increasing, back() == total.
class EmpiricalHistogram {
 public:
  EmpiricalHistogram() = default;
  explicit EmpiricalHistogram(const IntQuantiles& samples);
  bool empty() const { return values_.empty(); }
  std::int64_t sample(Rng& rng) const;
  std::size_t num_distinct() const { return values_.size(); }

 private:
  std::vector<std::int64_t> values_;
  std::vector<std::int64_t> cumulative_;
};

// What Workload keeps from a lengths_from trace: its length histograms (memory bounded by its
// distinct lengths) and its size and rate, for defaults.
struct EmpiricalLengths {
  EmpiricalHistogram prompt, output;
  std::int64_t requests = 0;
  std::optional<double> rate_rps;  // (requests − 1) / duration, when defined
};

// Draws lengths from one LengthDist. kEmpirical needs the histogram (not owned).
class LengthSampler {
 public:
  LengthSampler(const LengthDist& dist, const EmpiricalHistogram* empirical);
  std::int64_t sample(Rng& rng) const;

 private:
  std::int64_t clamp(double x) const;
  std::int64_t zipf(Rng& rng) const;

  LengthDist dist_;
  const EmpiricalHistogram* empirical_ = nullptr;
  double mu_ = 0.0, sigma_ = 0.0;  // lognormal parameters of the underlying normal
  // Zipf rejection-inversion constants (Hörmann & Derflinger 1996).
  double zipf_h_x1_ = 0.0, zipf_h_n_ = 0.0, zipf_s_ = 0.0;
};

// The generator as a TraceReader. `lengths` must be set when a distribution is kEmpirical;
// `arrivals` when the process is kReplay (its arrival times are used, its lengths ignored).
// Options must have passed validate_workload.
std::unique_ptr<TraceReader> make_synthetic_reader(const SyntheticOptions& options,
                                                   std::shared_ptr<const EmpiricalLengths> lengths,
                                                   std::unique_ptr<TraceReader> arrivals);

// Applies TransformOptions to `source` (see trace/workload.h for the order).
std::unique_ptr<TraceReader> make_transform_reader(std::unique_ptr<TraceReader> source,
                                                   const TransformOptions& transforms);

}  // namespace kvsim::trace
