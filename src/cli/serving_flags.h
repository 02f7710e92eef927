#pragma once
// The flags of the commands that simulate (`simulate`, `compare`, and `plan` later), and turning
// them — on top of an optional scenario YAML (--config) — into a resolved run.
//
// Serving flags (the DESIGN deployment flags not about memory): --replicas, --router,
// --scheduler, --max-num-seqs, --max-num-batched-tokens, --long-prefill-token-threshold,
// --allocator, --placement, --watermark, --preemption, --swap-space, --enable-prefix-caching,
// --seed, --slo-ttft, --slo-tpot, --slo-e2e, --slo-percentile, --time-limit, --cost-model,
// --timeline,
// --timeline-points, --requests. Memory flags (--model, --gpu, --tensor-parallel-size,
// --block-size, ...) come from cli/deployment_flags.h, workload flags from cli/workload_flags.h.
// Flags given on the command line override the scenario's fields; the rest keep the scenario's
// values (or the defaults of config::Scenario).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/deployment_flags.h"
#include "cli/workload_flags.h"
#include "config/scenario.h"
#include "report/output.h"
#include "report/sim_report.h"
#include "sim/deployment.h"
#include "trace/workload.h"

namespace kvsim::cli {

// Raw values, parsed by apply_serving_flags (strict: a bad value names the flag).
struct ServingFlags {
  std::string replicas, router, scheduler, max_num_seqs, max_num_batched_tokens,
      long_prefill_token_threshold, allocator, placement, watermark, preemption, swap_space_gib,
      seed, slo_ttft_ms, slo_tpot_ms, slo_e2e_ms, slo_percentile, time_limit_s, cost_model,
      timeline_points;
  bool enable_prefix_caching = false;
  std::string timeline_path;  // --timeline FILE.csv
  std::string requests_path;  // --requests FILE.csv
  // compare: --allocator and --scheduler take comma-separated lists, expanded by the caller;
  // apply_serving_flags leaves those two alone.
  bool lists = false;
};

// Registers the serving flags on `command`, bound to `flags`.
void add_serving_flags(CLI::App* command, ServingFlags& flags);

// Overwrites, in `scenario`, the settings whose flags `command` was given. Throws kvsim::Error
// naming the flag on an unknown name (with a suggestion) or an out-of-range value.
void apply_serving_flags(const CLI::App* command, const ServingFlags& flags,
                         config::Scenario& scenario);

// True when the flag (e.g. "--seed") was given on the command line.
bool flag_given(const CLI::App* command, const std::string& name);

// Everything a simulating command reads.
struct SimCommandFlags {
  std::string config;  // --config scenario.yaml
  DeploymentFlags deployment;
  ServingFlags serving;
  WorkloadFlags workload;
  report::OutputOptions output;
  CLI::App* command = nullptr;
  // `validate`: the workload to run instead of a scenario's or the workload flags'.
  std::optional<trace::WorkloadOptions> workload_override;
};

// Registers --config, the deployment, serving, workload and output flags.
void add_sim_command_flags(CLI::App* command, SimCommandFlags& flags, bool lists);

// A scenario with every flag applied and its names resolved.
struct PreparedRun {
  config::Scenario scenario;  // deployment fields as finally used
  Deployment deployment;      // model, GPU, tp, KV format, max_model_len resolved
  std::shared_ptr<const trace::Workload> workload;
};

// Loads --config (if any), applies the flags, resolves the model and GPU (the GPU is required)
// and validates the workload. Throws kvsim::Error on any bad input, before anything runs.
PreparedRun prepare_run(const SimCommandFlags& flags);

// The deployment flags a scenario's deployment section stands for.
DeploymentFlags deployment_flags_from(const config::ScenarioDeployment& deployment);
// Resolves `deployment` into run.deployment, writes what it resolved to back into run.scenario
// (deployment fields, the simulator's block size and max model length; validated), and builds
// run.workload from the scenario's workload with `workload_flags` applied.
void finish_run(PreparedRun& run, const DeploymentFlags& deployment,
                const WorkloadFlags& workload_flags);

// The builder's inputs for `run` (its scenario's allocator, placement and cost model).
sim::DeploymentInputs deployment_inputs(const PreparedRun& run, const config::Scenario& scenario);

// The report's `inputs.serving` object of a deployment run under `scenario`: memory settings,
// allocator, scheduler and cost model (in the scenario file's keys and units).
report::Json serving_inputs_json(const Deployment& deployment, const config::Scenario& scenario);

// The report's inputs for one finished run.
report::SimReportInputs report_inputs(const PreparedRun& run, const config::Scenario& scenario,
                                      const sim::BuiltDeployment& built,
                                      const trace::ReaderStats& reader_stats,
                                      const std::string& reader_description);

// Runs one scenario variant of `run`: builds the deployment, streams the workload through the
// simulator (a progress line on stderr when it is a terminal; --requests written as requests
// end) and returns the result with its report inputs.
struct RunOutput {
  sim::SimResult result;
  report::SimReportInputs inputs;
};
RunOutput run_scenario(const PreparedRun& run, const config::Scenario& scenario,
                       const std::string& requests_path, const std::string& label);

}  // namespace kvsim::cli
