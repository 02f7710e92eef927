#pragma once
// Small integer helpers shared across layers.

#include <type_traits>

namespace kvsim {

// ⌈a / b⌉ for a >= 0, b > 0 (blocks for a token count, shards of a dimension).
template <class T>
constexpr T ceil_div(T a, T b) {
  static_assert(std::is_integral_v<T>);
  return (a + b - 1) / b;
}

// a rounded up to a multiple of b, for a >= 0, b > 0 (a kernel's padded tensor dimension).
template <class T>
constexpr T round_up(T a, T b) {
  return ceil_div(a, b) * b;
}

}  // namespace kvsim
