#include "plan/sizing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/assert.h"

namespace kvsim::plan {

std::int64_t linear_replicas_estimate(const CapacityPoint& p, double target_rate_rps) {
  KVSIM_ASSERT(p.feasible && p.max_rate_rps > 0 && target_rate_rps > 0,
               "linear_replicas_estimate: needs a feasible point and a positive target");
  const double per_replica = p.max_rate_rps / static_cast<double>(p.replicas);
  // The relative slack keeps an exact multiple (10 / 5 → 2) from rounding up through float
  // error (3.3 / 1.1 = 3.0000000000000004 → 3).
  const double needed = target_rate_rps / per_replica;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(needed * (1.0 - 1e-12))));
}

Sizing size_deployment(const CapacityPoint& p, std::optional<double> target_rate_rps) {
  KVSIM_ASSERT(p.replicas >= 1 && p.gpus_per_replica >= 1, "size_deployment: bad deployment");
  KVSIM_ASSERT(!target_rate_rps || *target_rate_rps > 0, "size_deployment: target must be > 0");
  Sizing s;
  if (!p.feasible || !(p.max_rate_rps > 0)) return s;
  const double per_replica = p.max_rate_rps / static_cast<double>(p.replicas);
  if (target_rate_rps) {
    s.replicas_needed =
        p.verified_replicas ? *p.verified_replicas : linear_replicas_estimate(p, *target_rate_rps);
    if (s.replicas_needed == 0) return s;
  } else {
    s.replicas_needed = p.replicas;
  }
  s.gpus = s.replicas_needed * p.gpus_per_replica;
  s.cost_per_hour = static_cast<double>(s.gpus) * p.gpu_cost_per_hour;
  s.capacity_rps = static_cast<double>(s.replicas_needed) * per_replica;
  const double sim_gpus = static_cast<double>(p.replicas * p.gpus_per_replica);
  s.throughput_per_gpu = p.output_tokens_per_s / sim_gpus;
  s.requests_per_gpu = p.max_rate_rps / sim_gpus;
  return s;
}

std::vector<std::size_t> rank_by_cost(const std::vector<CapacityPoint>& points,
                                      const std::vector<Sizing>& sizings, bool have_target) {
  KVSIM_ASSERT(points.size() == sizings.size(), "rank_by_cost: sizes differ");
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  auto cost_per_rps = [&](std::size_t i) {
    const auto& p = points[i];
    return static_cast<double>(p.replicas * p.gpus_per_replica) * p.gpu_cost_per_hour /
           p.max_rate_rps;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool fa = sizings[a].replicas_needed > 0, fb = sizings[b].replicas_needed > 0;
    if (fa != fb) return fa;
    if (!fa) return false;
    if (have_target) {
      if (sizings[a].cost_per_hour != sizings[b].cost_per_hour) {
        return sizings[a].cost_per_hour < sizings[b].cost_per_hour;
      }
      if (sizings[a].gpus != sizings[b].gpus) return sizings[a].gpus < sizings[b].gpus;
    } else {
      const double ca = cost_per_rps(a), cb = cost_per_rps(b);
      if (ca != cb) return ca < cb;
      if (sizings[a].requests_per_gpu != sizings[b].requests_per_gpu) {
        return sizings[a].requests_per_gpu > sizings[b].requests_per_gpu;
      }
    }
    return sizings[a].throughput_per_gpu > sizings[b].throughput_per_gpu;
  });
  return order;
}

std::vector<std::size_t> rank_by_throughput_per_gpu(const std::vector<CapacityPoint>& points,
                                                    const std::vector<Sizing>& sizings) {
  KVSIM_ASSERT(points.size() == sizings.size(), "rank_by_throughput_per_gpu: sizes differ");
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool fa = sizings[a].replicas_needed > 0, fb = sizings[b].replicas_needed > 0;
    if (fa != fb) return fa;
    if (!fa) return false;
    return sizings[a].throughput_per_gpu > sizings[b].throughput_per_gpu;
  });
  return order;
}

std::vector<std::size_t> pareto_front(const std::vector<CapacityPoint>& points,
                                      const std::vector<Sizing>& sizings) {
  KVSIM_ASSERT(points.size() == sizings.size(), "pareto_front: sizes differ");
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (sizings[i].replicas_needed == 0) continue;
    const double xi = points[i].per_user_tokens_per_s, yi = sizings[i].throughput_per_gpu;
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
      if (j == i || sizings[j].replicas_needed == 0) continue;
      const double xj = points[j].per_user_tokens_per_s, yj = sizings[j].throughput_per_gpu;
      const bool at_least = xj >= xi && yj >= yi;
      const bool better = xj > xi || yj > yi;
      // An exact duplicate is dominated only by an earlier one.
      dominated = at_least && (better || j < i);
    }
    if (!dominated) front.push_back(i);
  }
  std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return points[a].per_user_tokens_per_s < points[b].per_user_tokens_per_s;
  });
  return front;
}

}  // namespace kvsim::plan
