#include <catch2/catch.hpp>

#include "plan/sizing.h"

using namespace kvsim::plan;

namespace {

CapacityPoint point(double max_rate, std::int64_t replicas, std::int64_t tp, double price,
                    double tokens_per_s, double per_user) {
  CapacityPoint p;
  p.feasible = max_rate > 0;
  p.max_rate_rps = max_rate;
  p.replicas = replicas;
  p.gpus_per_replica = tp;
  p.gpu_cost_per_hour = price;
  p.output_tokens_per_s = tokens_per_s;
  p.per_user_tokens_per_s = per_user;
  return p;
}

std::vector<Sizing> size_all(const std::vector<CapacityPoint>& ps, std::optional<double> target) {
  std::vector<Sizing> out;
  for (const auto& p : ps) out.push_back(size_deployment(p, target));
  return out;
}

}  // namespace

TEST_CASE("sizing: replicas, GPUs and cost for a target rate", "[plan][sizing]") {
  // 2 replicas of TP 4 sustain 5 rps → 2.5 rps per replica; 12 rps needs ceil(4.8) = 5 replicas.
  const CapacityPoint p = point(5.0, 2, 4, 3.5, 2000.0, 25.0);
  Sizing s = size_deployment(p, 12.0);
  CHECK(s.replicas_needed == 5);
  CHECK(s.gpus == 20);
  CHECK(s.cost_per_hour == 70.0);
  CHECK(s.capacity_rps == 12.5);
  CHECK(s.throughput_per_gpu == 250.0);  // 2000 tokens/s over 8 simulated GPUs
  CHECK(s.requests_per_gpu == 0.625);
  // An exact multiple does not round up through float error: 3.3 / 1.1 = 3.
  CHECK(size_deployment(point(1.1, 1, 1, 1.0, 1.0, 1.0), 3.3).replicas_needed == 3);
  CHECK(size_deployment(point(5.0, 2, 4, 3.5, 1.0, 1.0), 10.0).replicas_needed == 4);
  CHECK(size_deployment(point(5.0, 2, 4, 3.5, 1.0, 1.0), 10.01).replicas_needed == 5);
  // A tiny target still needs one replica.
  CHECK(size_deployment(p, 0.001).replicas_needed == 1);
  // Without a target: the simulated deployment.
  s = size_deployment(p, std::nullopt);
  CHECK(s.replicas_needed == 2);
  CHECK(s.gpus == 8);
  CHECK(s.cost_per_hour == 28.0);
  CHECK(s.capacity_rps == 5.0);
  // Infeasible: nothing.
  s = size_deployment(point(0.0, 1, 8, 3.5, 0.0, 0.0), 10.0);
  CHECK(s.replicas_needed == 0);
  CHECK(s.gpus == 0);
  CHECK(s.cost_per_hour == 0.0);
}

TEST_CASE("sizing: a replica count checked at the target replaces the linear estimate",
          "[plan][sizing]") {
  // 2 replicas sustain 9 rps: 4.5 per replica, so 4 rps estimates 1 replica. Simulated at
  // 4 rps, one replica failed and two held: the sizing is 2 replicas.
  CapacityPoint p = point(9.0, 2, 1, 3.0, 900.0, 30.0);
  CHECK(linear_replicas_estimate(p, 4.0) == 1);
  CHECK(size_deployment(p, 4.0).replicas_needed == 1);
  p.verified_replicas = 2;
  Sizing s = size_deployment(p, 4.0);
  CHECK(s.replicas_needed == 2);
  CHECK(s.gpus == 2);
  CHECK(s.cost_per_hour == 6.0);
  CHECK(s.capacity_rps == 9.0);
  // No count up to the limit held: not a recommendation, ranked with the infeasible.
  p.verified_replicas = 0;
  s = size_deployment(p, 4.0);
  CHECK(s.replicas_needed == 0);
  CHECK(s.cost_per_hour == 0.0);
  const std::vector<CapacityPoint> ps = {p, point(3.0, 1, 1, 3.0, 300.0, 30.0)};
  CHECK(rank_by_cost(ps, size_all(ps, 4.0), true) == std::vector<std::size_t>{1, 0});
  // Without a target the check does not apply.
  CHECK(size_deployment(p, std::nullopt).replicas_needed == 2);
}

TEST_CASE("sizing: ranking by cost and by throughput per GPU", "[plan][sizing]") {
  const std::vector<CapacityPoint> ps = {
      point(4.0, 1, 8, 2.0, 800, 30),  // 0: 16 $/h per replica, 4 rps/replica
      point(0.0, 1, 2, 1.0, 0, 0),     // 1: infeasible
      point(2.0, 1, 4, 2.0, 600, 20),  // 2: 8 $/h, 2 rps
      point(3.0, 1, 4, 4.0, 900, 40),  // 3: 16 $/h, 3 rps
      point(2.0, 1, 4, 2.0, 700, 20),  // 4: same cost as 2, more tokens/GPU
  };
  // Target 8 rps: 0 → 2 replicas (16 GPUs, 32 $/h); 2 → 4 (16 GPUs, 32 $/h); 3 → 3 (12, 48 $/h);
  // 4 → 4 (16, 32 $/h). Ties at 32 $/h and 16 GPUs break on throughput per GPU: 0 (100), 4
  // (175), 2 (150) → 4, 2, 0.
  const auto with_target = size_all(ps, 8.0);
  CHECK(rank_by_cost(ps, with_target, true) == std::vector<std::size_t>{4, 2, 0, 3, 1});
  // Without a target: cost per rps of the simulated deployment: 0: 16/4 = 4; 2: 8/2 = 4; 3: 16/3;
  // 4: 8/2 = 4. Requests per GPU tie too (0: 4/8, 2 and 4: 2/4), so throughput per GPU decides:
  // 4 (175), 2 (150), 0 (100).
  const auto without = size_all(ps, std::nullopt);
  CHECK(rank_by_cost(ps, without, false) == std::vector<std::size_t>{4, 2, 0, 3, 1});
  CHECK(rank_by_throughput_per_gpu(ps, without) == std::vector<std::size_t>{3, 4, 2, 0, 1});
}

TEST_CASE("sizing: Pareto front of throughput per GPU vs per-user token rate", "[plan][sizing]") {
  const std::vector<CapacityPoint> ps = {
      point(1, 1, 1, 1, 100, 10),   // 0: front (most throughput)
      point(1, 1, 1, 1, 80, 20),    // 1: front
      point(1, 1, 1, 1, 70, 15),    // 2: dominated by 1
      point(1, 1, 1, 1, 30, 50),    // 3: front (most interactive)
      point(0, 1, 1, 1, 500, 500),  // 4: infeasible, never on the front
      point(1, 1, 1, 1, 80, 20),    // 5: duplicate of 1: only the first is kept
      point(1, 1, 1, 1, 100, 5),    // 6: dominated by 0 (same throughput, less per-user)
  };
  const auto s = size_all(ps, std::nullopt);
  CHECK(pareto_front(ps, s) == std::vector<std::size_t>{0, 1, 3});
  CHECK(pareto_front({}, {}).empty());
}
