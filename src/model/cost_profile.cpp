#include "model/cost_profile.h"

#include <algorithm>

namespace kvsim::model {

double EfficiencyCurve::at(double x) const {
  if (knots_x.empty()) return value;
  if (x <= knots_x.front()) return knots_y.front();
  if (x >= knots_x.back()) return knots_y.back();
  const auto it = std::upper_bound(knots_x.begin(), knots_x.end(), x);
  const std::size_t hi = static_cast<std::size_t>(it - knots_x.begin());
  const std::size_t lo = hi - 1;
  const double t = (x - knots_x[lo]) / (knots_x[hi] - knots_x[lo]);
  return knots_y[lo] + t * (knots_y[hi] - knots_y[lo]);
}

}  // namespace kvsim::model
