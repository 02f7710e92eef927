#pragma once
// What a user asks for as traffic — a trace file, or a seeded synthetic generator — plus the
// transforms applied on top (rate scale, window, request cap, prompt truncation), and the one
// entry point the simulator and planner use to get a stream of requests from it.
//
//   trace::WorkloadOptions w;                 // cli/workload_flags.h or config/workload_yaml.h
//   fill it trace::Workload workload(w);              // validates, reads what must be read once
//   auto reader = workload.open();            // a fresh deterministic stream; call as often as
//   needed for (trace::RequestSpec r; reader->next(r);) { ... }
//
// Transforms apply in this order: time window (in the source's timeline, then rebased so the
// first kept request arrives at 0) → rate scale → prompt truncation → request cap. Request ids
// are renumbered 0, 1, 2, ... after them.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/units.h"
#include "trace/request.h"
#include "trace/trace_format.h"

namespace kvsim::trace {

// Mooncake's block size, and the default for native CSV prefix hashes and synthetic prefixes.
inline constexpr std::int64_t kDefaultPrefixBlockTokens = 512;

// One trace file and how to read it.
struct TraceFileOptions {
  std::string path;                         // empty = no file
  TraceFormat format = TraceFormat::kAuto;  // kAuto: detected from the header / extension
  bool skip_bad_rows = false;               // true: malformed rows are counted and skipped
  // Tokens per prefix hash in a native CSV's prefix_hashes column (Mooncake is always 512).
  std::int64_t prefix_block_tokens = kDefaultPrefixBlockTokens;
};

enum class ArrivalProcess {
  kPoisson,   // exponential gaps at rate_rps (CV 1)
  kGamma,     // gamma gaps at rate_rps with coefficient of variation cv (cv > 1: bursty)
  kConstant,  // request i at exactly i / rate_rps
  kReplay,    // the timestamps of a trace (arrival_trace, else lengths_from)
};
std::string_view arrival_process_name(ArrivalProcess process);  // "poisson", ...

enum class LengthKind {
  kFixed,      // always `value`
  kUniform,    // integer uniform on [min, max]
  kNormal,     // round(N(mean, stddev²)) clamped to [min, max]
  kLognormal,  // round(lognormal with this mean and stddev) clamped to [min, max]
  kZipf,       // P(k) ∝ (k − min + 1)^(−zipf_exponent) on [min, max]
  kEmpirical,  // resampled from the lengths_from trace's histogram (prompt and output
               // independently)
};

// A token-length distribution. Samples are integers >= 1.
struct LengthDist {
  LengthKind kind = LengthKind::kFixed;
  std::int64_t value = 0;  // kFixed
  std::int64_t min = 1;    // lower bound (uniform, zipf) or clamp (normal, lognormal)
  std::int64_t max = 0;    // upper bound (uniform, zipf) or clamp; 0 = no clamp (normal, lognormal)
  double mean = 0.0;       // normal, lognormal: mean before clamping
  double stddev = 0.0;     // normal, lognormal: standard deviation before clamping
  double zipf_exponent = 1.0;  // kZipf: s > 0
};

// Parses the command-line form: "N" or "fixed:N", "uniform:MIN:MAX", "normal:MEAN:STD[:MIN:MAX]",
// "lognormal:MEAN:STD[:MIN:MAX]", "zipf:S:MIN:MAX", "empirical". Throws kvsim::Error at `where`.
LengthDist parse_length_dist(std::string_view spec, const ErrorLocation& where);
// The canonical command-line form of `dist` (parse_length_dist(to_spec(d)) == d).
std::string to_spec(const LengthDist& dist);
// Throws kvsim::Error at `where` when the parameters are out of range (e.g. min > max).
void validate_length_dist(const LengthDist& dist, const ErrorLocation& where);

// A fraction of requests start with one of K system prompts of P tokens (chosen uniformly),
// prepended to their sampled prompt. Every synthetic request then carries prefix hashes, one
// per `block_tokens` block; blocks wholly inside a system prompt share ids across requests.
struct SharedPrefixOptions {
  double fraction = 0.0;                                  // 0 = off; in [0, 1]
  std::int64_t num_prompts = 1;                           // K >= 1
  std::int64_t prompt_tokens = 0;                         // P >= 1 when fraction > 0
  std::int64_t block_tokens = kDefaultPrefixBlockTokens;  // tokens per prefix hash
};

struct SyntheticOptions {
  ArrivalProcess arrival = ArrivalProcess::kPoisson;
  // Mean arrival rate (requests/s). 0 = the lengths_from trace's mean rate (an error without it).
  double rate_rps = 0.0;
  double cv = 1.0;                 // kGamma only: CV of the gaps, > 0
  TraceFileOptions arrival_trace;  // kReplay: timestamps from here (empty path = lengths_from)
  // Stop after this many requests (0 = no cap) and/or at this arrival time (0 = none). Without
  // either, a generator uses the lengths_from trace's request count; kReplay ends with its trace.
  std::int64_t num_requests = 0;
  double duration_s = 0.0;
  LengthDist prompt;  // required unless empirical
  LengthDist output;
  TraceFileOptions lengths_from;  // source of kEmpirical histograms and of the default rate
  SharedPrefixOptions shared_prefix;
  // > 0: every request takes its prompt (and output length) from a pool of this many drawn once,
  // picking an entry uniformly at random, as aiperf's synthetic client does with its
  // --num-dataset-entries (100 unless set) and genai-perf with --num-prompts. A repeated entry
  // carries the same prefix hashes (one per shared_prefix.block_tokens tokens), so a prefix cache
  // serves it while its blocks stay. 0 = every request a new prompt. Not with shared_prefix.
  std::int64_t prompt_pool = 0;
  std::uint64_t seed = 0;  // same options and seed → identical stream
};

struct TransformOptions {
  double rate_scale = 1.0;        // > 0: gaps divided by it (2 = twice the request rate)
  std::int64_t max_requests = 0;  // > 0: keep only the first N requests
  // Keep arrivals in [window_start_ns, window_end_ns) of the source's own timeline (before
  // scaling), then shift so the first kept request arrives at 0.
  TimeNs window_start_ns = 0;
  TimeNs window_end_ns = kTimeNever;
  // > 0: when prompt + output exceeds it, the prompt is cut to max_model_len − output (Vidur's
  // rule); when that leaves < 1 token, the prompt becomes 1 and the output max_model_len − 1.
  // Prefix hashes are cut to the prompt's blocks. Each changed request counts in
  // ReaderStats::truncated_prompts.
  std::int64_t max_model_len = 0;
};

struct WorkloadOptions {
  enum class Source { kTrace, kSynthetic };
  Source source = Source::kTrace;
  TraceFileOptions trace;       // Source::kTrace
  SyntheticOptions synthetic;   // Source::kSynthetic
  TransformOptions transforms;  // both
  // Closed loop (vllm bench serve --max-concurrency): at most this many requests outstanding; a
  // request due while all are busy is sent when one ends, and its arrival (the time TTFT counts
  // from) is that send time. 0 = open loop. With it, a generator without a rate has every request
  // ready at time 0 (the client's default --request-rate inf), so the concurrency alone sets the
  // load. The simulator applies it (sim::SimOptions::max_concurrency); the stream is unchanged.
  std::int64_t max_concurrency = 0;
  // Serial sessions (a chat client's conversations): a request with a session id is sent when
  // the session's previous request has ended, or at its own time if later (inference-perf's
  // multi-turn chat; vLLM's multi-turn benchmark). Its arrival (the time TTFT counts from) is
  // that send time. With max_concurrency, a request waiting for its session holds a client. The
  // simulator applies it (sim::SimOptions::serial_sessions); the stream is unchanged.
  bool serial_sessions = false;
};

// Fills the defaults that need no file access: with synthetic.lengths_from set, an unset
// (fixed 0) prompt/output distribution becomes kEmpirical; kReplay without arrival_trace replays
// lengths_from. Workload's constructor calls it before validate_workload.
void apply_workload_defaults(WorkloadOptions& options);

// Throws kvsim::Error (field = the option's YAML name, message naming the flag) when options
// contradict each other or are out of range. Workload's constructor calls it.
void validate_workload(const WorkloadOptions& options);

struct EmpiricalLengths;  // histograms of a trace's lengths (workload.cpp)

// A validated, resolved workload. Construction reads the lengths_from trace once (its length
// histograms: memory bounded by its distinct lengths, not its rows). open() may be called any
// number of times, from several threads at once; each call starts a fresh, identical stream.
class Workload {
 public:
  // Throws kvsim::Error on bad options or an unreadable / malformed lengths_from trace.
  explicit Workload(WorkloadOptions options);
  ~Workload();
  Workload(const Workload&);
  Workload& operator=(const Workload&);

  // A fresh reader positioned at the first request, its arrivals `rate_factor` × faster than the
  // options say (on top of transforms.rate_scale). Trace files are opened here; a missing file
  // throws kvsim::Error.
  std::unique_ptr<TraceReader> open(double rate_factor = 1.0) const;

  // The options with defaults resolved (rate and request count taken from lengths_from, replay
  // source filled in): what a report's inputs.workload should show.
  const WorkloadOptions& resolved() const { return resolved_; }

 private:
  WorkloadOptions resolved_;
  std::shared_ptr<const EmpiricalLengths> lengths_;
};

// Workload(options).open(): convenient when the workload is opened once.
std::unique_ptr<TraceReader> open_workload(const WorkloadOptions& options);

// Opens one trace file for streaming (format detected when kAuto). Throws kvsim::Error when the
// file cannot be opened or its format cannot be detected; bad rows throw from next().
std::unique_ptr<TraceReader> open_trace_file(const TraceFileOptions& file);

}  // namespace kvsim::trace
