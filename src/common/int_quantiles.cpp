#include "common/int_quantiles.h"

#include <algorithm>
#include <cmath>

#include "common/assert.h"
#include "common/int128.h"

namespace kvsim {

void IntQuantiles::add(std::int64_t value, std::int64_t times) {
  KVSIM_ASSERT(times >= 1, "IntQuantiles::add: times must be >= 1");
  if (value >= 0 && value < kDenseLimit) {
    const auto index = static_cast<std::size_t>(value);
    if (index >= dense_.size()) {
      std::size_t size = std::max<std::size_t>(64, dense_.size());
      while (size <= index) size *= 2;
      dense_.resize(std::min<std::size_t>(size, kDenseLimit), 0);
    }
    if (dense_[index] == 0) ++dense_distinct_;
    dense_[index] += times;
  } else {
    sparse_[value] += times;
  }
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += times;
  sum_ += static_cast<Int128>(value) * times;
}

void IntQuantiles::merge(const IntQuantiles& other) {
  other.for_each_ascending([this](std::int64_t value, std::int64_t times) {
    add(value, times);
    return true;
  });
}

double IntQuantiles::sum() const {
  return static_cast<double>(sum_);
}

double IntQuantiles::mean() const {
  KVSIM_ASSERT(count_ > 0, "IntQuantiles::mean of no samples");
  // Sums within 2^53 are exact doubles, so one division is correctly rounded. Beyond, the
  // integer part is exact and the remainder's share is added.
  constexpr Int128 kExact = Int128{1} << 53;
  if (sum_ > -kExact && sum_ < kExact) {
    return static_cast<double>(sum_) / static_cast<double>(count_);
  }
  const Int128 whole = sum_ / count_;
  const Int128 rest = sum_ % count_;
  return static_cast<double>(whole) + static_cast<double>(rest) / static_cast<double>(count_);
}

std::size_t IntQuantiles::num_distinct() const {
  return static_cast<std::size_t>(dense_distinct_) + sparse_.size();
}

template <class F>
void IntQuantiles::for_each_ascending(F&& f) const {
  auto it = sparse_.begin();
  for (; it != sparse_.end() && it->first < 0; ++it) {
    if (!f(it->first, it->second)) return;
  }
  for (std::size_t v = 0; v < dense_.size(); ++v) {
    if (dense_[v] != 0 && !f(static_cast<std::int64_t>(v), dense_[v])) return;
  }
  for (; it != sparse_.end(); ++it) {
    if (!f(it->first, it->second)) return;
  }
}

double IntQuantiles::quantile(double q) const {
  return quantiles({q}).front();
}

std::vector<double> IntQuantiles::quantiles(const std::vector<double>& qs) const {
  KVSIM_ASSERT(count_ > 0, "IntQuantiles::quantiles of no samples");
  // Each q needs the samples at ranks ⌊h⌋ and min(⌊h⌋ + 1, n − 1) (0-based) of the sorted
  // samples; collect those ranks, then find them all in one ascending pass over the runs.
  std::vector<std::int64_t> lo_rank(qs.size());
  std::vector<double> frac(qs.size());
  std::vector<std::int64_t> ranks;
  ranks.reserve(2 * qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    KVSIM_ASSERT(qs[i] >= 0.0 && qs[i] <= 1.0, "IntQuantiles: q must be in [0, 1]");
    const double h = static_cast<double>(count_ - 1) * qs[i];
    const double lo = std::floor(h);
    lo_rank[i] = std::min(static_cast<std::int64_t>(lo), count_ - 1);
    frac[i] = h - lo;
    ranks.push_back(lo_rank[i]);
    ranks.push_back(std::min(lo_rank[i] + 1, count_ - 1));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());

  std::vector<std::int64_t> rank_value(ranks.size(), 0);
  std::size_t next = 0;
  std::int64_t seen = 0;
  for_each_ascending([&](std::int64_t value, std::int64_t times) {
    seen += times;  // this run holds ranks [seen - times, seen)
    while (next < ranks.size() && ranks[next] < seen) rank_value[next++] = value;
    return next < ranks.size();
  });
  KVSIM_ASSERT(next == ranks.size(), "IntQuantiles: counts out of step");

  const auto value_at = [&](std::int64_t rank) {
    const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
    return rank_value[static_cast<std::size_t>(it - ranks.begin())];
  };
  std::vector<double> out(qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const std::int64_t lo = value_at(lo_rank[i]);
    const std::int64_t hi = value_at(std::min(lo_rank[i] + 1, count_ - 1));
    out[i] = static_cast<double>(lo) + frac[i] * static_cast<double>(hi - lo);
  }
  return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> IntQuantiles::histogram() const {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  out.reserve(num_distinct());
  for_each_ascending([&](std::int64_t value, std::int64_t times) {
    out.emplace_back(value, times);
    return true;
  });
  return out;
}

}  // namespace kvsim
