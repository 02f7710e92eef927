// cost/tables.cpp: measured tables prepared for log-log interpolation.
#include <cmath>

#include <catch2/catch.hpp>

#include "cost/tables.h"

using namespace kvsim;

TEST_CASE("Prepared tables interpolate in log x1 and log(1 + x2)", "[cost]") {
  model::MeasuredTable t;
  t.op = "attn_decode";
  t.dtype = "fp16";
  t.points = {{1, 0, 10e-6}, {4, 0, 40e-6}, {1, 99, 20e-6}, {4, 99, 80e-6}, {16, 99, 320e-6}};
  const cost::PreparedTable p(t);
  CHECK(p.num_points() == 5);
  CHECK(p.lookup(2, 0) == Approx(20e-6));
  CHECK(p.lookup(4, 99) == Approx(80e-6));
  CHECK(p.lookup(8, 99) == Approx(160e-6));
  // Halfway in log(1 + x2) between 0 and 99: log(1 + x2) = log(100) / 2 → x2 = 9.
  CHECK(p.lookup(1, 9) == Approx(std::sqrt(10e-6 * 20e-6)));
  CHECK(p.lookup(8, 9) < 0);  // line x2 = 0 does not reach x1 = 8
  CHECK(p.lookup(1, 100) < 0);
  CHECK(p.lookup(0.5, 0) < 0);
}
