#pragma once
// Overflow-checked unsigned arithmetic for sizes computed from user input (model dimensions,
// batch × context). An overflow is bad input, not a bug: it throws kvsim::Error saying what
// overflowed, and callers that know the file relocate it (config::validate_model).

#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/error.h"

namespace kvsim {

[[noreturn]] inline void throw_overflow(const char* what) {
  throw Error(std::string(what) + " exceeds 2^64 (the numbers are too large)");
}

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what);
  return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(what);
  return r;
}

// The product of `factors`, checked at every step.
inline std::uint64_t checked_product(std::initializer_list<std::uint64_t> factors,
                                     const char* what) {
  std::uint64_t r = 1;
  for (std::uint64_t f : factors) r = checked_mul(r, f, what);
  return r;
}

}  // namespace kvsim
