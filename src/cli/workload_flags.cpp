#include "cli/workload_flags.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "common/strings.h"
#include "trace/field_parse.h"

namespace kvsim::cli {
namespace {

bool given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

// The flag behind each option name validate_workload reports.
const std::map<std::string, std::string>& flag_for_field() {
  static const std::map<std::string, std::string> kFlags = {
      {"trace", "--trace"},
      {"trace.prefix_block_tokens", "--prefix-block-tokens"},
      {"synthetic.rate", "--rate"},
      {"synthetic.cv", "--cv"},
      {"synthetic.arrival_trace", "--arrival-trace"},
      {"synthetic.arrival_trace.prefix_block_tokens", "--prefix-block-tokens"},
      {"synthetic.lengths_from.prefix_block_tokens", "--prefix-block-tokens"},
      {"synthetic.num_requests", "--num-requests"},
      {"synthetic.duration_s", "--duration"},
      {"synthetic.prompt_tokens", "--prompt-len"},
      {"synthetic.output_tokens", "--output-len"},
      {"synthetic.shared_prefix.fraction", "--shared-prefix-fraction"},
      {"synthetic.shared_prefix.num_prompts", "--shared-prefix-prompts"},
      {"synthetic.shared_prefix.prompt_tokens", "--shared-prefix-tokens"},
      {"synthetic.shared_prefix.block_tokens", "--prefix-block-tokens"},
      {"synthetic.prompt_pool", "--prompt-pool"},
      {"rate_scale", "--rate-scale"},
      {"max_requests", "--max-requests"},
      {"max_concurrency", "--max-concurrency"},
      {"serial_sessions", "--serial-sessions"},
      {"time_window", "--time-window"},
      {"max_model_len", "--max-model-len"},
  };
  return kFlags;
}

trace::ArrivalProcess parse_arrival(const std::string& name) {
  const std::vector<std::string> names = {"poisson", "gamma", "constant", "replay"};
  const std::string lower = to_lower(trim(name));
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (lower == names[i]) return static_cast<trace::ArrivalProcess>(i);
  }
  throw Error(
      ErrorLocation{"", 0, 0, "--arrival"},
      "expected poisson|gamma|constant|replay, got '" + name + "'" + did_you_mean(name, names));
}

// "[START:]END" or "START:" in seconds → [start, end) in ns.
void parse_time_window(const std::string& text, trace::TransformOptions& t) {
  const ErrorLocation where{"", 0, 0, "--time-window"};
  const auto seconds = [&](std::string_view part, TimeNs& out) {
    if (trace::parse_decimal_ns(part, kNsPerSecond, out) != trace::ParseStatus::kOk) {
      throw Error(where, "expected [START:]END in seconds (e.g. 600 or 300:900 or 300:), got '" +
                             text + "'");
    }
  };
  const auto colon = text.find(':');
  t.window_start_ns = 0;
  t.window_end_ns = kTimeNever;
  if (colon == std::string::npos) {
    seconds(text, t.window_end_ns);
  } else {
    const std::string_view start = trim(std::string_view(text).substr(0, colon));
    const std::string_view end = trim(std::string_view(text).substr(colon + 1));
    if (!start.empty()) seconds(start, t.window_start_ns);
    if (!end.empty()) seconds(end, t.window_end_ns);
    if (start.empty() && end.empty()) seconds("", t.window_end_ns);
  }
  if (t.window_end_ns <= t.window_start_ns) {
    throw Error(where, "expected START < END, got '" + text + "'");
  }
}

}  // namespace

