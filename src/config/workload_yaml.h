#pragma once
// The `workload:` section of a scenario YAML → trace::WorkloadOptions.
//
//   workload:
//     trace: traces/sharegpt_like.csv      # or {path: ..., format: azure, skip_bad_rows: true,
//                                          #     prefix_block_tokens: 512}
//     # ... or a synthetic generator instead of `trace`:
//     synthetic:
//       arrival: gamma                     # poisson | gamma | constant | replay
//       rate: 4.0                          # requests/s (omit with lengths_from: its mean rate)
//       cv: 3.0                            # gamma only
//       arrival_trace: some.csv            # replay: timestamps source (default lengths_from)
//       num_requests: 2000                 # and/or duration_s: 600
//       prompt_tokens: "lognormal:161.31:200:1:2048"   # spec string, integer, or a map:
//       output_tokens: {dist: zipf, exponent: 1.1, min: 1, max: 1024}
//       lengths_from: other.csv            # for `empirical` lengths (path or map as for trace)
//       shared_prefix: {fraction: 0.5, num_prompts: 4, prompt_tokens: 1024, block_tokens: 512}
//       seed: 7                            # default 0; callers may override with their --seed
//     rate_scale: 2.0
//     max_requests: 1000
//     time_window: {start_s: 0, end_s: 600}
//     max_model_len: 4096                  # truncate prompts (Vidur's rule)
//
// Trace paths are resolved relative to `base_dir` (the scenario file's folder) unless absolute.
// Length maps take `dist` (fixed|uniform|normal|lognormal|zipf|empirical) and the fields that
// distribution uses: value, min, max, mean, std, exponent.

#include <string>

#include "config/yaml_reader.h"
#include "trace/workload.h"

namespace kvsim::config {

// Reads the section (and calls finish() on it). Bad or contradictory values throw kvsim::Error
// located in the file at the offending key.
trace::WorkloadOptions parse_workload(MapReader& section, const std::string& base_dir);

}  // namespace kvsim::config
