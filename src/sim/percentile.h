#pragma once
// Streaming percentiles of non-negative integer samples (latencies in ns) in bounded memory.
//
// Method: the first kExactSamples samples are kept as they are, so small runs report exact
// order statistics. Past that, every sample goes into a log-bucketed histogram (HDR style):
// values below 128 have a bucket each; above, each power of two is split into 128 equal
// buckets, so a bucket spans at most 1/128 of its lower bound. A percentile is then the
// midpoint of the bucket holding the sample of that rank, clamped to the exact [min, max]:
// relative error at most 1/256 (0.39%). count, mean (exact integer sum), min and max are
// always exact. Memory: at most 8 KiB of samples + 57 KiB of histogram, independent of the
// number of samples.
//
// Percentile definition (both modes): nearest rank, the ceil(q/100 × n)-th smallest sample
// (q = 0 gives the minimum).

#include <cstdint>
#include <vector>

#include "common/int128.h"

namespace kvsim::sim {

class LatencyHistogram {
 public:
  static constexpr std::size_t kExactSamples = 1024;
  static constexpr int kSubBucketBits = 7;
  // Bound on |reported - true| / true for percentiles in histogram mode.
  static constexpr double kMaxRelativeError = 1.0 / 256.0;

  // Adds one sample; negative values are a bug (asserted).
  void add(std::int64_t value);
  // Adds `n` samples of the same value (n >= 0): the same state as n calls of add(value).
  void add(std::int64_t value, std::int64_t n);
  // Adds every sample of `other` (same method, same bounds).
  void merge(const LatencyHistogram& other);

  std::int64_t count() const { return count_; }
  bool exact() const { return histogram_.empty(); }
  // 0 when empty.
  std::int64_t min() const { return count_ ? min_ : 0; }
  std::int64_t max() const { return count_ ? max_ : 0; }
  double mean() const;
  // Nearest-rank percentile, q in [0, 100]; 0 when empty. Exact while exact() is true.
  double percentile(double q) const;

 private:
  static std::size_t bucket_of(std::int64_t value);
  static double bucket_midpoint(std::size_t bucket);
  void spill();  // moves the exact samples into the histogram

  std::int64_t count_ = 0;
  UInt128 sum_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  mutable std::vector<std::int64_t> samples_;  // exact mode; sorted lazily by percentile()
  mutable bool sorted_ = true;
  std::vector<std::uint64_t> histogram_;  // histogram mode
};

}  // namespace kvsim::sim
