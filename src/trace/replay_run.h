#pragma once
// A real engine's benchmark run, read for `kvsim validate`: per request its arrival, lengths and
// the latencies the client measured. Five readers:
//
//   vLLM benchmark_serving --save-result JSON: input_lens[], output_lens[], ttfts[] (s), itls[][]
//     (every inter-token gap, s), errors[], request_rate, burstiness, duration, completed,
//     max_concurrency (the client's cap on outstanding requests, a closed loop when set). The
//     file has no arrival times: they come from an arrivals file (one arrival_s per line, or the
//     native trace CSV's first column) or are regenerated the way the client drew them —
//     numpy's legacy RandomState(seed) gamma(burstiness, 1 / (rate × burstiness)) gaps between
//     consecutive requests (vllm_client_arrivals). Failed requests (a non-empty error) are
//     dropped from the real metrics but still arrive.
//   LLMServingSim-style requests.jsonl: one object per request with an arrival time and token
//     counts, and optionally first-token and end times (see read_requests_jsonl).
//   DistServe .exp: one Python literal, a list of dicts with prompt_len, output_len, issue_time,
//     first_token_time, complete_time (client clock, s), ttft_ms, tpot_ms, latency_ms. Parsed
//     here (numbers, strings, None/True/False, nested lists and dicts); arrivals are
//     issue_time − min(issue_time), requests sorted by arrival. A summary block after the list
//     ("{ num_requests: 100 ... test_duration_ms: 115547.6 }", as DistServe's client writes it)
//     is read for the run's duration.
//   aiperf profile_export.jsonl (NVIDIA AIPerf, genai-perf's successor): one record per request,
//     {"metadata": {request_start_ns, benchmark_phase, was_cancelled, ...}, "metrics":
//     {input_sequence_length, output_sequence_length, time_to_first_token, request_latency,
//     inter_chunk_latency: each {"value", "unit"}}, "error"} (see read_aiperf_jsonl).
//   inference-perf (kubernetes-sigs/inference-perf, llm-d's and BLIS's benchmark) lifecycle
//     reports: per_request_lifecycle_metrics.json (every request's send and end times and its
//     token times), or a stage_N_lifecycle_metrics.json summary of one load stage, replayed from
//     its rate and length percentiles (see read_inference_perf_json).
//
// Bad input throws kvsim::Error with file, line, column and field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::trace {

enum class RunFormat { kVllmBenchmark, kRequestsJsonl, kDistServe, kAiperf, kInferencePerf };

// "vllm-benchmark", "requests-jsonl", "distserve", "aiperf", "inference-perf"; parse returns
// nullopt for other names.
std::string_view run_format_name(RunFormat format);
std::optional<RunFormat> parse_run_format(std::string_view name);
std::vector<std::string> run_format_names();
// From the file name: *.exp → distserve, *profile_export.jsonl → aiperf, *.jsonl →
// requests-jsonl, *lifecycle_metrics.json → inference-perf, *.json → vllm-benchmark.
std::optional<RunFormat> detect_run_format(const std::string& path);

// One measured request. Latencies are seconds; a negative value means "not recorded".
struct RealRequest {
  double arrival_s = 0;  // from the first request
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  bool failed = false;  // the client recorded an error: not in the real metrics
  double ttft_s = -1;
  double e2e_s = -1;
  // TPOT as the source defines it, (e2e − ttft) / (output − 1); negative when output is 1.
  double tpot_s = -1;
  std::vector<double> itl_s;  // every inter-token gap, when recorded
};

