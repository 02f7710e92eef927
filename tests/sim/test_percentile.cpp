#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "common/rng.h"
#include "sim/percentile.h"

using kvsim::Rng;
using kvsim::sim::LatencyHistogram;

namespace {

double nearest_rank(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1]);
}

}  // namespace

TEST_CASE("Small samples give exact nearest-rank percentiles", "[sim]") {
  LatencyHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.percentile(50) == 0.0);
  CHECK(h.mean() == 0.0);
  for (std::int64_t v : {40, 10, 30, 20}) h.add(v);
  CHECK(h.exact());
  CHECK(h.count() == 4);
  CHECK(h.min() == 10);
  CHECK(h.max() == 40);
  CHECK(h.mean() == 25.0);
  CHECK(h.percentile(0) == 10.0);
  CHECK(h.percentile(25) == 10.0);  // ceil(1.0) = rank 1
  CHECK(h.percentile(50) == 20.0);
  CHECK(h.percentile(50.1) == 30.0);  // ceil(2.004) = rank 3
  CHECK(h.percentile(99) == 40.0);
  CHECK(h.percentile(100) == 40.0);
}

TEST_CASE("Large samples stay within the stated relative error", "[sim]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    LatencyHistogram h;
    std::vector<std::int64_t> all;
    for (int i = 0; i < 20000; ++i) {
      // Latencies from microseconds to minutes, log-uniform.
      const auto v = static_cast<std::int64_t>(std::exp(rng.uniform01() * 25.0) * 1000.0);
      h.add(v);
      all.push_back(v);
    }
    REQUIRE_FALSE(h.exact());
    double sum = 0;
    for (auto v : all) sum += static_cast<double>(v);
    CHECK(h.mean() == Approx(sum / static_cast<double>(all.size())).epsilon(1e-12));
    CHECK(h.max() == *std::max_element(all.begin(), all.end()));
    for (double q : {1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9}) {
      const double truth = nearest_rank(all, q);
      const double got = h.percentile(q);
      CHECK(std::fabs(got - truth) <= truth * LatencyHistogram::kMaxRelativeError);
    }
    CHECK(h.percentile(100) == static_cast<double>(h.max()));
  }
}

TEST_CASE("Values below 256 are exact even in histogram mode", "[sim]") {
  LatencyHistogram h;
  for (int i = 0; i < 3000; ++i) h.add(i % 200);
  REQUIRE_FALSE(h.exact());
  std::vector<std::int64_t> all;
  for (int i = 0; i < 3000; ++i) all.push_back(i % 200);
  for (double q : {5.0, 50.0, 77.0, 99.0}) CHECK(h.percentile(q) == nearest_rank(all, q));
}

TEST_CASE("Merging histograms equals adding every sample to one", "[sim]") {
  Rng rng(9);
  LatencyHistogram a, b, both;
  for (int i = 0; i < 3000; ++i) {
    const auto v = static_cast<std::int64_t>(rng.uniform_int(0, 10'000'000));
    (i % 3 ? a : b).add(v);
    both.add(v);
  }
  a.merge(b);
  CHECK(a.count() == both.count());
  CHECK(a.mean() == both.mean());
  CHECK(a.min() == both.min());
  CHECK(a.max() == both.max());
  for (double q : {50.0, 90.0, 99.0}) CHECK(a.percentile(q) == both.percentile(q));
  LatencyHistogram small1, small2;
  small1.add(5);
  small2.add(3);
  small1.merge(small2);
  CHECK(small1.exact());
  CHECK(small1.percentile(50) == 3.0);
}

TEST_CASE("Adding a value n times at once equals n single adds", "[sim]") {
  // Runs that cross the exact-mode bound (1,024 samples) and runs inside each mode.
  Rng rng(11);
  LatencyHistogram one_by_one;
  LatencyHistogram weighted;
  for (int run = 0; run < 200; ++run) {
    const auto value = static_cast<std::int64_t>(rng.uniform_int(0, 5'000'000));
    const auto n = static_cast<std::int64_t>(rng.uniform_int(0, 300));
    for (std::int64_t i = 0; i < n; ++i) one_by_one.add(value);
    weighted.add(value, n);
    REQUIRE(weighted.count() == one_by_one.count());
    REQUIRE(weighted.exact() == one_by_one.exact());
    REQUIRE(weighted.min() == one_by_one.min());
    REQUIRE(weighted.max() == one_by_one.max());
    REQUIRE(weighted.mean() == one_by_one.mean());
    for (double q : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
      REQUIRE(weighted.percentile(q) == one_by_one.percentile(q));
    }
  }
  REQUIRE_FALSE(weighted.exact());
}
