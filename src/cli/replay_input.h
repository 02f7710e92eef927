#pragma once
// A real engine's run as the input of a replay (`kvsim validate --run`, `kvsim calibrate
// --from-run`): the flags that say how to read it, the reader, and the run's requests as a
// temporary native trace the simulator streams.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "trace/replay_run.h"
#include "trace/workload.h"

namespace kvsim::cli {

// --run-format, --arrivals, --run-seed, --run-stage, --run-arrival.
struct ReplayFlags {
  std::string run_format;                 // --run-format; empty = from the file name
  std::string arrivals_path;              // --arrivals FILE (vLLM benchmark JSON)
  std::int64_t run_seed = 0;              // --run-seed: the benchmark client's --seed
  std::optional<std::int64_t> run_stage;  // --run-stage K (inference-perf per-request report)
  std::string run_arrival;                // --run-arrival constant|poisson (inference-perf stage)
};

void add_replay_flags(CLI::App* command, ReplayFlags& flags);

// Reads the run at `path` in its format (--run-format, else from the file name). Throws
// kvsim::Error at the flag or in the file: an unknown format, no requests, --arrivals for a run
// that records its arrivals, --run-stage or --run-arrival for a run they do not apply to.
trace::RealRun read_replay_run(const std::string& path, const ReplayFlags& flags);

// Prefix-hash granularity of the replayed prompts: vLLM's default block size.
inline constexpr std::int64_t kReplayHashTokens = 16;

// What the real run's prompts had in common, which a run's token counts do not record (kvsim
// validate --prompt-pool, --shared-prefix-prompts, --shared-prefix-tokens): request i sends
// prompt i mod `pool` (0: every prompt new), whose first `shared_tokens` tokens are the system
// prompt of group (prompt mod `groups`), as inference-perf's shared_prefix data
// (num_unique_system_prompts × num_users_per_system_prompt prompts) and aiperf's dataset
// entries make them.
struct ReplayPrompts {
  std::int64_t pool = 0;
  std::int64_t groups = 0;  // 0: no shared system prompts
  std::int64_t shared_tokens = 0;
  // The pool's prompts are conversations (inference-perf's enable_multi_turn_chat): request i is
  // the next turn of conversation i mod `pool`, whose prompt is that conversation so far (its
  // earlier prompts and answers, then a new question), so it begins with the previous turn's
  // prompt and output.
  bool multi_turn = false;
  std::string describe() const;  // "" when nothing is shared
};

// What the real run's client did that its report may not record: its configuration
// (--run-config FILE, inference-perf's), its cap on outstanding requests (--max-concurrency) and
// what its prompts shared (--prompt-pool, --shared-prefix-prompts, --shared-prefix-tokens).
// Unset = not given.
struct ReplayClient {
  std::string run_config;
  std::optional<std::int64_t> max_concurrency;
  std::optional<std::int64_t> prompt_pool;
  std::optional<std::int64_t> shared_prefix_prompts;
  std::optional<std::int64_t> shared_prefix_tokens;
  bool multi_turn_chat = false;  // --multi-turn-chat
};

// Registers --run-config FILE into `path`.
void add_run_config_flag(CLI::App* command, std::string& path);
// Registers --multi-turn-chat into `on`.
void add_multi_turn_flag(CLI::App* command, bool& on);

// Registers the ReplayClient flags (kvsim calibrate --from-run; kvsim validate takes all but
// --run-config among its workload flags).
void add_replay_client_flags(CLI::App* command, ReplayClient& client);

// The real run, with what its client did applied: the cap makes its replay a closed loop (the
// run's `concurrency`, said in its `arrivals`), and `prompts` what they shared. Flags given win
// over the configuration's values. Throws kvsim::Error at the flag or in the file, as
// read_replay_run, and for a value out of range, --shared-prefix-prompts without its length, or
// --run-config with a run that is not inference-perf's or a stage summary whose load cannot be
// regenerated from its rate.
struct ReplayInput {
  trace::RealRun run;
  ReplayPrompts prompts;
};
ReplayInput read_replay_input(const std::string& path, const ReplayFlags& flags,
                              const ReplayClient& client);

// The real run as a native trace in a temporary file (removed when this goes away); request i
// of the run gets id i. Each prompt gets content ids of its own (one per kReplayHashTokens
// tokens), unless `prompts` says what they shared: the prompts are distinct texts, and a warm
// prefix cache (--warm-prefix-cache) holds exactly them. A conversation's ids go by position in
// it, and a turn's go on over its output, so the next turn's prompt finds this turn's prompt and
// answer cached; each turn names its conversation (session_id), and the workload sends a turn
// only once the turn before it has ended (serial sessions), as the chat client does.
class TempTrace {
 public:
  explicit TempTrace(const trace::RealRun& run, const ReplayPrompts& prompts = {});
  ~TempTrace();
  TempTrace(const TempTrace&) = delete;
  TempTrace& operator=(const TempTrace&) = delete;
  const std::string& path() const { return path_; }
  // The workload that streams this trace (in a closed loop when the run was one).
  trace::WorkloadOptions workload() const;

 private:
  std::string path_;
  std::int64_t concurrency_ = 0;
  bool serial_sessions_ = false;  // multi-turn chat: a conversation's turns wait for each other
};

}  // namespace kvsim::cli