// Latency statistics (seconds): what a run that reports only a summary gives, and what kvsim
// validate compares.
struct RealStats {
  std::int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

// A run known only by its summary (an inference-perf stage report): the client's statistics.
struct RealSummary {
  std::optional<RealStats> ttft, tpot, itl, e2e;  // absent: not reported (a non-streamed run)
  std::int64_t completed = 0;                     // successful requests
  double requests_per_s = 0, output_tokens_per_s = 0;
};

struct RealRun {
  RunFormat format = RunFormat::kVllmBenchmark;
  // In arrival order. For a summary-only run (`summary` set) the arrivals and lengths are
  // regenerated (see `arrivals`) and no request carries a latency.
  std::vector<RealRequest> requests;
  // How the arrivals were obtained: "recorded", "file <path>", or "regenerated: ..." (with the
  // rate and seed).
  std::string arrivals;
  std::optional<double> request_rate;  // req/s the client aimed at (vLLM JSON, .exp file name)
  double duration_s = 0;               // the client's benchmark duration, or the span of records
  std::optional<RealSummary> summary;  // the real metrics, when the run gives no per-request ones
  // Closed loop: the client kept this many requests outstanding (all arrive at 0 and each is
  // sent when one ends); 0 = the arrivals are the send times.
  std::int64_t concurrency = 0;
  // The arrivals were drawn from the run's rate (a rate-driven stage summary): not recorded, and
  // not a closed loop of the client's.
  bool arrivals_from_rate() const { return summary.has_value() && concurrency == 0; }
};

struct VllmBenchmarkOptions {
  std::string arrivals_path;  // empty: regenerate from request_rate and seed
  std::uint32_t seed = 0;     // benchmark_serving --seed (its default is 0)
};

RealRun read_vllm_benchmark_json(const std::string& path, const VllmBenchmarkOptions& options);

// requests.jsonl: per line an object with an arrival time ("arrival_time_s", "arrival_s",
// "arrival_time" or "arrival" in s; or "arrival_time_ms"/"timestamp_ms" in ms), token counts
// ("input_tokens"/"prompt_tokens"/"input_length", "output_tokens"/"output_length"), and
// optionally "first_token_time" and "end_time" (absolute s, same clock as the arrival) or
// "ttft_s"/"latency_s" (durations, s). Blank lines are skipped.
RealRun read_requests_jsonl(const std::string& path);

RealRun read_distserve_exp(const std::string& path);

// aiperf profile_export.jsonl. Arrivals are the records' request_start_ns (the send times,
// recorded); lengths are input_sequence_length and output_sequence_length (or
// output_token_count); TTFT, E2E (request_latency) and the inter-chunk gaps (taken as ITLs when
// there is one per output token after the first, as with vLLM's one-token chunks) are converted
// from their units (ns, us, ms, s). A record with an error, or cancelled, still arrives (with
// error_isl, else 1 prompt token, and its output length, else 1) but is left out of the real
// metrics; a record of another benchmark_phase than "profiling" (a warm-up) is skipped.
RealRun read_aiperf_jsonl(const std::string& path);

// inference-perf's lifecycle reports, told apart by their content:
//   - per_request_lifecycle_metrics.json, a list of records {stage_id, start_time, end_time,
//     info, error}: the arrivals are the send times (start_time), recorded. Token counts are the
//     server's (info.response_metrics.server_usage prompt_tokens / completion_tokens) where it
//     sent them, else the client's (info.input_tokens or info.request_metrics.text.input_tokens;
//     info.output_tokens or info.response_metrics.output_tokens). With the token times
//     (output_token_times, at the top of info in older reports, in response_metrics in newer
//     ones): TTFT = first − start_time, TPOT = (last − first) / (output − 1) as inference-perf
//     computes them, and the gaps as ITLs when there is one time per token; E2E = end_time −
//     start_time. A record with an error arrives but is left out of the real metrics. The
//     prompt and response texts are skipped while parsing (the file can be hundreds of MB).
//   - stage_N_lifecycle_metrics.json, one stage's summary {load_summary, successes, failures}:
//     the real metrics are its statistics (mean, median, p90, p99 of time_to_first_token,
//     time_per_output_token, inter_token_latency, request_latency; its throughput). The
//     workload is regenerated: load_summary.count requests at load_summary.requested_rate,
//     spaced evenly (inference-perf's default constant load) or as a Poisson process, or, for a
//     concurrent-load stage (load_summary.concurrency), that many clients in a closed loop; each
//     prompt and output length drawn from the stage's prompt_len / output_len percentiles
//     (linear between them), with `seed`. A summary over several stages
//     (summary_lifecycle_metrics.json) has no rate and is refused.
struct InferencePerfOptions {
  std::optional<std::int64_t> stage;  // per-request report: keep only this stage's requests
  std::uint32_t seed = 0;             // stage summary: the regenerated workload's seed
  bool poisson = false;               // stage summary: Poisson arrivals instead of constant
};

RealRun read_inference_perf_json(const std::string& path, const InferencePerfOptions& options);

// Arrival times (s, first request at 0) of `n` requests as vLLM's benchmark client draws them:
// the gap after each request is numpy legacy gamma(shape = burstiness, scale = 1 / (rate ×
// burstiness)) from RandomState(seed) (MT19937 seeded with init_genrand(seed)); shape 1 (a
// Poisson process) uses the legacy exponential, −log(1 − u) with u the 53-bit double of two
// MT19937 words. Only burstiness 1 is supported (throws otherwise); rate must be > 0 (an
// infinite rate gives all zeros).
std::vector<double> vllm_client_arrivals(std::int64_t n, double request_rate, double burstiness,
                                         std::uint32_t seed);

}  // namespace kvsim::trace
