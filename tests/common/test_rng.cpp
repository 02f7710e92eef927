#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "common/rng.h"

using kvsim::Rng;

TEST_CASE("the same seed gives the same stream, another seed another", "[common][rng]") {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    differs = differs || (x != c.next_u64());
  }
  CHECK(differs);
}

TEST_CASE("the stream is pinned (platform-independent output)", "[common][rng]") {
  // Pinned values: if these change, every seeded workload in the project changes.
  // xoshiro256** seeded by SplitMix64(0): the reference implementation's first two outputs.
  Rng r(0);
  CHECK(r.next_u64() == 0x99ec5f36cb75f2b4ULL);
  CHECK(r.next_u64() == 0xbf6e1f784956452aULL);
  CHECK(kvsim::mix64(0) == 0ULL);
  CHECK(kvsim::mix64(1) == 0x5692161d100b05e5ULL);
}

TEST_CASE("uniform_int covers its inclusive range without bias", "[common][rng]") {
  Rng r(7);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.uniform_int(1, 6);
    REQUIRE(v >= 1);
    REQUIRE(v <= 6);
    ++counts[static_cast<std::size_t>(v - 1)];
  }
  for (int c : counts) CHECK(std::abs(c - n / 6) < 400);  // ~4.4 sigma
}

TEST_CASE("distribution moments land within statistical tolerance", "[common][rng]") {
  Rng r(2024);
  const int n = 200000;
  double sum_e = 0, sum_n = 0, sum_n2 = 0, sum_g = 0, sum_g2 = 0;
  for (int i = 0; i < n; ++i) {
    sum_e += r.exponential(4.0);
    const double z = r.normal();
    sum_n += z;
    sum_n2 += z * z;
    const double g = r.gamma(0.25, 8.0);  // mean 2, variance 16
    sum_g += g;
    sum_g2 += g * g;
  }
  CHECK(sum_e / n == Approx(0.25).margin(0.004));
  CHECK(sum_n / n == Approx(0.0).margin(0.01));
  CHECK(sum_n2 / n == Approx(1.0).margin(0.015));
  const double gm = sum_g / n;
  CHECK(gm == Approx(2.0).margin(0.05));
  CHECK(sum_g2 / n - gm * gm == Approx(16.0).epsilon(0.06));
}

TEST_CASE("uniform01 stays in [0,1) and uniform_open0 in (0,1]", "[common][rng]") {
  Rng r(1);
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform01();
    CHECK((u >= 0.0 && u < 1.0));
    const double v = r.uniform_open0();
    CHECK((v > 0.0 && v <= 1.0));
  }
}
