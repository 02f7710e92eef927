#pragma once
// The parts of an inference-perf run's configuration that a replay of its reports needs (kvsim
// validate --run-config): the results folder's config.yaml (inference-perf dumps its whole
// configuration there) or the file the run was started with. Only these keys are read; the rest
// of the file is left alone (it is inference-perf's, not kvsim's).
//
//   load.type                                  constant (inference-perf's default) | poisson |
//                                              concurrent | trace_replay | ...
//   load.num_workers × load.worker_max_concurrency
//                                              the client's cap on outstanding requests, when
//                                              both are given (a dumped config has both)
//   data.type: shared_prefix, data.shared_prefix: num_unique_system_prompts (or num_groups),
//     num_users_per_system_prompt (or num_prompts_per_group), system_prompt_len (tokens, or a
//     distribution whose mean is taken), enable_multi_turn_chat
//                                              the prompts: groups × users of them, each group's
//                                              behind one system prompt

#include <cstdint>
#include <optional>
#include <string>

namespace kvsim::config {

struct InferencePerfClient {
  std::string load_type = "constant";
  std::optional<std::int64_t> max_outstanding;  // num_workers × worker_max_concurrency
  // data.type shared_prefix (0 otherwise).
  std::int64_t prompt_groups = 0;
  std::int64_t prompts_per_group = 0;
  std::int64_t system_prompt_tokens = 0;
  bool system_prompt_len_is_mean = false;  // a distribution's mean, not a fixed length
  bool multi_turn = false;                 // conversations (cli::ReplayPrompts::multi_turn)
};

// Throws kvsim::Error (file, line, column, field) on a value of the wrong kind.
InferencePerfClient read_inference_perf_config(const std::string& path);

}  // namespace kvsim::config
