#include "plan/planner.h"

#include <cmath>

#include "common/assert.h"
#include "common/error.h"
#include "common/units.h"
#include "sim/slo.h"

namespace kvsim::plan {
WorkloadShape measure_workload(const trace::WorkloadOptions& workload) {
  return measure_workload(trace::Workload(workload));
}

WorkloadShape measure_workload(const trace::Workload& workload) {
  const auto reader = workload.open();
  trace::RequestSpec r;
  std::int64_t n = 0;
  TimeNs first = 0, last = 0;
  while (reader->next(r)) {
    if (n == 0) first = r.arrival_ns;
    last = r.arrival_ns;
    ++n;
  }
  if (n < 2 || last <= first) {
    throw Error({"", 0, 0, "workload"},
                "the planner scales the workload's arrival rate, so it needs at least two "
                "requests arriving at different times (got " +
                    std::to_string(n) + " request" + (n == 1 ? "" : "s") + ")");
  }
  return {n, static_cast<double>(n - 1) / ns_to_seconds(last - first)};
}

Probe run_probe(const PlanTarget& target, const sim::SloOptions& slo, double base_rate_rps,
                double rate_rps) {
  Probe p;
  p.rate_rps = rate_rps;
  p.rate_scale = rate_rps / base_rate_rps;
  const auto reader = target.workload->open(p.rate_scale);

  sim::SimOptions options = target.options;
  options.slo = slo;
  sim::SimSetup setup = target.deployment->setup(options);
  if (options.num_prefill_replicas > 0) {
    setup.prefill = target.prefill_pool;
    setup.prefill.num_replicas = options.num_prefill_replicas;
  }
  const auto warm = options.warm_prefix_cache ? target.workload->open(p.rate_scale) : nullptr;
  setup.warm_prefixes = warm.get();
  p.result = sim::simulate(setup, *reader);

  const sim::Metrics& m = p.result.metrics;
  p.attainment = sim::slo_attainment(m);
  const sim::SloVerdict slo_verdict = sim::check_slos(slo, sim::observe(m));
  p.verdict.slo_met = slo_verdict.met;
  p.verdict.limiting = slo_verdict.limiting;
  p.verdict.stable =
      p.result.saturation == sim::SaturationVerdict::kStable && p.result.requests_unfinished == 0;
  if (p.verdict.slo_met && !p.verdict.stable) p.verdict.limiting = "queue_unstable";
  if (m.completed == 0) {  // latencies of nothing hold vacuously; serving nothing does not
    p.verdict.slo_met = false;
    p.verdict.limiting = "no_request_completed";
  }
  return p;
}

DeploymentPlan plan_deployment(const PlanTarget& target, const PlanSettings& settings) {
  sim::validate_slo(settings.slo);
  DeploymentPlan plan;
  const WorkloadShape shape = measure_workload(*target.workload);
  plan.base_rate_rps = shape.rate_rps;
  plan.num_requests = shape.num_requests;
  SearchOptions search = settings.search;
  if (!(search.start_rate_rps > 0)) search.start_rate_rps = plan.base_rate_rps;
  std::vector<Probe> probes;
  plan.search = search_max_rate(
      [&](double rate) {
        probes.push_back(run_probe(target, settings.slo, plan.base_rate_rps, rate));
        return probes.back().verdict;
      },
      search);
  if (plan.search.best >= 0)
    plan.at_max = std::move(probes[static_cast<std::size_t>(plan.search.best)]);
  if (plan.search.above >= 0)
    plan.above = std::move(probes[static_cast<std::size_t>(plan.search.above)]);
  return plan;
}

std::int64_t sizing_limit(std::int64_t estimate) {
  return 2 * estimate + 2;
}

TargetSizing size_for_target(const PlanTarget& target, const sim::SloOptions& slo,
                             double base_rate_rps, double target_rate_rps, std::int64_t estimate) {
  KVSIM_ASSERT(estimate >= 1 && target_rate_rps > 0, "size_for_target: bad estimate or target");
  TargetSizing sizing;
  sizing.target_rate_rps = target_rate_rps;
  sizing.estimate = estimate;
  PlanTarget scaled = target;
  auto holds = [&](std::int64_t n) {
    if (target.options.num_prefill_replicas > 0) {  // n copies of the prefill/decode group
      scaled.options.num_replicas = n * target.options.num_replicas;
      scaled.options.num_prefill_replicas = n * target.options.num_prefill_replicas;
    } else {
      scaled.options.num_replicas = n;
    }
    const Probe p = run_probe(scaled, slo, base_rate_rps, target_rate_rps);
    sizing.checks.push_back({n, p.verdict.ok(), p.verdict.ok() ? "" : p.verdict.limiting});
    return p.verdict.ok();
  };
  for (std::int64_t n = estimate; n <= sizing_limit(estimate); ++n) {
    if (holds(n)) {
      sizing.replicas_needed = n;
      break;
    }
  }
  return sizing;
}

}  // namespace kvsim::plan