void add_workload_flags(CLI::App* command, WorkloadFlags& f, WorkloadFlagScope scope) {
  f.scope = scope;
  const auto source = [&](CLI::Option* o) {
    f.source_options.push_back(o);
    f.all_options.push_back(o);
    o->group("Workload: trace");
  };
  const auto generator = [&](CLI::Option* o) {
    f.generator_options.push_back(o);
    f.all_options.push_back(o);
    o->group("Workload: synthetic generator");
  };
  const auto transform = [&](CLI::Option* o) {
    f.all_options.push_back(o);
    o->group("Workload: transforms");
  };
  source(command->add_option("--trace", f.trace,
                             "Trace file to replay (native CSV, Azure CSV, Mooncake JSONL, "
                             "BurstGPT CSV, Vidur CSV)"));
  source(command->add_option("--trace-format", f.trace_format,
                             "auto|native|azure|mooncake|burstgpt|vidur (default: auto, from the "
                             "header); applies to every trace file given"));
  source(command->add_flag("--skip-bad-rows", f.skip_bad_rows,
                           "Skip and count malformed rows instead of failing on the first"));
  source(command->add_option("--prefix-block-tokens", f.prefix_block_tokens,
                             "Tokens per prefix hash: native CSV prefix_hashes and synthetic "
                             "shared prefixes (default 512, as Mooncake)"));
  generator(command->add_option(
      "--arrival", f.arrival, "Arrival process: poisson|gamma|constant|replay (default poisson)"));
  generator(command->add_option("--rate", f.rate,
                                "Mean arrival rate, requests/s (default with --lengths-from: "
                                "that trace's rate)"));
  generator(command->add_option(
      "--cv", f.cv, "Gamma arrivals: coefficient of variation of the gaps (>1 bursty)"));
  generator(command->add_option("--arrival-trace", f.arrival_trace,
                                "Replay arrivals: take timestamps from this trace"));
  generator(
      command->add_option("--num-requests", f.num_requests, "Number of requests to generate"));
  generator(command->add_option("--duration", f.duration, "Generate arrivals in [0, S) seconds"));
  generator(command->add_option("--prompt-len", f.prompt_len,
                                "Prompt lengths: N | uniform:MIN:MAX | normal:MEAN:STD[:MIN:MAX] | "
                                "lognormal:MEAN:STD[:MIN:MAX] | zipf:S:MIN:MAX | empirical"));
  generator(command->add_option("--output-len", f.output_len, "Output lengths (as --prompt-len)"));
  generator(command->add_option("--lengths-from", f.lengths_from,
                                "Trace whose length histograms 'empirical' resamples (prompt "
                                "and output independently); also the default rate and count"));
  generator(command->add_option("--shared-prefix-fraction", f.shared_prefix_fraction,
                                "Fraction of requests that start with a shared system prompt"));
  generator(command->add_option("--shared-prefix-prompts", f.shared_prefix_prompts,
                                "Number K of distinct system prompts (default 1)"));
  generator(command->add_option("--shared-prefix-tokens", f.shared_prefix_tokens,
                                "Tokens P per system prompt, prepended to the sampled prompt"));
  generator(command->add_option(
      "--prompt-pool", f.prompt_pool,
      "Requests take their prompt and output length from a pool of N drawn once, uniformly at "
      "random, as aiperf (--num-dataset-entries, 100 by default) and genai-perf (--num-prompts) "
      "do: repeats can hit the prefix cache. 0 = every prompt new (default)"));
  transform(command->add_option("--rate-scale", f.rate_scale,
                                "Multiply the request rate (divide every gap) by X"));
  transform(
      command->add_option("--max-requests", f.max_requests, "Keep only the first N requests"));
  transform(command->add_option("--time-window", f.time_window,
                                "Keep arrivals in [START, END) seconds of the source's timeline: "
                                "END, START:END or START:"));
  if (scope == WorkloadFlagScope::kTraceTool) {
    generator(command->add_option("--seed", f.seed, "Generator seed (default 0)"));
    transform(command->add_option("--max-model-len", f.max_model_len,
                                  "Cut prompts so that prompt + output <= L tokens (counted)"));
  } else {
    transform(command->add_flag("--truncate-prompts", f.truncate_prompts,
                                "Cut prompts to fit --max-model-len (prompt + output), counted, "
                                "instead of rejecting them"));
    transform(command->add_option(
        "--max-concurrency", f.max_concurrency,
        "Closed loop, as vllm bench serve --max-concurrency: at most N requests outstanding, the "
        "next sent when one ends (without --rate: all ready at time 0); default 0 = open loop"));
    transform(command->add_flag(
        "--serial-sessions", f.serial_sessions,
        "A request with a session id (the trace's session_id) is sent when its session's "
        "previous request has ended, or at its own time if later, as a chat client sends a "
        "conversation's next turn once it has the answer; TTFT counts from that send"));
  }
}

bool any_workload_flag(const WorkloadFlags& flags, const std::vector<std::string_view>& except) {
  for (const auto* o : flags.all_options) {
    if (!given(o)) continue;
    const bool excepted = std::any_of(except.begin(), except.end(), [&](std::string_view name) {
      return o->check_lname(std::string(name.substr(2)));
    });
    if (!excepted) return true;
  }
  return false;
}

bool workload_flag_given(const WorkloadFlags& f, const char* name) {
  for (const auto* o : f.all_options) {
    if (o->check_lname(std::string(name).substr(2))) return given(o);
  }
  return false;
}

