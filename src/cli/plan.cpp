// kvsim plan: capacity planning over a grid of deployments. For each deployment (a point of the
// sweep grid: --config sweep.yaml and/or comma-separated flag lists), the highest arrival rate
// that meets the SLOs with a stable queue (each probe a full simulation), then sizing for a
// target rate, rankings by cost and throughput per GPU, and the Pareto front.
//
// Runs on all cores (--jobs), resumes from --resume FILE, and shards over MPI ranks when launched
// by mpirun (rank 0 writes the output; identical bytes to a single-process run).

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "cli/serving_flags.h"
#include "cli/setting_flags.h"
#include "cli/workload_flags.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "common/strings.h"
#include "config/scenario_grid.h"
#include "plan/cluster.h"
#include "plan/load_search.h"
#include "plan/plan_record.h"
#include "plan/planner.h"
#include "plan/sizing.h"
#include "plan/sweep_runner.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/plan_report.h"
#include "report/run_inputs.h"
#include "report/sim_report.h"
#include "report/spec_json.h"
#include "report/trace_report.h"
#include "run/resolve.h"
#include "sim/slo.h"

namespace kvsim::cli {
namespace {

struct PlanFlags {
  std::string config;
  SettingFlags settings;  // grid axes take lists (SettingForm::kPlan)
  WorkloadFlags workload;
  std::string slo_attainment;
  std::string target_rate;
  std::vector<std::string> gpu_prices;  // GPU=USD
  std::string search_start, search_growth, search_tolerance, search_min, search_max,
      search_max_probes;
  int jobs = 0;
  std::string resume;
  bool no_progress = false;
  std::string html;  // --html FILE
  report::OutputOptions output;
};

// The point's SLO: the flags beat the plan section, which beats the scenario's slo: section.
sim::SloOptions slo_for(const config::Scenario& s, const config::PlanSection& section,
                        const PlanFlags& f) {
  sim::SloOptions slo = s.sim.slo;
  if (section.slo) {
    const config::PlanSloSection& p = *section.slo;
    if (p.percentile) slo.percentile = *p.percentile;
    if (p.ttft_ms) slo.ttft_ns = seconds_to_ns(*p.ttft_ms / 1e3);
    if (p.tpot_ms) slo.tpot_ns = seconds_to_ns(*p.tpot_ms / 1e3);
    if (p.e2e_ms) slo.e2e_ns = seconds_to_ns(*p.e2e_ms / 1e3);
    if (p.ttft_percentile) slo.ttft_percentile = *p.ttft_percentile;
    if (p.tpot_percentile) slo.tpot_percentile = *p.tpot_percentile;
    if (p.e2e_percentile) slo.e2e_percentile = *p.e2e_percentile;
    if (p.attainment) slo.attainment = *p.attainment;
  }
  const config::Scenario flagged = scenario_from_flags(f.settings);
  const sim::SloOptions& given = flagged.sim.slo;
  if (f.settings.find("--slo-ttft")) slo.ttft_ns = given.ttft_ns;
  if (f.settings.find("--slo-tpot")) slo.tpot_ns = given.tpot_ns;
  if (f.settings.find("--slo-e2e")) slo.e2e_ns = given.e2e_ns;
  if (f.settings.find("--slo-percentile")) {
    slo.percentile = given.percentile;
    slo.ttft_percentile = slo.tpot_percentile = slo.e2e_percentile = std::nullopt;
  }
  if (!f.slo_attainment.empty()) {
    slo.attainment = number_in("--slo-attainment", f.slo_attainment, 0, 1, /*open_low=*/false,
                               "a fraction in [0, 1]");
  }
  sim::validate_slo(slo);
  return slo;
}

plan::SearchOptions search_for(const config::PlanSection& section, const PlanFlags& f) {
  plan::SearchOptions o;
  o.start_rate_rps = 0;  // each workload's own rate
  const config::PlanSearchSection& s = section.search;
  if (s.start_rate) o.start_rate_rps = *s.start_rate;
  if (s.growth) o.growth = *s.growth;
  if (s.tolerance) o.rel_tolerance = *s.tolerance;
  if (s.min_rate) o.min_rate_rps = *s.min_rate;
  if (s.max_rate) o.max_rate_rps = *s.max_rate;
  if (s.max_probes) o.max_probes = static_cast<int>(*s.max_probes);
  const double kBig = 1e12;
  if (!f.search_start.empty()) {
    o.start_rate_rps = number_in("--search-start-rate", f.search_start, 1e-12, kBig,
                                 /*open_low=*/false, "a positive number of requests/s");
  }
  if (!f.search_growth.empty()) {
    o.growth = number_in("--search-growth", f.search_growth, 1, kBig, /*open_low=*/false,
                         "a factor above 1");
  }
  if (!f.search_tolerance.empty()) {
    o.rel_tolerance = number_in("--search-tolerance", f.search_tolerance, 0, 1, /*open_low=*/false,
                                "a fraction in (0, 1)");
  }
  if (!f.search_min.empty()) {
    o.min_rate_rps = number_in("--search-min-rate", f.search_min, 1e-12, kBig, /*open_low=*/false,
                               "a positive number of requests/s");
  }
  if (!f.search_max.empty()) {
    o.max_rate_rps = number_in("--search-max-rate", f.search_max, 1e-12, kBig, /*open_low=*/false,
                               "a positive number of requests/s");
  }
  if (!f.search_max_probes.empty()) {
    const auto n = parse_int(trim(f.search_max_probes));
    if (!n || *n < 2 || *n > 10000) {
      throw Error({"", 0, 0, "--search-max-probes"},
                  "expected an integer in [2, 10000], got '" + f.search_max_probes + "'");
    }
    o.max_probes = static_cast<int>(*n);
  }
  plan::SearchOptions check = o;
  if (!(check.start_rate_rps > 0)) check.start_rate_rps = check.min_rate_rps;
  plan::validate_search_options(check);
  return o;
}

std::vector<std::pair<std::string, double>> price_overrides(const config::PlanSection& section,
                                                            const PlanFlags& f) {
  std::vector<std::pair<std::string, double>> prices = section.gpu_price_per_hour;
  for (const std::string& spec : f.gpu_prices) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error({"", 0, 0, "--gpu-price"}, "expected GPU=USD_PER_HOUR, got '" + spec + "'");
    }
    const double usd = number_in("--gpu-price", spec.substr(eq + 1), 0, 1e6, /*open_low=*/false,
                                 "a price in USD per GPU-hour");
    const std::string gpu = spec.substr(0, eq);
    std::erase_if(prices, [&](const auto& p) { return p.first == gpu; });
    prices.emplace_back(gpu, usd);
  }
  return prices;
}

