#pragma once
// The flags of the commands that simulate (`simulate`, `compare`, and `plan` later), and turning
// them — on top of an optional scenario YAML (--config) — into a resolved run.
//
// The scenario settings' flags come from the settings table (cli/setting_flags.h), workload flags
// from cli/workload_flags.h; here are --timeline, --timeline-points and --requests. Flags given
// on the command line override the scenario's fields; the rest keep the scenario's values (or
// the defaults of config::Scenario).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/setting_flags.h"
#include "cli/workload_flags.h"
#include "config/scenario.h"
#include "report/kv_report.h"
#include "report/output.h"
#include "report/sim_report.h"
#include "run/resolve.h"

namespace kvsim::cli {

// The per-run output flags of simulate (and compare, which rejects the two files).
struct ServingFlags {
  std::string timeline_points;  // --timeline-points INT
  std::string timeline_path;    // --timeline FILE.csv
  std::string requests_path;    // --requests FILE.csv
  bool verbose = false;         // --verbose: per-layer detail in the JSON (kv.groups[].layers)
};

// KvDetail::kLayers with --verbose, else kSummary.
inline report::KvDetail kv_detail(const ServingFlags& flags) {
  return flags.verbose ? report::KvDetail::kLayers : report::KvDetail::kSummary;
}

// True when the flag (e.g. "--seed") was given on the command line.
bool flag_given(const CLI::App* command, const std::string& name);

// Everything a simulating command reads.
struct SimCommandFlags {
  std::string config;     // --config scenario.yaml
  SettingFlags settings;  // the settings table's flags
  ServingFlags serving;
  WorkloadFlags workload;
  report::OutputOptions output;
  CLI::App* command = nullptr;
  // `validate`: the workload to run instead of a scenario's or the workload flags'.
  std::optional<trace::WorkloadOptions> workload_override;
};

// Registers --config, the settings table's flags (in `form`), the timeline and requests flags,
// --verbose, the workload and the output flags.
void add_sim_command_flags(CLI::App* command, SimCommandFlags& flags, SettingForm form);

// The scenario of --config with every flag (settings, timeline, workload) applied. Parsed and
// range-checked; nothing resolved yet.
config::Scenario scenario_from(const SimCommandFlags& flags);

// Replaces the scenario's workload by the scenario's section with the workload flags given
// applied (workload_options_from_flags). Throws kvsim::Error when there is no workload at all.
void apply_workload_flags(const WorkloadFlags& flags, config::Scenario& scenario);

// A simulating command's scenario, as parsed (with the flags) and as resolved.
struct PreparedRun {
  config::Scenario scenario;    // parsed: never changed by resolving
  run::ResolveOptions resolve;  // how it was resolved (compare resolves variants alike)
  run::ResolvedScenario resolved;
};

// scenario_from, then run::resolve_scenario (the GPU is required). Throws kvsim::Error on any bad
// input, before anything runs.
PreparedRun prepare_run(const SimCommandFlags& flags);

// Runs one resolved scenario (run::run) with a progress line on stderr when it is a terminal and
// --requests written as requests end, and returns the result with its report inputs.
struct RunOutput {
  sim::SimResult result;
  report::SimReportInputs inputs;
};
// `extra`, when given, sees every request end too.
RunOutput run_scenario(const run::ResolvedScenario& scenario, const std::string& requests_path,
                       const std::string& label, report::KvDetail kv_detail,
                       sim::SimObserver* extra = nullptr);

}  // namespace kvsim::cli
