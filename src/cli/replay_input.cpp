#include "cli/replay_input.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include "cli/flag_parse.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/inference_perf_config.h"
#include "trace/native_writer.h"

namespace kvsim::cli {

void add_replay_flags(CLI::App* command, ReplayFlags& flags) {
  command->add_option("--run-format", flags.run_format,
                      "vllm-benchmark|requests-jsonl|distserve|aiperf|inference-perf (default: "
                      "from the file name)");
  command->add_option("--arrivals", flags.arrivals_path,
                      "vLLM benchmark JSON: the requests' arrival times (one per line, s); "
                      "default: regenerated from the recorded rate and --run-seed");
  command
      ->add_option_function<std::string>(
          "--run-seed",
          [&flags](const std::string& s) {
            flags.run_seed = int_flag("--run-seed", s, "a non-negative integer");
            if (flags.run_seed < 0 || flags.run_seed > 0xffffffffLL) {
              throw flag_error("--run-seed", "expected an integer in [0, 4294967295], got " + s);
            }
          },
          "The benchmark client's --seed, for regenerated arrivals (an inference-perf stage "
          "summary: the seed of its regenerated arrivals and lengths)")
      ->default_str("0");
  command->add_option_function<std::string>(
      "--run-stage",
      [&flags](const std::string& s) {
        flags.run_stage = int_flag("--run-stage", s, "a stage number");
        if (*flags.run_stage < 0) {
          throw flag_error("--run-stage", "expected a stage number >= 0, got " + s);
        }
      },
      "inference-perf per-request report: replay only this load stage's requests (stage_id)");
  command->add_option("--run-arrival", flags.run_arrival,
                      "inference-perf stage summary: how the client spaced its requests, "
                      "constant|poisson (its load.type; default constant, as inference-perf)");
}

namespace {

// The run's format: --run-format, else from the file name; nullopt when neither says.
std::optional<trace::RunFormat> replay_format(const std::string& path, const ReplayFlags& f) {
  return f.run_format.empty() ? trace::detect_run_format(path)
                              : trace::parse_run_format(f.run_format);
}

}  // namespace

trace::RealRun read_replay_run(const std::string& path, const ReplayFlags& f) {
  const std::optional<trace::RunFormat> format = replay_format(path, f);
  if (!format) {
    throw flag_error("--run-format", "expected one of " + join(trace::run_format_names(), "|") +
                                         (f.run_format.empty() ? " (not known from the file name)"
                                                               : ", got '" + f.run_format + "'"));
  }
  if (f.run_stage && *format != trace::RunFormat::kInferencePerf) {
    throw flag_error("--run-stage", "only an inference-perf per-request report has load stages");
  }
  if (!f.run_arrival.empty() && *format != trace::RunFormat::kInferencePerf) {
    throw flag_error("--run-arrival", "only an inference-perf stage summary regenerates arrivals");
  }
  trace::RealRun run;
  switch (*format) {
    case trace::RunFormat::kVllmBenchmark:
      run = trace::read_vllm_benchmark_json(
          path, {f.arrivals_path, static_cast<std::uint32_t>(f.run_seed)});
      break;
    case trace::RunFormat::kRequestsJsonl:
      run = trace::read_requests_jsonl(path);
      break;
    case trace::RunFormat::kDistServe:
      run = trace::read_distserve_exp(path);
      break;
    case trace::RunFormat::kAiperf:
      run = trace::read_aiperf_jsonl(path);
      break;
    case trace::RunFormat::kInferencePerf: {
      trace::InferencePerfOptions options;
      options.stage = f.run_stage;
      options.seed = static_cast<std::uint32_t>(f.run_seed);
      if (!f.run_arrival.empty() && f.run_arrival != "constant" && f.run_arrival != "poisson") {
        throw flag_error("--run-arrival", "expected constant|poisson, got '" + f.run_arrival + "'");
      }
      options.poisson = f.run_arrival == "poisson";
      run = trace::read_inference_perf_json(path, options);
      if (!f.run_arrival.empty() && !run.arrivals_from_rate()) {
        throw flag_error("--run-arrival",
                         "only a rate-driven inference-perf stage summary regenerates arrivals; "
                         "this run " +
                             std::string(run.summary ? "was a closed loop" : "records them"));
      }
      break;
    }
  }
  if (run.requests.empty()) throw Error(ErrorLocation{path, 0, 0, ""}, "no requests");
  if (!f.arrivals_path.empty() && *format != trace::RunFormat::kVllmBenchmark) {
    throw flag_error("--arrivals", "only a vLLM benchmark JSON needs arrivals; this run has them");
  }
  return run;
}

void add_run_config_flag(CLI::App* command, std::string& path) {
  command->add_option("--run-config", path,
                      "inference-perf report: the run's configuration (its results folder's "
                      "config.yaml): load.type gives --run-arrival, num_workers x "
                      "worker_max_concurrency --max-concurrency (a stage summary's regenerated "
                      "arrivals), shared_prefix data --prompt-pool and --shared-prefix-*; flags "
                      "given win");
}

void add_multi_turn_flag(CLI::App* command, bool& on) {
  command->add_flag("--multi-turn-chat", on,
                    "The run's --prompt-pool prompts were conversations (inference-perf's "
                    "enable_multi_turn_chat): request i was the next turn of conversation i mod N, "
                    "its prompt the conversation so far, so the prefix cache holds the previous "
                    "turn's prompt and answer");
}

void add_replay_client_flags(CLI::App* command, ReplayClient& client) {
  add_run_config_flag(command, client.run_config);
  add_multi_turn_flag(command, client.multi_turn_chat);
  const auto count = [command](const char* name, std::optional<std::int64_t>& value,
                               const char* help) {
    command->add_option_function<std::string>(
        name, [name, &value](const std::string& s) { value = int_flag(name, s, "an integer"); },
        help);
  };
  count("--max-concurrency", client.max_concurrency,
        "The run's client kept at most this many requests outstanding (its replay is a closed "
        "loop), where the run does not record it");
  count("--prompt-pool", client.prompt_pool,
        "The run's client sent request i prompt i mod N (aiperf's --num-dataset-entries, "
        "inference-perf's shared_prefix prompts): repeats the prefix cache can hit");
  count("--shared-prefix-prompts", client.shared_prefix_prompts,
        "The run's prompts began with one of K system prompts (prompt j with system prompt j mod "
        "K), each --shared-prefix-tokens long");
  count("--shared-prefix-tokens", client.shared_prefix_tokens,
        "Length of the run's shared system prompts, tokens");
}

namespace {

// What the run's prompts shared: the flags, else the inference-perf configuration's shared_prefix
// data.
ReplayPrompts replay_prompts(const ReplayClient& c,
                             const std::optional<config::InferencePerfClient>& config) {
  ReplayPrompts p;
  if (c.prompt_pool) {
    if (*c.prompt_pool < 1) {
      throw flag_error("--prompt-pool", "expected a positive number of prompts");
    }
    p.pool = *c.prompt_pool;
  }
  if (c.shared_prefix_prompts && !c.shared_prefix_tokens) {
    throw flag_error("--shared-prefix-prompts", "needs --shared-prefix-tokens (their length)");
  }
  if (c.shared_prefix_tokens) {
    if (*c.shared_prefix_tokens < 1) {
      throw flag_error("--shared-prefix-tokens", "expected a positive number of tokens");
    }
    p.groups = c.shared_prefix_prompts.value_or(1);
    if (p.groups < 1) {
      throw flag_error("--shared-prefix-prompts", "expected a positive number of prompts");
    }
    p.shared_tokens = *c.shared_prefix_tokens;
  }
  if (config && config->prompt_groups > 0 && !c.prompt_pool && !c.shared_prefix_tokens) {
    p.pool = config->prompt_groups * config->prompts_per_group;
    p.groups = config->prompt_groups;
    p.shared_tokens = config->system_prompt_tokens;
    p.multi_turn = config->multi_turn;
  }
  if (c.multi_turn_chat) {
    if (p.pool == 0) {
      throw flag_error("--multi-turn-chat",
                       "needs the conversations: --prompt-pool N (or --run-config with "
                       "shared_prefix data)");
    }
    p.multi_turn = true;
  }
  return p;
}

}  // namespace

ReplayInput read_replay_input(const std::string& path, const ReplayFlags& flags,
                              const ReplayClient& client) {
  std::optional<config::InferencePerfClient> config;
  ReplayFlags replay = flags;
  if (!client.run_config.empty()) {
    const std::optional<trace::RunFormat> format = replay_format(path, flags);
    if (format && *format != trace::RunFormat::kInferencePerf) {
      throw flag_error("--run-config",
                       "an inference-perf configuration goes with an inference-perf report; this "
                       "run is " +
                           std::string(trace::run_format_name(*format)));
    }
    config = config::read_inference_perf_config(client.run_config);
    if (replay.run_arrival.empty() && config->load_type == "poisson") {
      replay.run_arrival = "poisson";
    }
  }
  ReplayInput in;
  in.run = read_replay_run(path, replay);
  trace::RealRun& run = in.run;
  const bool regenerated = run.arrivals_from_rate();
  if (config && regenerated && config->load_type != "constant" && config->load_type != "poisson") {
    throw flag_error("--run-config", "load.type " + config->load_type +
                                         ": a stage summary of this load cannot be regenerated "
                                         "from its rate; replay the per-request report");
  }
  // The client's cap on outstanding requests where the run does not record it (inference-perf:
  // num_workers × worker_max_concurrency, from --run-config or --max-concurrency).
  if (client.max_concurrency) {
    if (*client.max_concurrency < 1) {
      throw flag_error("--max-concurrency", "expected the client's cap, a positive integer");
    }
    run.concurrency = *client.max_concurrency;
    run.arrivals +=
        ", at most " + std::to_string(run.concurrency) + " outstanding (--max-concurrency)";
  } else if (config && config->max_outstanding && regenerated) {
    run.concurrency = *config->max_outstanding;
    run.arrivals += ", at most " + std::to_string(run.concurrency) +
                    " outstanding (load.num_workers × load.worker_max_concurrency)";
  }
  in.prompts = replay_prompts(client, config);
  return in;
}

std::string ReplayPrompts::describe() const {
  std::string s;
  if (pool > 0) s = "a pool of " + std::to_string(pool) + " prompt" + (pool == 1 ? "" : "s");
  if (groups > 0) {
    s += (s.empty() ? "" : ", ") + std::to_string(groups) + " shared system prompt" +
         (groups == 1 ? "" : "s") + " of " + std::to_string(shared_tokens) + " tokens";
  }
  if (multi_turn) {
    s += ", each prompt a turn of its conversation, sent once the turn before it has its answer "
         "(multi-turn chat)";
  }
  return s;
}

TempTrace::TempTrace(const trace::RealRun& run, const ReplayPrompts& prompts)
    : concurrency_(run.concurrency), serial_sessions_(prompts.multi_turn) {
  // Several runs may be replayed by one process (calibrate --from-run A --from-run B).
  static std::atomic<int> counter{0};
  path_ = (std::filesystem::temp_directory_path() / ("kvsim-replay-" + std::to_string(::getpid()) +
                                                     "-" + std::to_string(counter++) + ".csv"))
              .string();
  std::FILE* f = std::fopen(path_.c_str(), "w");
  if (f == nullptr) throw Error("cannot create the temporary trace " + path_);
  {
    trace::TraceColumns columns;
    columns.prefix_hashes = true;
    columns.session_id = prompts.multi_turn;
    trace::NativeCsvWriter writer(f, columns, path_);
    std::uint64_t id = 0;
    trace::RequestSpec spec;
    spec.prefix_block_tokens = kReplayHashTokens;
    const std::int64_t shared_blocks =
        prompts.groups > 0 ? prompts.shared_tokens / kReplayHashTokens : 0;
    for (const trace::RealRequest& r : run.requests) {
      spec.id = id++;
      spec.arrival_ns = seconds_to_ns(r.arrival_s);
      spec.prompt_tokens = r.prompt_tokens;
      spec.output_tokens = r.output_tokens;
      spec.prefix_hashes.clear();
      // The prompt's own content (one id per prompt of the pool), behind its group's system
      // prompt (ids with the top bit set, apart from any prompt's).
      const std::uint64_t prompt =
          prompts.pool > 0 ? spec.id % static_cast<std::uint64_t>(prompts.pool) : spec.id;
      const std::uint64_t group =
          prompts.groups > 0 ? prompt % static_cast<std::uint64_t>(prompts.groups) : 0;
      // A conversation's turn (sent once the conversation's previous turn has its answer):
      // its output's blocks too, which begin the next turn's prompt.
      if (prompts.multi_turn) spec.session_id = "conversation " + std::to_string(prompt);
      const std::int64_t content =
          prompts.multi_turn ? r.prompt_tokens + r.output_tokens : r.prompt_tokens;
      for (std::int64_t k = 0; k < content / kReplayHashTokens; ++k) {
        const std::uint64_t block = static_cast<std::uint64_t>(k + 1);
        spec.prefix_hashes.push_back(k < shared_blocks ? (1ULL << 63) | (group << 32) | block
                                                       : ((prompt + 1) << 32) | block);
      }
      writer.write(spec);
    }
    writer.flush();
  }
  if (std::fclose(f) != 0) throw Error("cannot write the temporary trace " + path_);
}

TempTrace::~TempTrace() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

trace::WorkloadOptions TempTrace::workload() const {
  trace::WorkloadOptions workload;
  workload.source = trace::WorkloadOptions::Source::kTrace;
  workload.trace.path = path_;
  workload.trace.format = trace::TraceFormat::kNative;
  workload.trace.prefix_block_tokens = kReplayHashTokens;
  workload.max_concurrency = concurrency_;
  workload.serial_sessions = serial_sessions_;
  return workload;
}

}  // namespace kvsim::cli
