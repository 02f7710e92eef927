#pragma once
// The planner's evaluator: each probe of the load search is a full simulation of the deployment
// with the workload's arrivals scaled to the probed rate, judged against the SLOs.
//
// Rate: a workload's own mean arrival rate is (n − 1) / (last arrival − first arrival) over its n
// requests (its "base rate"). Probing rate R runs the same requests with every gap divided by
// R / base (trace::TransformOptions::rate_scale), so probes differ only in load: lengths, order and
// relative timing are common to all of them (common random numbers), which keeps the verdict
// close to monotone in R.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/load_search.h"
#include "sim/deployment.h"
#include "sim/options.h"
#include "sim/simulator.h"
#include "sim/slo.h"
#include "trace/workload.h"

namespace kvsim::plan {

// One deployment, ready to simulate at any rate.
struct PlanTarget {
  std::shared_ptr<const sim::BuiltDeployment> deployment;
  sim::SimOptions options;  // replicas, scheduler, ... (slo is set from PlanSettings)
  // At its own rate (the base of the scaling); built once, reopened by every probe.
  std::shared_ptr<const trace::Workload> workload;
  // Disaggregated serving (options.num_prefill_replicas > 0): the prefill instances' deployment
  // and pool (its num_replicas is options'); the unit the planner replicates is then the whole
  // group of options.num_prefill_replicas prefill and options.num_replicas decode instances.
  std::shared_ptr<const sim::BuiltDeployment> prefill;
  sim::SimSetup::PrefillPool prefill_pool;
};

struct PlanSettings {
  sim::SloOptions slo;
  SearchOptions search;  // start_rate_rps <= 0 here: start at the workload's base rate
};

// One simulation at one rate.
struct Probe {
  double rate_rps = 0.0;
  double rate_scale = 1.0;  // applied on top of the workload's own rate_scale
  Verdict verdict;
  double attainment = 0.0;  // fraction of requests within every per-request target
  sim::SimResult result;
};

struct DeploymentPlan {
  double base_rate_rps = 0.0;
  std::int64_t num_requests = 0;  // in the workload (every probe runs all of them)
  SearchResult search;
  std::optional<Probe> at_max;  // the probe at search.max_rate_rps (absent: nothing held)
  std::optional<Probe> above;   // the lowest failing probe (absent: capped)
};

struct WorkloadShape {
  std::int64_t num_requests = 0;
  double rate_rps = 0.0;  // the base rate (see above)
};
// Reads the workload once. Throws kvsim::Error (field "workload") when it has fewer than two
// requests or all arrive at once: no rate to scale.
WorkloadShape measure_workload(const trace::Workload& workload);
WorkloadShape measure_workload(const trace::WorkloadOptions& workload);

// Simulates `target` at `rate_rps` and judges it: every active latency target at its percentile
// over completed requests, attainment over all requests, and stability (the simulator's
// saturation verdict is "stable" and no request is left unfinished by a time limit).
Probe run_probe(const PlanTarget& target, const sim::SloOptions& slo, double base_rate_rps,
                double rate_rps);

// Sizing for a target rate, checked by simulation. A deployment simulated with R replicas that
// sustains M requests/s gives the linear estimate ceil(T·R/M) replicas for a target T, but
// replicas do not scale linearly: a router pools load over R replicas, so R replicas can sustain
// more than R times what one does, and an estimate below R (extrapolating down) can fail. Each
// sizing is therefore simulated: `estimate` replicas at rate T; while that fails, one more, up to
// sizing_limit(estimate). The answer is the first count that meets every SLO at T (0 when none up
// to the limit does), so a recommended deployment has been simulated at the target and held.
// Never fewer than the estimate: with a fixed number of requests, more replicas see a shorter
// stretch of traffic each, so a check below the estimate would lean optimistic.
struct SizingCheck {
  std::int64_t replicas = 0;
  bool ok = false;
  std::string limiting;  // the first SLO that broke ("" when ok)
};
struct TargetSizing {
  double target_rate_rps = 0.0;
  std::int64_t estimate = 0;         // the linear estimate the checks started from (>= 1)
  std::int64_t replicas_needed = 0;  // the first count that held; 0 = none up to the limit
  std::vector<SizingCheck> checks;   // in the order run
};
// The most replicas size_for_target tries for a linear estimate of `estimate`.
std::int64_t sizing_limit(std::int64_t estimate);
// Throws what run_probe throws. `estimate` >= 1 and `target_rate_rps` > 0 (asserted).
TargetSizing size_for_target(const PlanTarget& target, const sim::SloOptions& slo,
                             double base_rate_rps, double target_rate_rps, std::int64_t estimate);

// The load search with run_probe as the evaluator. Throws what run_probe throws (bad workload
// rows) and kvsim::Error for bad search options.
DeploymentPlan plan_deployment(const PlanTarget& target, const PlanSettings& settings);

}  // namespace kvsim::plan
