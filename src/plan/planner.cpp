#include "plan/planner.h"

#include <cmath>

#include "common/assert.h"
#include "common/error.h"
#include "common/units.h"
#include "sim/request.h"

namespace kvsim::plan {
namespace {

// Counts the requests that meet every per-request target, as they end.
class AttainmentCounter final : public sim::SimObserver {
 public:
  explicit AttainmentCounter(const SloSpec& slo) : slo_(slo) {}

  void on_request_end(const sim::Request& r) override {
    ++ended_;
    if (r.state != sim::RequestState::kFinished) return;
    const double ttft = ns_to_seconds(r.first_token_ns - r.arrival_ns);
    const double e2e = ns_to_seconds(r.last_token_ns - r.arrival_ns);
    const double tpot =
        r.output_tokens > 1 ? (e2e - ttft) / static_cast<double>(r.output_tokens - 1) : -1.0;
    if (request_meets(slo_, ttft, tpot, e2e)) ++good_;
  }

  double attainment() const {
    return ended_ > 0 ? static_cast<double>(good_) / static_cast<double>(ended_) : 0.0;
  }

 private:
  const SloSpec& slo_;
  std::int64_t ended_ = 0;
  std::int64_t good_ = 0;
};

}  // namespace

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

sim::SloOptions sim_slo(const SloSpec& slo) {
  sim::SloOptions s;
  s.ttft_ns = slo.ttft.active() ? seconds_to_ns(slo.ttft.target_s) : 0;
  s.tpot_ns = slo.tpot.active() ? seconds_to_ns(slo.tpot.target_s) : 0;
  s.e2e_ns = slo.e2e.active() ? seconds_to_ns(slo.e2e.target_s) : 0;
  s.percentile = slo.ttft.active()   ? slo.ttft.percentile
                 : slo.tpot.active() ? slo.tpot.percentile
                                     : 99.0;
  return s;
}

Probe run_probe(const PlanTarget& target, const SloSpec& slo, double base_rate_rps,
                double rate_rps) {
  Probe p;
  p.rate_rps = rate_rps;
  p.rate_scale = rate_rps / base_rate_rps;
  const auto reader = target.workload->open(p.rate_scale);

  sim::SimOptions options = target.options;
  options.slo = sim_slo(slo);
  const sim::SimSetup setup = target.deployment->setup(options);
  AttainmentCounter counter(slo);
  p.result = sim::simulate(setup, *reader, &counter);
  p.attainment = counter.attainment();

  const sim::Metrics& m = p.result.metrics;
  SloObservation observed;
  observed.ttft_s = [&m](double q) { return m.ttft.percentile(q) * 1e-9; };
  observed.tpot_s = [&m](double q) { return m.tpot.percentile(q) * 1e-9; };
  observed.e2e_s = [&m](double q) { return m.e2e.percentile(q) * 1e-9; };
  observed.attainment = p.attainment;
  observed.stable =
      p.result.saturation == sim::SaturationVerdict::kStable && p.result.requests_unfinished == 0;
  p.verdict = check_slos(slo, observed);
  if (m.completed == 0) {  // latencies of nothing hold vacuously; serving nothing does not
    p.verdict.slo_met = false;
    p.verdict.limiting = "no_request_completed";
  }
  return p;
}

DeploymentPlan plan_deployment(const PlanTarget& target, const PlanSettings& settings) {
  validate_slo(settings.slo);
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

TargetSizing size_for_target(const PlanTarget& target, const SloSpec& slo, double base_rate_rps,
                             double target_rate_rps, std::int64_t estimate) {
  KVSIM_ASSERT(estimate >= 1 && target_rate_rps > 0, "size_for_target: bad estimate or target");
  TargetSizing sizing;
  sizing.target_rate_rps = target_rate_rps;
  sizing.estimate = estimate;
  PlanTarget scaled = target;
  auto holds = [&](std::int64_t n) {
    scaled.options.num_replicas = n;
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