// Everything one grid point needs, resolved before any simulation.
struct PreparedPoint {
  run::ResolvedScenario resolved;  // its sim.slo is the point's
  report::PlanPoint report;        // its slo is the point's
  std::string key;
};

std::string point_label(const run::ResolvedScenario& r) {
  const run::Deployment& d = r.deployment;
  std::string label = d.model.name + " on ";
  if (r.sim.num_prefill_replicas > 0) {  // disaggregated: the prefill instances, then the decode
    label += std::to_string(r.sim.num_prefill_replicas) + " prefill × " +
             std::to_string(d.prefill_tensor_parallel_size);
    if (d.prefill_data_parallel_size > 1) {
      label += " × DP " + std::to_string(d.prefill_data_parallel_size);
    }
    label += " + " + std::to_string(r.sim.num_replicas) + " decode × ";
  }
  label += std::to_string(d.tensor_parallel_size) + " × " + d.hardware->name;
  if (d.pipeline_parallel_size > 1) {
    label += " × " + std::to_string(d.pipeline_parallel_size) + " stages";
  }
  if (d.data_parallel_size > 1) {
    label += " × DP " + std::to_string(d.data_parallel_size);
  }
  if (d.enable_expert_parallel) label += " (EP)";
  if (r.sim.num_replicas > 1 && r.sim.num_prefill_replicas == 0) {
    label += " × " + std::to_string(r.sim.num_replicas) + " replicas";
  }
  return label;
}

PreparedPoint prepare_point(const config::ScenarioGridPoint& point,
                            const config::PlanSection& section, const PlanFlags& f,
                            const plan::SearchOptions& search,
                            const std::vector<std::pair<std::string, double>>& prices,
                            std::optional<double> target_rate) {
  PreparedPoint p;
  config::Scenario s = point.scenario;
  apply_setting_flags(f.settings, s);  // the flags that are not grid axes
  apply_workload_flags(f.workload, s);
  p.resolved = run::resolve_scenario(
      s, run::ResolveOptions{.truncate_prompts = f.workload.truncate_prompts});
  const run::Deployment& d = p.resolved.deployment;

  p.report.slo = slo_for(s, section, f);
  p.resolved.sim.slo = p.report.slo;

  report::PlanPoint& rp = p.report;
  rp.axes = point.axes;
  rp.label = point_label(p.resolved);
  rp.inputs = report::inputs_json(p.resolved);
  rp.replicas = p.resolved.sim.num_replicas;
  rp.gpus_per_replica = d.gpus_per_replica();
  if (p.resolved.sim.num_prefill_replicas > 0) {
    // Disaggregated: the planner's replica is the whole prefill/decode group.
    rp.replicas = 1;
    rp.gpus_per_replica =
        d.disaggregated_gpus(p.resolved.sim.num_prefill_replicas, p.resolved.sim.num_replicas);
  }
  rp.gpu_price_per_hour = d.hardware->price_per_hour;
  for (const auto& [gpu, usd] : prices) {
    if (gpu == s.deployment.gpu || gpu == d.hardware->name) rp.gpu_price_per_hour = usd;
  }

  // The resume key: everything a deployment's record depends on (not the target or prices).
  report::Json key = rp.inputs;
  key["kvsim_version"] = KVSIM_VERSION;
  report::Json slo_key = report::Json::object();
  for (const sim::LatencyTarget& t : sim::latency_targets(p.report.slo)) {
    slo_key[t.metric_name] = {ns_to_seconds(t.target_ns), t.percentile};
  }
  slo_key["attainment"] = p.report.slo.attainment;
  key["slo"] = std::move(slo_key);
  key["search"] = {search.start_rate_rps, search.growth,       search.rel_tolerance,
                   search.min_rate_rps,   search.max_rate_rps, search.max_probes};
  // With a target, each record carries its sizing checked by simulation at the target.
  if (target_rate) key["target_rate_rps"] = *target_rate;
  p.key = plan::job_key(key.dump());
  return p;
}

