#pragma once
// The planner's typed results: one record per deployment (what the sweep runner stores, one JSON
// line per deployment in the --resume file), and the plan over all of them (sizing for a target,
// rankings, the Pareto front, the best pick). The report (report/plan_report.h) only renders
// these; nothing here reads its own JSON back by string keys except record_from_json.
//
// A record depends only on the deployment, workload, SLOs and search options, not on the target
// rate or prices, so those can change without re-simulating (its `sizing` exists only when the
// run had a target, which is then part of the resume key).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario_grid.h"
#include "plan/planner.h"
#include "plan/sizing.h"
#include "sim/slo.h"

namespace kvsim::plan {

using RecordJson = nlohmann::ordered_json;

// One probe of the search, as the record keeps it.
struct ProbeOutcome {
  double rate_rps = 0.0;
  bool ok = false;
  std::string limiting;  // "" when ok
};

// The probe at the max rate: everything measured there.
struct AtMaxRecord {
  double rate_rps = 0.0;
  double attainment = 0.0;             // fraction of requests within every per-request target
  double per_user_tokens_per_s = 0.0;  // 1 / mean TPOT (0 without TPOT samples)
  RecordJson observed;                 // {"ttft_p99": seconds, ...}: the constrained latencies
  // The simulate report's summary and memory blocks (report::summary_json, memory_json), kept as
  // the report renders them; set with set_metrics, which also reads the two numbers below.
  RecordJson metrics;
  RecordJson memory;
  double output_tokens_per_s = 0.0;  // metrics.output_tokens_per_s
  double mean_e2e_s = 0.0;           // metrics.e2e_s.mean
  void set_metrics(RecordJson summary);
};

// The lowest failing probe: what broke, and by how much.
struct AboveRecord {
  double rate_rps = 0.0;
  std::string limiting;
  double attainment = 0.0;
  RecordJson observed;
  std::string saturation;  // sim::saturation_name
};

struct DeploymentRecord {
  // "found" | "capped" | "none_feasible" | "does_not_fit" | "not_modelled"
  std::string status;
  std::optional<std::string> error;          // why (status "does_not_fit" or "not_modelled")
  std::optional<double> base_rate_rps;       // the workload's own rate (absent: did not run)
  std::optional<std::int64_t> num_requests;  // in the workload (absent: did not run)
  double max_rate_rps = 0.0;
  std::optional<std::string> limiting_slo;  // the first SLO to break above the max rate
  std::optional<double> fail_rate_rps;      // the lowest failing rate (absent: capped)
  bool converged = true;
  std::vector<ProbeOutcome> probes;  // in the order they ran
  std::optional<AtMaxRecord> at_max;
  std::optional<AboveRecord> above;
  std::optional<TargetSizing> sizing;  // checked by simulation at the target rate
};

// The record of a search (metrics and memory of at_max left empty: the report fills them).
DeploymentRecord make_record(const DeploymentPlan& plan, const sim::SloOptions& slo);
// The record of a deployment that cannot run at all (e.g. the model does not fit the GPU).
DeploymentRecord error_record(const std::string& message,
                              const std::string& status = "does_not_fit");

// {"status", "error", "base_rate_rps", "num_requests", "max_rate_rps", "limiting_slo",
// "fail_rate_rps", "converged", "probes" [{rate_rps, ok, limiting}], "at_max" {rate_rps,
// attainment, per_user_tokens_per_s, observed, metrics, memory} | null, "above" {rate_rps,
// limiting, attainment, observed, saturation} | null, ["sizing" {target_rate_rps, estimate,
// replicas_needed, verified, checks [{replicas, ok, limiting}]}]} (absent fields are null).
RecordJson to_json(const DeploymentRecord& record);
RecordJson to_json(const TargetSizing& sizing);
// The inverse of to_json. Throws kvsim::Error (field `what`) when a field is missing or of the
// wrong type (a results file from another version).
DeploymentRecord record_from_json(const RecordJson& j, const std::string& what);

// The latencies `slo` constrains at their percentiles in `probe`: {"ttft_p99": seconds, ...}.
RecordJson observed_json(const Probe& probe, const sim::SloOptions& slo);

// An axis value typed as its setting is (config/settings.h): a number for numeric settings, a
// boolean for switches, a string otherwise; an axis that is no setting is a number or boolean
// when its YAML scalar reads as one, else its text.
RecordJson typed_axis_value(const config::AxisValue& axis);

// What a deployment costs, as the grid point gives it.
struct DeploymentCost {
  std::int64_t replicas = 1;
  std::int64_t gpus_per_replica = 1;
  double gpu_price_per_hour = 0.0;  // after overrides
};

// The plan over every deployment (same order as the records).
struct PlanOutcome {
  std::vector<CapacityPoint> capacity;
  std::vector<Sizing> sizing;
  std::vector<std::size_t> by_cost;                // best first (rank_by_cost)
  std::vector<std::size_t> by_throughput_per_gpu;  // best first
  std::vector<std::size_t> pareto_front;
  std::optional<std::size_t> best;  // by_cost's first, when it meets the SLOs (replicas > 0)
};
PlanOutcome plan_outcome(const std::vector<DeploymentCost>& costs,
                         const std::vector<DeploymentRecord>& records,
                         std::optional<double> target_rate_rps);

// How many request lifetimes the arrivals span at the max rate ((num_requests − 1) / max rate,
// and that over the mean E2E): a short window can overstate what a deployment sustains. Absent
// when the deployment has no max rate.
struct SteadyState {
  double arrival_span_s = 0.0;
  std::optional<double> ratio;  // absent when the mean E2E is 0
};
std::optional<SteadyState> steady_state(const DeploymentRecord& record,
                                        const CapacityPoint& capacity);

}  // namespace kvsim::plan
