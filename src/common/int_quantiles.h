#pragma once
// Exact order statistics of integer samples (token counts, ns latencies) with memory
// O(distinct values): a count per distinct value, dense for small non-negative values.

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace kvsim {

// Invariants: count() == Σ counts of all stored values; min()/max() are the extreme values
// added (meaningless while empty); the exact sum is kept in 128 bits.
class IntQuantiles {
 public:
  // Adds `value` `times` times (times >= 1).
  void add(std::int64_t value, std::int64_t times = 1);
  // Adds every sample of `other`.
  void merge(const IntQuantiles& other);

  std::int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::int64_t min() const { return min_; }
  std::int64_t max() const { return max_; }
  // Exact sum rounded to double, and mean (sum / count). Require !empty() for the mean.
  double sum() const;
  double mean() const;
  std::size_t num_distinct() const;

  // The q-quantile (q in [0, 1]) with numpy's default "linear" interpolation: with the sorted
  // samples x[0..n-1], h = (n − 1)·q, result x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). Exact up to
  // that one double multiply-add. Requires !empty().
  double quantile(double q) const;
  // Several quantiles in one pass over the distinct values (any order of `qs`).
  std::vector<double> quantiles(const std::vector<double>& qs) const;

  // (value, count) pairs in ascending value order.
  std::vector<std::pair<std::int64_t, std::int64_t>> histogram() const;

 private:
  // Calls f(value, count) in ascending order; stops when f returns false.
  template <class F>
  void for_each_ascending(F&& f) const;

  static constexpr std::int64_t kDenseLimit = 1 << 16;  // values in [0, kDenseLimit) are dense
  std::vector<std::int64_t> dense_;                     // grows up to kDenseLimit on demand
  std::map<std::int64_t, std::int64_t> sparse_;         // everything else
  std::int64_t count_ = 0;
  std::int64_t min_ = 0, max_ = 0;
  std::int64_t dense_distinct_ = 0;
  __extension__ __int128 sum_ = 0;
};

}  // namespace kvsim
