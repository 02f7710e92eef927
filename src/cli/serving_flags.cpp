#include "cli/serving_flags.h"

#include <unistd.h>

#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "common/error.h"
#include "common/format.h"
#include "common/progress.h"
#include "common/strings.h"
#include "report/run_inputs.h"
#include "run/run.h"

namespace kvsim::cli {
namespace {

// A run's progress (simulated time, requests done and live, wall-clock rate) on the progress
// line; only on a terminal, erased before the report.
class SimProgressLine final : public sim::SimObserver {
 public:
  explicit SimProgressLine(std::string label)
      : label_(std::move(label)),
        line_(::isatty(STDERR_FILENO) != 0, ProgressLine::AtEnd::kErase) {}
  void on_progress(const sim::SimProgress& p) override {
    line_.update([&](double wall) {
      return label_ + " simulated " + human_seconds(ns_to_seconds(p.now)) + ", " +
             with_commas(p.ended) + " requests done, " + with_commas(p.live) + " live, " +
             (wall > 0 ? with_commas(static_cast<std::int64_t>(p.ended / wall)) : "-") + " req/s";
    });
  }

 private:
  std::string label_;
  ProgressLine line_;
};

class FanOut final : public sim::SimObserver {
 public:
  std::vector<sim::SimObserver*> observers;
  void on_request_end(const sim::Request& r) override {
    for (auto* o : observers) o->on_request_end(r);
  }
  void on_progress(const sim::SimProgress& p) override {
    for (auto* o : observers) o->on_progress(p);
  }
};

}  // namespace

bool flag_given(const CLI::App* command, const std::string& name) {
  const CLI::Option* option = command->get_option_no_throw(name);
  return option != nullptr && option->count() > 0;
}

void add_sim_command_flags(CLI::App* command, SimCommandFlags& flags, SettingForm form) {
  flags.command = command;
  command->add_option("--config", flags.config,
                      "Scenario YAML (configs/scenarios/); flags given override its fields");
  add_setting_flags(command, flags.settings, config::SettingScope::kServing, form);
  ServingFlags& f = flags.serving;
  command
      ->add_option("--timeline", f.timeline_path, "Write a downsampled timeline CSV to this file")
      ->type_name("FILE.csv");
  command
      ->add_option("--timeline-points", f.timeline_points,
                   "Most points in the timeline (default 1000)")
      ->type_name("INT");
  command->add_option("--requests", f.requests_path, "Write one CSV row per request to this file")
      ->type_name("FILE.csv");
  command->add_flag("--verbose", f.verbose,
                    "JSON: also list each KV group's layer indices (kv.groups[].layers)");
  add_workload_flags(command, flags.workload, WorkloadFlagScope::kServing);
  add_output_flags(command, flags.output);
}

config::Scenario scenario_from(const SimCommandFlags& flags) {
  const CLI::App* c = flags.command;
  config::Scenario s;
  if (!flags.config.empty()) s = config::load_scenario(flags.config);
  apply_setting_flags(flags.settings, s);
  const ServingFlags& f = flags.serving;
  if (flag_given(c, "--timeline-points")) {
    s.sim.timeline_points = int_at_least("--timeline-points", f.timeline_points, 2);
  } else if (!f.timeline_path.empty() && s.sim.timeline_points == 0) {
    s.sim.timeline_points = 1000;
  }
  if (flags.workload_override) {
    s.workload = *flags.workload_override;
    s.has_workload = true;
  } else {
    apply_workload_flags(flags.workload, s);
  }
  return s;
}

void apply_workload_flags(const WorkloadFlags& flags, config::Scenario& s) {
  s.workload = workload_options_from_flags(flags, s.workload, s.has_workload);
  s.has_workload = true;
}

PreparedRun prepare_run(const SimCommandFlags& flags) {
  PreparedRun run;
  run.scenario = scenario_from(flags);
  run.resolve = run::ResolveOptions{.truncate_prompts = flags.workload.truncate_prompts};
  run.resolved = run::resolve_scenario(run.scenario, run.resolve);
  return run;
}

RunOutput run_scenario(const run::ResolvedScenario& scenario, const std::string& requests_path,
                       const std::string& label, report::KvDetail kv_detail,
                       sim::SimObserver* extra) {
  SimProgressLine progress(label);
  FanOut observers;
  observers.observers.push_back(&progress);
  if (extra != nullptr) observers.observers.push_back(extra);
  std::unique_ptr<report::RequestLog> log;
  if (!requests_path.empty()) {
    log = std::make_unique<report::RequestLog>(requests_path);
    observers.observers.push_back(log.get());
  }
  run::RunResult out = run::run(scenario, &observers);
  if (log) log->commit();
  RunOutput output;
  output.inputs = report::sim_report_inputs(scenario, out, kv_detail);
  output.result = std::move(out.result);
  return output;
}

}  // namespace kvsim::cli
