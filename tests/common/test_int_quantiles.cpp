#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "common/int_quantiles.h"
#include "common/rng.h"

using kvsim::IntQuantiles;

namespace {

// numpy.percentile(x, 100 q) with the default "linear" method, from the sorted samples.
double reference_quantile(std::vector<std::int64_t> x, double q) {
  std::sort(x.begin(), x.end());
  const double h = static_cast<double>(x.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, x.size() - 1);
  return static_cast<double>(x[lo]) + (h - std::floor(h)) * static_cast<double>(x[hi] - x[lo]);
}

}  // namespace

TEST_CASE("quantiles interpolate linearly between the two nearest ranks (numpy default)",
          "[common][quantiles]") {
  IntQuantiles q;
  for (const std::int64_t v : {1, 2, 3, 4}) q.add(v);
  // h = 3 q: q=0.5 → 1.5 → 2 + 0.5·(3 − 2)
  CHECK(q.quantile(0.5) == 2.5);
  CHECK(q.quantile(0.0) == 1.0);
  CHECK(q.quantile(1.0) == 4.0);
  CHECK(q.quantile(0.9) == Approx(3.7).epsilon(1e-15));
  CHECK(q.count() == 4);
  CHECK(q.mean() == 2.5);
  CHECK(q.min() == 1);
  CHECK(q.max() == 4);
}

TEST_CASE("one sample: every quantile is that sample", "[common][quantiles]") {
  IntQuantiles q;
  q.add(-7);
  CHECK(q.quantiles({0.0, 0.5, 0.99, 1.0}) == std::vector<double>{-7, -7, -7, -7});
}

TEST_CASE("repeated values, negatives, and values past the dense range match the reference",
          "[common][quantiles]") {
  kvsim::Rng rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    IntQuantiles q;
    std::vector<std::int64_t> xs;
    const int n = 1 + static_cast<int>(rng.uniform_int(0, 400));
    for (int i = 0; i < n; ++i) {
      // A mix: small (dense), huge (sparse), negative (sparse, below the dense range).
      std::int64_t v = 0;
      switch (rng.uniform_int(0, 2)) {
        case 0:
          v = rng.uniform_int(0, 50);
          break;
        case 1:
          v = rng.uniform_int(60000, 10'000'000'000LL);
          break;
        default:
          v = rng.uniform_int(-1000, -1);
          break;
      }
      xs.push_back(v);
      q.add(v);
    }
    const std::vector<double> qs = {0.99, 0.0, 0.5, 0.9, 1.0, 0.25, 0.999};
    const auto got = q.quantiles(qs);
    for (std::size_t i = 0; i < qs.size(); ++i) {
      CHECK(got[i] == Approx(reference_quantile(xs, qs[i])).epsilon(1e-12));
    }
    CHECK(q.count() == n);
    CHECK(q.min() == *std::min_element(xs.begin(), xs.end()));
    CHECK(q.max() == *std::max_element(xs.begin(), xs.end()));
  }
}

TEST_CASE("memory is per distinct value, and merge adds samples", "[common][quantiles]") {
  IntQuantiles a, b;
  for (int i = 0; i < 100000; ++i) a.add(i % 10);
  a.add(1'000'000'000'000LL, 5);
  CHECK(a.num_distinct() == 11);
  CHECK(a.count() == 100005);
  b.add(3, 2);
  b.merge(a);
  CHECK(b.count() == 100007);
  CHECK(b.num_distinct() == 11);
  const auto hist = b.histogram();
  REQUIRE(hist.size() == 11);
  CHECK(hist[3] == std::pair<std::int64_t, std::int64_t>{3, 10002});
  CHECK(hist.back() == std::pair<std::int64_t, std::int64_t>{1'000'000'000'000LL, 5});
}

TEST_CASE("the mean is exact beyond 2^53 sums", "[common][quantiles]") {
  IntQuantiles q;
  q.add(std::int64_t{1} << 62, 4);
  q.add(1);
  // (4·2^62 + 1) / 5 — a sum that overflows int64.
  CHECK(q.mean() == Approx(std::ldexp(4.0, 62) / 5.0).epsilon(1e-15));
}
