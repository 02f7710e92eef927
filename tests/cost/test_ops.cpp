// cost/ops.cpp: the attention arithmetic every op template uses.
#include <catch2/catch.hpp>

#include "cost/ops.h"

using namespace kvsim;

TEST_CASE("causal pairs and keys read, full and windowed", "[cost]") {
  CHECK(cost::causal_pairs(4, 0, 0) == 1 + 2 + 3 + 4);
  CHECK(cost::causal_pairs(3, 10, 0) == 11 + 12 + 13);
  CHECK(cost::causal_pairs(4, 0, 2) == 1 + 2 + 2 + 2);
  CHECK(cost::causal_pairs(3, 10, 4) == 12);
  CHECK(cost::causal_pairs(4, 1, 3) == 2 + 3 + 3 + 3);
  CHECK(cost::keys_read(4, 10, 0) == 14);
  CHECK(cost::keys_read(1000, 5000, 4096) == 4096 + 999);
  CHECK(cost::keys_read(10, 5, 4096) == 15);
}
