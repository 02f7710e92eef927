// kvsim simulate: one workload through one deployment (flags, or a scenario YAML with --config).
#include "cli/commands.h"
#include "cli/serving_flags.h"
#include "common/atomic_file.h"
#include "report/sim_report.h"

namespace kvsim::cli {
namespace {

void run_simulate(const SimCommandFlags& flags) {
  // A bad --format fails before the simulation runs.
  if (!flags.output.format.empty()) report::parse_format(flags.output.format);
  const PreparedRun run = prepare_run(flags);
  const sim::SimOptions& s = run.resolved.sim;
  const RunOutput out = run_scenario(run.resolved, flags.serving.requests_path, "simulate:");
  if (!flags.serving.timeline_path.empty()) {
    write_file_atomically(flags.serving.timeline_path, report::timeline_csv(out.result));
  }
  report::emit(
      flags.output,
      {[&] { return report::dump(report::sim_report_json(out.inputs, out.result, s.slo)); },
       [&] { return report::sim_report_table(out.inputs, out.result, s.slo); },
       [&] { return report::sim_report_csv(out.result, s.slo); }},
      "simulate");
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto flags = std::make_shared<SimCommandFlags>();
  auto* command =
      app.add_subcommand("simulate", "Replay a trace or synthetic workload through one deployment");
  add_sim_command_flags(command, *flags, SettingForm::kSingle);
  command->callback([flags] { run_simulate(*flags); });
}

}  // namespace kvsim::cli
