#include "sim/percentile.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "common/assert.h"

namespace kvsim::sim {
namespace {

constexpr std::int64_t kSubBuckets = std::int64_t{1} << LatencyHistogram::kSubBucketBits;
// Buckets 0..127 hold values 0..127; then 128 per power of two from 2^7 up to 2^62.
constexpr std::size_t kNumBuckets = static_cast<std::size_t>(kSubBuckets) * (63 - 6);

}  // namespace

std::size_t LatencyHistogram::bucket_of(std::int64_t value) {
  if (value < kSubBuckets) return static_cast<std::size_t>(value);
  const int exponent = 63 - std::countl_zero(static_cast<std::uint64_t>(value));  // >= 7
  const int shift = exponent - kSubBucketBits;
  const std::int64_t sub = (value >> shift) & (kSubBuckets - 1);
  return static_cast<std::size_t>((exponent - kSubBucketBits + 1) * kSubBuckets + sub);
}

double LatencyHistogram::bucket_midpoint(std::size_t bucket) {
  const auto b = static_cast<std::int64_t>(bucket);
  if (b < kSubBuckets) return static_cast<double>(b);
  const std::int64_t exponent = b / kSubBuckets - 1 + kSubBucketBits;
  const std::int64_t sub = b % kSubBuckets;
  const double width = std::ldexp(1.0, static_cast<int>(exponent - kSubBucketBits));
  const double lower = static_cast<double>(kSubBuckets + sub) * width;
  return lower + (width - 1.0) / 2.0;  // middle of the integers [lower, lower + width - 1]
}

void LatencyHistogram::add(std::int64_t value) {
  KVSIM_ASSERT(value >= 0, "latency samples are non-negative");
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += static_cast<std::uint64_t>(value);
  if (histogram_.empty()) {
    if (samples_.size() < kExactSamples) {
      if (!samples_.empty() && value < samples_.back()) sorted_ = false;
      samples_.push_back(value);
      return;
    }
    spill();
  }
  ++histogram_[bucket_of(value)];
}

void LatencyHistogram::add(std::int64_t value, std::int64_t n) {
  KVSIM_ASSERT(value >= 0 && n >= 0, "latency samples and their counts are non-negative");
  if (n == 0) return;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += n;
  sum_ += static_cast<UInt128>(static_cast<std::uint64_t>(value)) * static_cast<std::uint64_t>(n);
  if (histogram_.empty()) {
    // Exact mode takes samples one by one up to its bound, then spills, as add(value) would.
    if (n > 0 && samples_.size() < kExactSamples) {
      if (!samples_.empty() && value < samples_.back()) sorted_ = false;
      const auto room = static_cast<std::int64_t>(kExactSamples - samples_.size());
      const std::int64_t take = std::min(n, room);
      samples_.insert(samples_.end(), static_cast<std::size_t>(take), value);
      n -= take;
    }
    if (n == 0) return;
    spill();
  }
  histogram_[bucket_of(value)] += static_cast<std::uint64_t>(n);
}

void LatencyHistogram::spill() {
  histogram_.assign(kNumBuckets, 0);
  for (std::int64_t v : samples_) ++histogram_[bucket_of(v)];
  samples_.clear();
  samples_.shrink_to_fit();
  sorted_ = true;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (other.histogram_.empty() && histogram_.empty() &&
      samples_.size() + other.samples_.size() <= kExactSamples) {
    for (std::int64_t v : other.samples_) add(v);
    return;
  }
  if (histogram_.empty()) spill();
  for (std::int64_t v : other.samples_) ++histogram_[bucket_of(v)];
  for (std::size_t i = 0; i < other.histogram_.size(); ++i) histogram_[i] += other.histogram_[i];
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

double LatencyHistogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(sum_) / static_cast<double>(count_);
}

double LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return 0.0;
  KVSIM_ASSERT(q >= 0.0 && q <= 100.0, "percentile in [0, 100]");
  auto rank = static_cast<std::int64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::int64_t>(rank, 1, count_);
  if (histogram_.empty()) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return static_cast<double>(samples_[static_cast<std::size_t>(rank - 1)]);
  }
  if (rank == count_) return static_cast<double>(max_);
  if (rank == 1) return static_cast<double>(min_);
  std::int64_t seen = 0;
  for (std::size_t b = 0; b < histogram_.size(); ++b) {
    seen += static_cast<std::int64_t>(histogram_[b]);
    if (seen >= rank) {
      return std::clamp(bucket_midpoint(b), static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace kvsim::sim
