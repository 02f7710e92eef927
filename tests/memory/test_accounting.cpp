// The time-weighted accumulator: exact byte·ns integrals, means that sum to 1, the peak.

#include <catch2/catch.hpp>

#include "common/rng.h"
#include "memory/accounting.h"

namespace kvsim::memory {
namespace {

ByteAccounting state(Bytes t, Bytes r, Bytes i, Bytes e, Bytes f) {
  return ByteAccounting{t + r + i + e + f, t, r, i, e, f};
}

TEST_CASE("time-weighted means of piecewise-constant states", "[memory][accounting]") {
  TimeWeightedAccounting acc;
  CHECK(acc.fractions().free == 1.0);
  acc.advance(1000, state(10, 20, 0, 0, 70));  // holds for 100 ns
  CHECK(acc.elapsed() == 0);
  CHECK(acc.fractions().token_states == 0.1);  // instantaneous before time passes
  acc.advance(1100, state(50, 0, 10, 40, 0));  // holds for 300 ns
  acc.advance(1400, state(0, 0, 0, 0, 100));
  CHECK(acc.elapsed() == 400);
  CHECK(acc.token_states_integral() == 10 * 100 + 50 * 300);
  CHECK(acc.reservation_integral() == 20 * 100);
  CHECK(acc.internal_fragmentation_integral() == 10 * 300);
  CHECK(acc.external_fragmentation_integral() == 40 * 300);
  CHECK(acc.free_integral() == 70 * 100);
  const Fractions f = acc.fractions();
  CHECK(f.token_states == 0.4);  // 16,000 / 40,000
  CHECK(f.reservation == 0.05);  // 2,000 / 40,000
  CHECK(f.internal_fragmentation == 0.075);
  CHECK(f.external_fragmentation == 0.3);
  CHECK(f.free == 0.175);
  CHECK(acc.peak_used_bytes() == 60);
}

TEST_CASE("integrals stay exact at a week of nanoseconds and 100 GB", "[memory][accounting]") {
  TimeWeightedAccounting acc;
  const Bytes cap = 100'000'000'000ULL;
  const TimeNs week = 7LL * 24 * 3600 * kNsPerSecond;
  acc.advance(0, state(cap / 3, cap / 3, 0, 0, cap - 2 * (cap / 3)));
  acc.advance(week, state(0, 0, 0, 0, cap));
  const auto whole = static_cast<TimeWeightedAccounting::Int128>(cap) * week;
  CHECK(acc.token_states_integral() + acc.reservation_integral() +
            acc.internal_fragmentation_integral() + acc.external_fragmentation_integral() +
            acc.free_integral() ==
        whole);
}

TEST_CASE("random states: integrals sum exactly, fractions sum to 1", "[memory][accounting]") {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    TimeWeightedAccounting acc;
    const Bytes cap = static_cast<Bytes>(rng.uniform_int(1, 1'000'000'000'000LL));
    TimeNs now = rng.uniform_int(0, 1'000'000);
    Bytes peak = 0;
    for (int i = 0; i < 200; ++i) {
      Bytes left = cap;
      Bytes parts[4];
      for (Bytes& p : parts) {
        p = static_cast<Bytes>(rng.uniform_int(0, static_cast<std::int64_t>(left)));
        left -= p;
      }
      const ByteAccounting s = state(parts[0], parts[1], parts[2], parts[3], left);
      peak = std::max(peak, s.used());
      acc.advance(now, s);
      now += rng.uniform_int(0, 10'000'000'000LL);
    }
    const auto whole = static_cast<TimeWeightedAccounting::Int128>(cap) * acc.elapsed();
    REQUIRE(acc.token_states_integral() + acc.reservation_integral() +
                acc.internal_fragmentation_integral() + acc.external_fragmentation_integral() +
                acc.free_integral() ==
            whole);
    const Fractions f = acc.fractions();
    CHECK(f.token_states + f.reservation + f.internal_fragmentation + f.external_fragmentation +
              f.free ==
          Approx(1.0).margin(1e-15));
    CHECK(acc.peak_used_bytes() == peak);
  }
}

}  // namespace
}  // namespace kvsim::memory