namespace {

// The reading flags (--trace-format, --skip-bad-rows, --prefix-block-tokens) apply to every
// trace file involved.
void apply_file_flags(const WorkloadFlags& f, trace::WorkloadOptions& o) {
  const auto is_given = [&](const char* name) { return workload_flag_given(f, name); };
  trace::SyntheticOptions& s = o.synthetic;
  std::vector<trace::TraceFileOptions*> files = {&o.trace, &s.arrival_trace, &s.lengths_from};
  if (is_given("--trace-format")) {
    const auto format = trace::parse_trace_format(f.trace_format, {"", 0, 0, "--trace-format"});
    for (auto* file : files) file->format = format;
  }
  if (is_given("--skip-bad-rows")) {
    for (auto* file : files) file->skip_bad_rows = f.skip_bad_rows;
  }
  if (is_given("--prefix-block-tokens")) {
    for (auto* file : files) file->prefix_block_tokens = f.prefix_block_tokens;
    s.shared_prefix.block_tokens = f.prefix_block_tokens;
  }
}

void apply_generator_flags(const WorkloadFlags& f, trace::SyntheticOptions& s) {
  const auto is_given = [&](const char* name) { return workload_flag_given(f, name); };
  if (is_given("--arrival")) s.arrival = parse_arrival(f.arrival);
  if (is_given("--rate")) s.rate_rps = f.rate;
  if (is_given("--cv")) s.cv = f.cv;
  if (is_given("--arrival-trace")) s.arrival_trace.path = f.arrival_trace;
  if (is_given("--num-requests")) s.num_requests = f.num_requests;
  if (is_given("--duration")) s.duration_s = f.duration;
  if (is_given("--prompt-len")) {
    s.prompt = trace::parse_length_dist(f.prompt_len, {"", 0, 0, "--prompt-len"});
  }
  if (is_given("--output-len")) {
    s.output = trace::parse_length_dist(f.output_len, {"", 0, 0, "--output-len"});
  }
  if (is_given("--lengths-from")) s.lengths_from.path = f.lengths_from;
  if (is_given("--shared-prefix-fraction")) s.shared_prefix.fraction = f.shared_prefix_fraction;
  if (is_given("--shared-prefix-prompts")) s.shared_prefix.num_prompts = f.shared_prefix_prompts;
  if (is_given("--shared-prefix-tokens")) s.shared_prefix.prompt_tokens = f.shared_prefix_tokens;
  if (is_given("--prompt-pool")) s.prompt_pool = f.prompt_pool;
  if (is_given("--seed")) s.seed = f.seed;
}

void apply_transform_flags(const WorkloadFlags& f, trace::TransformOptions& t) {
  const auto is_given = [&](const char* name) { return workload_flag_given(f, name); };
  if (is_given("--rate-scale")) t.rate_scale = f.rate_scale;
  if (is_given("--max-requests")) t.max_requests = f.max_requests;
  if (is_given("--time-window")) parse_time_window(f.time_window, t);
  if (is_given("--max-model-len")) t.max_model_len = f.max_model_len;
}

// Validates now so that errors name the flag.
void validate_as_flags(const trace::WorkloadOptions& o) {
  trace::WorkloadOptions check = o;
  trace::apply_workload_defaults(check);
  try {
    trace::validate_workload(check);
  } catch (const Error& e) {
    const auto& flags = flag_for_field();
    const auto it = flags.find(e.location().field);
    if (it == flags.end()) throw;
    throw Error(ErrorLocation{"", 0, 0, it->second}, e.message());
  }
}

}  // namespace

trace::WorkloadOptions workload_options_from_flags(const WorkloadFlags& f,
                                                   const trace::WorkloadOptions& base,
                                                   bool base_given) {
  // --seed alone does not ask for a generator.
  bool generator_given = false;
  for (const auto* o : f.generator_options) {
    if (given(o) && !o->check_lname("seed")) generator_given = true;
  }
  const bool trace_given = workload_flag_given(f, "--trace");
  if (trace_given && generator_given) {
    throw Error(ErrorLocation{"", 0, 0, "--trace"},
                "expected either --trace FILE or generator flags (--rate, --prompt-len, ...), got "
                "both; to resample a trace's lengths or replay its arrivals use --lengths-from "
                "FILE or --arrival-trace FILE");
  }
  if (!trace_given && !generator_given && !base_given) {
    throw Error(ErrorLocation{"", 0, 0, "--trace"},
                "expected a workload: --trace FILE, or a generator such as --rate 5 "
                "--num-requests 1000 --prompt-len 512 --output-len 128");
  }

  trace::WorkloadOptions o = base;
  if (trace_given) {
    o.source = trace::WorkloadOptions::Source::kTrace;
    o.trace.path = f.trace;
  } else if (generator_given && o.source != trace::WorkloadOptions::Source::kSynthetic) {
    o.source = trace::WorkloadOptions::Source::kSynthetic;
    o.synthetic = trace::SyntheticOptions{};
  }
  apply_file_flags(f, o);
  apply_generator_flags(f, o.synthetic);
  apply_transform_flags(f, o.transforms);
  if (workload_flag_given(f, "--max-concurrency")) o.max_concurrency = f.max_concurrency;
  if (workload_flag_given(f, "--serial-sessions")) o.serial_sessions = f.serial_sessions;
  validate_as_flags(o);
  return o;
}

}  // namespace kvsim::cli
