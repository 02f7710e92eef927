#pragma once
// From each deployment's maximum sustainable load to the planner's answers: replicas, GPUs and
// cost for a target rate; rankings by cost and by throughput per GPU; and the Pareto front of
// throughput per GPU against the token rate each user sees.
//
// A deployment simulated with R replicas that sustains M requests/s gives the linear estimate
// ceil(T·R/M) replicas for a target T. That estimate is only a starting point: replicas behind a
// router do not scale linearly (pooling lets R replicas sustain more than R times one), so an
// estimate below R can fail. The planner checks every estimate by simulating it at T
// (plan::size_for_target) and sizes with the count that held (verified_replicas).

#include <cstdint>
#include <optional>
#include <vector>

namespace kvsim::plan {

// One deployment's search outcome, as sizing needs it.
struct CapacityPoint {
  bool feasible = false;               // some rate held (max_rate_rps > 0)
  double max_rate_rps = 0.0;           // of the deployment as simulated, all replicas together
  std::int64_t replicas = 1;           // replicas in the simulated deployment (>= 1)
  std::int64_t gpus_per_replica = 1;   // tensor-parallel size (>= 1)
  double gpu_cost_per_hour = 0.0;      // price of one GPU per hour; 0 = unknown
  double output_tokens_per_s = 0.0;    // generated tokens/s at max_rate_rps
  double per_user_tokens_per_s = 0.0;  // 1 / mean TPOT at max_rate_rps (tokens/s one user sees)
  // Replicas that held the target when simulated at it (0: none up to the planner's limit);
  // absent = not checked, the linear estimate is used.
  std::optional<std::int64_t> verified_replicas;
};

// The linear estimate ceil(T·R/M) (at least 1) for a feasible point; T > 0 (asserted).
std::int64_t linear_replicas_estimate(const CapacityPoint& point, double target_rate_rps);

struct Sizing {
  // Replicas to serve the target (without a target: the simulated replicas); 0 when infeasible
  // or when no replica count checked at the target held.
  std::int64_t replicas_needed = 0;
  std::int64_t gpus = 0;            // replicas_needed × gpus_per_replica
  double cost_per_hour = 0.0;       // gpus × gpu_cost_per_hour
  double capacity_rps = 0.0;        // what replicas_needed sustain: replicas_needed × M / R
  double throughput_per_gpu = 0.0;  // output tokens/s per GPU at max load (simulated deployment)
  double requests_per_gpu = 0.0;    // max_rate_rps / (R × gpus_per_replica)
};

// Sizes one deployment; `target_rate_rps` must be > 0 when given (asserted). With a target the
// replica count is `point.verified_replicas` when present, else the linear estimate.
Sizing size_deployment(const CapacityPoint& point, std::optional<double> target_rate_rps);

// Indices best first: feasible before infeasible; then, with a target, lowest cost_per_hour
// (ties: fewer GPUs); without one, lowest cost per request/s (cost of the simulated deployment /
// max rate; ties: more requests per GPU); then more throughput per GPU; then input order.
std::vector<std::size_t> rank_by_cost(const std::vector<CapacityPoint>& points,
                                      const std::vector<Sizing>& sizings, bool have_target);

// Indices best first: feasible before infeasible, then most output tokens/s per GPU, then input
// order.
std::vector<std::size_t> rank_by_throughput_per_gpu(const std::vector<CapacityPoint>& points,
                                                    const std::vector<Sizing>& sizings);

// The feasible points that no other feasible point beats on both axes (per-user tokens/s and
// output tokens/s per GPU, both higher = better; equal on both: the first in input order is kept),
// sorted by per-user tokens/s ascending (so throughput per GPU descends along the front).
std::vector<std::size_t> pareto_front(const std::vector<CapacityPoint>& points,
                                      const std::vector<Sizing>& sizings);

}  // namespace kvsim::plan
