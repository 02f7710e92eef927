// model/cost_profile.cpp: an efficiency curve is piecewise linear in x, clamped at both ends.
#include <catch2/catch.hpp>

#include "model/cost_profile.h"

using kvsim::model::EfficiencyCurve;

TEST_CASE("efficiency curve: constant without knots, linear between them, clamped outside",
          "[model][cost_profile]") {
  EfficiencyCurve flat;
  CHECK(flat.at(-100) == 1.0);
  flat.value = 0.7;
  CHECK(flat.at(12) == 0.7);

  EfficiencyCurve c;
  c.knots_x = {8, 10, 12};
  c.knots_y = {0.25, 0.75, 0.875};
  CHECK(c.at(0) == 0.25);  // below the first knot
  CHECK(c.at(8) == 0.25);
  CHECK(c.at(9) == 0.5);    // halfway 0.25 → 0.75
  CHECK(c.at(10) == 0.75);  // at an inner knot
  CHECK(c.at(11) == 0.8125);
  CHECK(c.at(12) == 0.875);
  CHECK(c.at(99) == 0.875);  // above the last knot
  CHECK(c.at(8.5) == 0.375);

  EfficiencyCurve one;
  one.knots_x = {5};
  one.knots_y = {0.5};
  CHECK(one.at(4) == 0.5);
  CHECK(one.at(6) == 0.5);
}
