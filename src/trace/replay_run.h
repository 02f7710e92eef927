#pragma once
// A real engine's benchmark run, read for `kvsim validate`: per request its arrival, lengths and
// the latencies the client measured. Four readers:
//
//   vLLM benchmark_serving --save-result JSON: input_lens[], output_lens[], ttfts[] (s), itls[][]
//     (every inter-token gap, s), errors[], request_rate, burstiness, duration, completed. The
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
//
// Bad input throws kvsim::Error with file, line, column and field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::trace {

enum class RunFormat { kVllmBenchmark, kRequestsJsonl, kDistServe, kAiperf };

// "vllm-benchmark", "requests-jsonl", "distserve", "aiperf"; parse returns nullopt for other
// names.
std::string_view run_format_name(RunFormat format);
std::optional<RunFormat> parse_run_format(std::string_view name);
std::vector<std::string> run_format_names();
// From the file name: *.exp → distserve, *profile_export.jsonl → aiperf, *.jsonl →
// requests-jsonl, *.json → vllm-benchmark.
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

struct RealRun {
  RunFormat format = RunFormat::kVllmBenchmark;
  std::vector<RealRequest> requests;  // in arrival order
  // How the arrivals were obtained: "recorded", "file <path>", or "regenerated: ..." (with the
  // rate and seed).
  std::string arrivals;
  std::optional<double> request_rate;  // req/s the client aimed at (vLLM JSON, .exp file name)
  double duration_s = 0;               // the client's benchmark duration, or the span of records
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

// Arrival times (s, first request at 0) of `n` requests as vLLM's benchmark client draws them:
// the gap after each request is numpy legacy gamma(shape = burstiness, scale = 1 / (rate ×
// burstiness)) from RandomState(seed) (MT19937 seeded with init_genrand(seed)); shape 1 (a
// Poisson process) uses the legacy exponential, −log(1 − u) with u the 53-bit double of two
// MT19937 words. Only burstiness 1 is supported (throws otherwise); rate must be > 0 (an
// infinite rate gives all zeros).
std::vector<double> vllm_client_arrivals(std::int64_t n, double request_rate, double burstiness,
                                         std::uint32_t seed);

}  // namespace kvsim::trace
