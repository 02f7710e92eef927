#pragma once
// Deterministic random numbers: the same seed gives the same stream on every platform and
// standard library (std::*_distribution is implementation-defined, so it is never used).
// Generator: xoshiro256** seeded through splitmix64.
//
// Invariants: the state is never all zero; every method advances the stream by a fixed number
// of draws per call except the rejection samplers (gamma, uniform_int), which are still a pure
// function of the state.

#include <cstdint>

namespace kvsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);

  // An independent stream derived from this seed and `stream` (e.g. one per replica or per
  // purpose), so adding draws in one place does not shift another.
  static Rng derive(std::uint64_t seed, std::uint64_t stream);

  std::uint64_t next_u64();
  // Uniform in [0, 1), 53 random bits.
  double uniform01();
  // Uniform in (0, 1]: safe to take the log of.
  double uniform_open0();
  // Uniform integer in [lo, hi] (inclusive), unbiased. Requires lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  // Exponential with the given rate (mean 1/rate). Requires rate > 0.
  double exponential(double rate);
  // Standard normal N(0, 1) (Marsaglia polar method; caches the second value).
  double normal();
  // Gamma(shape k > 0, scale θ > 0): mean kθ, variance kθ² (Marsaglia–Tsang).
  double gamma(double shape, double scale);
  // exp(N(mu, sigma²)).
  double lognormal(double mu, double sigma);

 private:
  std::uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// splitmix64 finaliser: a good 64-bit mix, also used for hashing ids together.
std::uint64_t mix64(std::uint64_t x);
// Order-dependent combination of two 64-bit values (for chained hashes).
std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b);

}  // namespace kvsim
