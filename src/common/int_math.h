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

}  // namespace kvsim
