#pragma once
// 128-bit integers (a GCC/Clang extension) for exact sums and products of 64-bit values: byte·ns
// integrals, length sums over billions of tokens, 64×64-bit multiply-high.

namespace kvsim {

// `__extension__` keeps -Wpedantic quiet; it applies to a typedef, not to an alias declaration.
__extension__ typedef __int128 Int128;            // NOLINT(modernize-use-using)
__extension__ typedef unsigned __int128 UInt128;  // NOLINT(modernize-use-using)

}  // namespace kvsim
