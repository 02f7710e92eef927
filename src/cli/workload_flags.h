#pragma once
// Workload flags shared by `trace gen|stats|convert`, `simulate`, `compare` and `plan`.
//
//   --trace FILE [--trace-format F] [--skip-bad-rows] [--prefix-block-tokens N]
//   or a generator: --arrival poisson|gamma|constant|replay --rate R --cv C --arrival-trace FILE
//     --num-requests N --duration S --prompt-len SPEC --output-len SPEC --lengths-from FILE
//     --shared-prefix-fraction F --shared-prefix-prompts K --shared-prefix-tokens P
//   transforms: --rate-scale X --max-requests N --time-window [START:]END (seconds)
//   kTraceTool only: --seed N, --max-model-len L (truncate prompts to fit L)
//   kServing only:   --truncate-prompts (fit the caller's --max-model-len; the caller owns
//                    --seed and --max-model-len, which are deployment flags there)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "trace/workload.h"

namespace kvsim::cli {

enum class WorkloadFlagScope { kTraceTool, kServing };

// Raw flag values; read them only through workload_options_from_flags.
struct WorkloadFlags {
  WorkloadFlagScope scope = WorkloadFlagScope::kTraceTool;
  std::string trace, trace_format, arrival_trace, lengths_from;
  bool skip_bad_rows = false;
  std::int64_t prefix_block_tokens = trace::kDefaultPrefixBlockTokens;
  std::string arrival, prompt_len, output_len, time_window;
  double rate = 0.0, cv = 1.0, duration = 0.0, rate_scale = 1.0;
  std::int64_t num_requests = 0, max_requests = 0, max_model_len = 0, max_concurrency = 0;
  double shared_prefix_fraction = 0.0;
  std::int64_t shared_prefix_prompts = 1, shared_prefix_tokens = 0;
  std::int64_t prompt_pool = 0;
  std::uint64_t seed = 0;
  bool truncate_prompts = false;  // kServing
  bool serial_sessions = false;   // kServing

  // Set by add_workload_flags: which flags the user gave.
  std::vector<CLI::Option*> source_options;     // --trace and its reading flags
  std::vector<CLI::Option*> generator_options;  // --arrival ... --shared-prefix-*
  std::vector<CLI::Option*> all_options;
};

// Adds the flags to `command`, bound to `flags` (which must outlive parsing).
void add_workload_flags(CLI::App* command, WorkloadFlags& flags, WorkloadFlagScope scope);

// True when the user gave any workload flag (other than those in `except`, e.g.
// "--max-concurrency").
bool any_workload_flag(const WorkloadFlags& flags,
                       const std::vector<std::string_view>& except = {});
// Whether the user gave the workload flag `name` ("--rate").
bool workload_flag_given(const WorkloadFlags& flags, const char* name);

// Options from the flags given, on top of `base` (e.g. a scenario's workload: flags given on
// the command line override it; --trace switches the source to the trace, a generator flag to
// the generator). Throws kvsim::Error naming the flag on a bad value or a contradiction (e.g.
// --trace with --rate), or when neither the flags nor `base_given` define a workload.
// kServing: the caller then sets synthetic.seed from its --seed and, when flags.truncate_prompts,
// transforms.max_model_len from its --max-model-len.
trace::WorkloadOptions workload_options_from_flags(const WorkloadFlags& flags,
                                                   const trace::WorkloadOptions& base = {},
                                                   bool base_given = false);

}  // namespace kvsim::cli
