// kvsim simulate: one workload through one deployment (flags, or a scenario YAML with --config).
#include "cli/commands.h"
#include "cli/inert_flags.h"
#include "cli/serving_flags.h"
#include "common/atomic_file.h"
#include "report/html.h"
#include "report/sim_report.h"

namespace kvsim::cli {
namespace {

void run_simulate(const SimCommandFlags& flags, const std::string& html) {
  // A bad --format fails before the simulation runs.
  if (!flags.output.format.empty()) report::parse_format(flags.output.format);
  PreparedRun run = prepare_run(flags);
  sim::SimOptions& s = run.resolved.sim;
  warn_inert_flags(flags, run, {run.resolved.allocator});
  // The HTML page draws the timeline; the JSON keeps it only when asked for.
  const bool timeline_asked = s.timeline_points > 0;
  if (!html.empty() && !timeline_asked) s.timeline_points = 1000;
  RunOutput out = run_scenario(run.resolved, flags.serving.requests_path,
                               "simulate:", kv_detail(flags.serving));
  if (!flags.serving.timeline_path.empty()) {
    write_file_atomically(flags.serving.timeline_path, report::timeline_csv(out.result));
  }
  if (!html.empty()) {
    const report::Json doc = report::sim_report_json(out.inputs, out.result, s.slo);
    write_file_atomically(html, report::simulate_html(doc, out.result));
  }
  if (!timeline_asked) out.result.timeline.clear();
  report::emit(
      flags.output,
      {[&] { return report::dump(report::sim_report_json(out.inputs, out.result, s.slo)); },
       [&] { return report::sim_report_table(out.inputs, out.result, s.slo); },
       [&] { return report::sim_report_csv(out.inputs, out.result, s.slo); }},
      "simulate");
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto flags = std::make_shared<SimCommandFlags>();
  auto* command =
      app.add_subcommand("simulate", "Replay a trace or synthetic workload through one deployment");
  add_sim_command_flags(command, *flags, SettingForm::kSingle);
  auto html = std::make_shared<std::string>();
  command
      ->add_option("--html", *html,
                   "Also write a self-contained HTML page: latency CDFs, KV memory timeline, "
                   "running/waiting, per-replica load")
      ->type_name("FILE");
  command->callback([flags, html] { run_simulate(*flags, *html); });
}

}  // namespace kvsim::cli