std::string compact(const report::Json& j) {
  return j.dump(-1, ' ', false, report::Json::error_handler_t::replace);
}

// The grid-axis flags given, each a list of values replacing its field of the sweep document (the
// last of a repeated flag wins).
std::vector<config::GridOverride> grid_overrides(const SettingFlags& flags) {
  std::vector<config::GridOverride> overrides;
  for (const auto& [setting, text] : flags.given) {
    if (!flags.is_list(*setting)) continue;
    config::GridOverride o;
    o.flag = setting->flag;
    o.path = setting->path;
    for (const auto part : split(text, ',')) {
      const std::string v(trim(part));
      if (v.empty()) {
        throw Error({"", 0, 0, o.flag},
                    "expected a comma-separated list without empty items, got '" + text + "'");
      }
      o.values.push_back(v);
    }
    std::erase_if(overrides, [&](const config::GridOverride& g) { return g.path == o.path; });
    overrides.push_back(std::move(o));
  }
  return overrides;
}

// One job of the sweep: the deployment's record (JSON text), or its error record.
std::string plan_point(const PreparedPoint& p, const plan::SearchOptions& search,
                       std::optional<double> target) {
  if (const std::optional<Error> e = p.resolved.not_modelled()) {
    return compact(plan::to_json(plan::error_record(e->message(), "not_modelled")));
  }
  std::shared_ptr<const sim::BuiltDeployment> built;
  try {
    built = std::make_shared<const sim::BuiltDeployment>(
        sim::build_deployment(p.resolved.deployment_inputs(), p.resolved.sim));
  } catch (const Error& e) {
    return compact(plan::to_json(plan::error_record(e.message())));
  }
  plan::PlanTarget target_i{built, p.resolved.sim, p.resolved.workload, nullptr, {}};
  if (p.resolved.sim.num_prefill_replicas > 0) {
    try {
      target_i.prefill = std::make_shared<const sim::BuiltDeployment>(
          sim::build_deployment(p.resolved.prefill_deployment_inputs(), p.resolved.sim));
      target_i.prefill_pool = p.resolved.prefill_pool(*target_i.prefill);
    } catch (const Error& e) {
      return compact(plan::to_json(plan::error_record(e.message())));
    }
  }
  const plan::DeploymentPlan dp = plan::plan_deployment(target_i, {p.report.slo, search});
  plan::DeploymentRecord record = report::deployment_record(dp, p.report.slo);
  if (target && dp.at_max && dp.search.max_rate_rps > 0) {
    plan::CapacityPoint c;
    c.feasible = true;
    c.max_rate_rps = dp.search.max_rate_rps;
    c.replicas = p.report.replicas;
    const std::int64_t estimate = plan::linear_replicas_estimate(c, *target);
    record.sizing =
        plan::size_for_target(target_i, p.report.slo, dp.base_rate_rps, *target, estimate);
  }
  return compact(plan::to_json(record));
}

