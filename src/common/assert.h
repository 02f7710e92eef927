#pragma once
// KVSIM_ASSERT is for bugs (broken invariants), not bad input: it prints file:line and the
// failed condition, then aborts, in every build type. Bad input throws kvsim::Error instead.

#include <cstdio>
#include <cstdlib>

#define KVSIM_ASSERT(cond, msg)                                                                   \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "kvsim: internal error: %s:%d: assertion '%s' failed: %s\n", __FILE__, \
                   __LINE__, #cond, msg);                                                         \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)
