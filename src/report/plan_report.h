#pragma once
// The kvsim.plan/v1 document of `kvsim plan` (JSON, table, CSV), and the per-deployment record
// the sweep runner stores (one JSON line per deployment, see plan/sweep_runner.h).
//
// JSON (stable names; fields may be added, never renamed):
//   schema, kvsim_version, command,
//   settings {source, target_rate_rps (null = none), search {start_rate_rps (null = each
//             workload's own rate), growth, tolerance, min_rate_rps, max_rate_rps, max_probes},
//             gpu_price_per_hour {gpu: USD} (overrides), axes [paths that vary]}
//   deployments [{index, axes {path: value (typed: number, boolean or string)}, label, inputs
//   {model, hardware, serving, workload,
//             seed}, slo {ttft, tpot, e2e: {target_s, percentile} | null, attainment},
//             status ("found" | "capped" | "none_feasible" | "does_not_fit" |
//             "not_modelled"), error (null),
//             base_rate_rps, num_requests, max_rate_rps, limiting_slo (null when capped or does
//             not fit),
//             fail_rate_rps, replicas, gpus_per_replica, gpu_price_per_hour, replicas_needed,
//             gpus, cost_per_hour, capacity_rps, requests_per_gpu, throughput_per_gpu (output
//             tokens/s per GPU), per_user_tokens_per_s (1 / mean TPOT), attainment,
//             observed {ttft_p99: s, ...} (the constrained latencies at max_rate_rps),
//             metrics (the simulate report's summary at max_rate_rps, or null), memory,
//             above {rate_rps, limiting, attainment, observed, saturation} (the lowest failing
//             probe, or null),
//             arrival_span_s ((num_requests − 1) / max_rate_rps), steady_state_ratio
//             (arrival_span_s / mean E2E at the max rate: below 10 the table warns that the
//             workload may be too short to show sustained overload),
//             search {converged, probes [{rate_rps, ok, limiting}]}}]   (in grid order)
//   ranking {by_cost [index...], by_throughput_per_gpu [index...]}   (best first)
//   pareto_front [index...]   (throughput per GPU vs per-user tokens/s)
//   best {index, label, axes, max_rate_rps, replicas_needed, gpus, cost_per_hour} | null
// Nothing in it depends on threads, ranks, resume or timing: same inputs, same bytes.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/scenario_grid.h"
#include "plan/load_search.h"
#include "plan/plan_record.h"
#include "plan/planner.h"
#include "report/json.h"
#include "sim/slo.h"

namespace kvsim::report {

// The runner's record of one deployment (plan::make_record) with the simulate report's summary
// and memory blocks at the max rate filled in.
plan::DeploymentRecord deployment_record(const plan::DeploymentPlan& plan,
                                         const sim::SloOptions& slo);

// What the planner knew about one grid point before simulating it.
struct PlanPoint {
  std::vector<config::AxisValue> axes;
  std::string label;  // e.g. "llama-3-70b on 4 × h100-sxm (TP 4)"
  Json inputs;        // {model, hardware, serving, workload, seed}
  sim::SloOptions slo;
  std::int64_t replicas = 1;
  std::int64_t gpus_per_replica = 1;
  double gpu_price_per_hour = 0.0;  // after overrides
};

struct PlanReportSettings {
  std::string source;  // the sweep file, or ""
  std::optional<double> target_rate_rps;
  plan::SearchOptions search;  // start_rate_rps <= 0: each workload's own rate
  std::vector<std::pair<std::string, double>> gpu_price_overrides;
};

// The whole document from the points and their records (same order, same length): the planning
// itself is plan::plan_outcome's; this renders it.
Json plan_json(const PlanReportSettings& settings, const std::vector<PlanPoint>& points,
               const std::vector<plan::DeploymentRecord>& records);
// For people: settings line, the deployments best first (by cost), the Pareto front, the best.
std::string plan_table(const Json& plan);
// One row per deployment in grid order, with its rank; full-precision numbers.
std::string plan_csv(const Json& plan);

}  // namespace kvsim::report