void run_plan(PlanFlags& f) {
  if (!f.output.format.empty()) report::parse_format(f.output.format);
  if (f.jobs < 0) throw Error({"", 0, 0, "--jobs"}, "expected 0 (all cores) or more");
  plan::MpiSession mpi;
  const plan::Cluster& world = mpi.world();

  const config::ScenarioGrid grid =
      config::load_scenario_grid(f.config, grid_overrides(f.settings));
  const plan::SearchOptions search = search_for(grid.plan, f);
  const auto prices = price_overrides(grid.plan, f);
  std::optional<double> target = grid.plan.target_rate;
  if (!f.target_rate.empty()) {
    target = number_in("--target-rate", f.target_rate, 1e-12, 1e12, /*open_low=*/false,
                       "a positive number of requests/s");
  }

  std::vector<PreparedPoint> points;
  points.reserve(grid.points.size());
  for (const auto& gp : grid.points) {
    points.push_back(prepare_point(gp, grid.plan, f, search, prices, target));
  }

  std::vector<std::string> keys;
  keys.reserve(points.size());
  for (const auto& p : points) keys.push_back(p.key);
  plan::RunnerOptions runner;
  runner.num_threads = f.jobs;
  runner.results_path = f.resume;
  runner.progress = !f.no_progress && ::isatty(STDERR_FILENO);
  runner.progress_label = "plan";
  runner.cluster = &world;
  const auto start = std::chrono::steady_clock::now();
  plan::SweepStats stats;
  const std::vector<std::string> results = plan::run_sweep(
      keys, [&](std::size_t i) { return plan_point(points[i], search, target); }, runner, &stats);
  if (world.rank() != 0) return;

  std::vector<plan::DeploymentRecord> records;
  std::vector<report::PlanPoint> report_points;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string what = "result of deployment " + std::to_string(i);
    records.push_back(plan::record_from_json(report::parse_json_text(results[i], what), what));
    report_points.push_back(points[i].report);
  }
  report::PlanReportSettings settings;
  settings.source = f.config;
  settings.target_rate_rps = target;
  settings.search = search;
  settings.gpu_price_overrides = prices;
  const report::Json doc = report::plan_json(settings, report_points, records);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << "kvsim plan: " << stats.num_jobs << " deployments (" << stats.num_resumed
            << " resumed), " << stats.num_threads << " thread"
            << (stats.num_threads == 1 ? "" : "s") << " × " << stats.num_ranks << " rank"
            << (stats.num_ranks == 1 ? "" : "s") << ", " << fixed(seconds, 1) << " s\n";
  if (!f.html.empty()) write_file_atomically(f.html, report::plan_html(doc));
  report::emit(f.output,
               {[&] { return report::dump(doc); }, [&] { return report::plan_table(doc); },
                [&] { return report::plan_csv(doc); }},
               "plan");
}

}  // namespace

void register_plan(CLI::App& app) {
  auto f = std::make_shared<PlanFlags>();
  auto* c = app.add_subcommand(
      "plan",
      "Capacity planning: the max sustainable load of each deployment of a grid under SLOs, "
      "replicas/GPUs/cost for a target rate, rankings and the Pareto front");
  c->add_option("--config", f->config,
                "Sweep YAML (configs/scenarios/): a scenario whose fields may be lists, plus a "
                "plan: section (SLOs, target rate, prices, search)");
  add_setting_flags(c, f->settings, config::SettingScope::kServing, SettingForm::kPlan);
  add_workload_flags(c, f->workload, WorkloadFlagScope::kServing);
  c->add_option("--slo-attainment", f->slo_attainment,
                "Required fraction of requests within every target (0 = none)")
      ->type_name("F");
  c->add_option("--target-rate", f->target_rate,
                "Size each deployment for this many requests/s (replicas, GPUs, cost)")
      ->type_name("RPS");
  c->add_option("--gpu-price", f->gpu_prices,
                "Override a GPU's price, USD per GPU-hour: GPU=USD (repeatable)")
      ->type_name("GPU=USD")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--search-start-rate", f->search_start,
                "First probe, requests/s (default: the workload's own rate)")
      ->type_name("RPS");
  c->add_option("--search-growth", f->search_growth, "Bracketing factor (2)")->type_name("X");
  c->add_option("--search-tolerance", f->search_tolerance,
                "Stop bisecting at this relative gap between holding and failing rates (0.02)")
      ->type_name("F");
  c->add_option("--search-min-rate", f->search_min, "Lowest rate probed (0.001)")->type_name("RPS");
  c->add_option("--search-max-rate", f->search_max, "Highest rate probed (100000)")
      ->type_name("RPS");
  c->add_option("--search-max-probes", f->search_max_probes, "Most simulations per deployment (60)")
      ->type_name("N");
  c->add_option("--jobs,-j", f->jobs, "Worker threads per process (0 = all cores)")->type_name("N");
  c->add_option("--resume", f->resume,
                "Results file (JSON lines): finished deployments are appended as they end and "
                "skipped when the same plan runs again")
      ->type_name("FILE");
  c->add_flag("--no-progress", f->no_progress, "No progress bar on stderr");
  add_output_flags(c, f->output);
  c->add_option("--html", f->html,
                "Also write a self-contained HTML page: cost vs capacity with the Pareto front, "
                "and the ranking")
      ->type_name("FILE");
  c->callback([f] { run_plan(*f); });
}

}  // namespace kvsim::cli
