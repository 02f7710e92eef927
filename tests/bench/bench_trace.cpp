// Trace reading, generation and statistics throughput (rows per second). The synthetic native
// CSV is generated once in /tmp by the first benchmark that needs it.
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "trace/native_writer.h"
#include "trace/replay_run.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"

namespace {

using namespace kvsim::trace;

constexpr std::int64_t kSyntheticRows = 2'000'000;

WorkloadOptions synthetic_workload(std::int64_t rows, bool shared_prefix) {
  WorkloadOptions w;
  w.source = WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = ArrivalProcess::kGamma;
  w.synthetic.cv = 2.0;
  w.synthetic.rate_rps = 50.0;
  w.synthetic.num_requests = rows;
  w.synthetic.prompt = parse_length_dist("lognormal:161.31:160:1:2048", {});
  w.synthetic.output = parse_length_dist("lognormal:337.99:300:1:2048", {});
  if (shared_prefix) w.synthetic.shared_prefix = {0.8, 4, 1024, 64};
  return w;
}

// A native CSV of `rows` synthetic requests (written once per process).
std::string synthetic_file(bool with_hashes) {
  const std::string path = "/tmp/kvsim_bench_native_" + std::to_string(::getpid()) +
                           (with_hashes ? "_hashes" : "") + ".csv";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return path;
  auto reader = Workload(synthetic_workload(kSyntheticRows, with_hashes)).open();
  AtomicOutputFile file(path);
  NativeCsvWriter writer(file.file(), reader->columns(), path);
  for (RequestSpec r; reader->next(r);) writer.write(r);
  writer.flush();
  file.commit();
  return path;
}

void read_file(benchmark::State& state, const std::string& path, std::int64_t block_tokens) {
  TraceFileOptions f;
  f.path = path;
  f.prefix_block_tokens = block_tokens;
  std::int64_t rows = 0, tokens = 0;
  for (auto _ : state) {
    auto reader = open_trace_file(f);
    for (RequestSpec r; reader->next(r);) {
      ++rows;
      tokens += r.prompt_tokens;
    }
  }
  benchmark::DoNotOptimize(tokens);
  state.SetItemsProcessed(rows);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    state.SetBytesProcessed(static_cast<std::int64_t>(st.st_size) * state.iterations());
  }
}

void read_shared(benchmark::State& state, const char* relative) {
  const std::string path = std::string(KVSIM_SHARED_DATA_DIR) + "/" + relative;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    state.SkipWithError(("shared data file absent: " + path).c_str());
    return;
  }
  read_file(state, path, kDefaultPrefixBlockTokens);
}

}  // namespace

static void BM_ReadNativeCsv(benchmark::State& state) {
  read_file(state, synthetic_file(false), kDefaultPrefixBlockTokens);
}
BENCHMARK(BM_ReadNativeCsv)->Unit(benchmark::kMillisecond);

static void BM_ReadNativeCsvWithPrefixHashes(benchmark::State& state) {
  read_file(state, synthetic_file(true), 64);
}
BENCHMARK(BM_ReadNativeCsvWithPrefixHashes)->Unit(benchmark::kMillisecond);

static void BM_ReadAzureCsv(benchmark::State& state) {
  read_shared(state, "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
}
BENCHMARK(BM_ReadAzureCsv)->Unit(benchmark::kMillisecond);

static void BM_ReadMooncakeJsonl(benchmark::State& state) {
  read_shared(state, "traces/mooncake_fast25/conversation_trace.jsonl");
}
BENCHMARK(BM_ReadMooncakeJsonl)->Unit(benchmark::kMillisecond);

static void BM_ReadVidurCsv(benchmark::State& state) {
  read_shared(state, "traces/vidur_processed/splitwise_conv.csv");
}
BENCHMARK(BM_ReadVidurCsv)->Unit(benchmark::kMillisecond);

static void BM_GenerateGammaLognormal(benchmark::State& state) {
  const Workload workload(synthetic_workload(1'000'000, false));
  std::int64_t rows = 0;
  for (auto _ : state) {
    auto reader = workload.open();
    for (RequestSpec r; reader->next(r);) ++rows;
  }
  state.SetItemsProcessed(rows);
}
BENCHMARK(BM_GenerateGammaLognormal)->Unit(benchmark::kMillisecond);

static void BM_TraceStatsNativeCsv(benchmark::State& state) {
  TraceFileOptions f;
  f.path = synthetic_file(false);
  std::int64_t rows = 0;
  for (auto _ : state) {
    auto reader = open_trace_file(f);
    const TraceStats s = compute_trace_stats(*reader);
    rows += s.requests;
    benchmark::DoNotOptimize(s.prompt_tokens.p99);
  }
  state.SetItemsProcessed(rows);
}
BENCHMARK(BM_TraceStatsNativeCsv)->Unit(benchmark::kMillisecond);

static void BM_WriteNativeCsv(benchmark::State& state) {
  const Workload workload(synthetic_workload(1'000'000, false));
  std::int64_t rows = 0;
  for (auto _ : state) {
    std::FILE* sink = std::fopen("/dev/null", "wb");
    auto reader = workload.open();
    NativeCsvWriter writer(sink, reader->columns(), "/dev/null");
    for (RequestSpec r; reader->next(r);) {
      writer.write(r);
      ++rows;
    }
    writer.flush();
    std::fclose(sink);
  }
  state.SetItemsProcessed(rows);
}
BENCHMARK(BM_WriteNativeCsv)->Unit(benchmark::kMillisecond);

// Removes the generated files at exit.
static const struct Cleanup {
  ~Cleanup() {
    for (const char* suffix : {"", "_hashes"}) {
      const std::string path =
          "/tmp/kvsim_bench_native_" + std::to_string(::getpid()) + suffix + ".csv";
      std::remove(path.c_str());
    }
  }
} kCleanup;

namespace {

constexpr std::int64_t kInferencePerfRecords = 5'000;

// An inference-perf per_request_lifecycle_metrics.json of kInferencePerfRecords records as its
// newer layout writes them, each with a 4 KB prompt, its response and 200 token times and chunks
// (70 MB; written once per process).
std::string inference_perf_file() {
  const std::string path =
      "/tmp/kvsim_bench_per_request_lifecycle_metrics_" + std::to_string(::getpid()) + ".json";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return path;
  AtomicOutputFile file(path);
  std::FILE* f = file.file();
  const std::string prompt(4096, 'p'), answer(800, 'a');
  std::fputs("[", f);
  for (std::int64_t i = 0; i < kInferencePerfRecords; ++i) {
    const double t = 0.01 * static_cast<double>(i);
    std::fprintf(f,
                 "%s{\"stage_id\": 0, \"scheduled_time\": %.6f, \"start_time\": %.6f, "
                 "\"end_time\": %.6f, \"request_data\": \"%s\", \"response_data\": \"%s\", "
                 "\"info\": {\"request_metrics\": {\"text\": {\"input_tokens\": 1000}}, "
                 "\"response_metrics\": {\"output_tokens\": 200, \"server_usage\": "
                 "{\"prompt_tokens\": 1003, \"completion_tokens\": 200}, \"response_chunks\": [",
                 i ? ", " : "", t, t, t + 2.1, prompt.c_str(), answer.c_str());
    for (int k = 0; k < 200; ++k) std::fprintf(f, "%s\"{\\\"text\\\": \\\"w\\\"}\"", k ? ", " : "");
    std::fputs("], \"chunk_times\": [", f);
    for (int k = 0; k < 200; ++k) std::fprintf(f, "%s%.6f", k ? ", " : "", t + 0.1 + 0.01 * k);
    std::fputs("], \"output_token_times\": [", f);
    for (int k = 0; k < 200; ++k) std::fprintf(f, "%s%.6f", k ? ", " : "", t + 0.1 + 0.01 * k);
    std::fputs("]}}, \"error\": null}", f);
  }
  std::fputs("]\n", f);
  file.commit();
  return path;
}

}  // namespace

// kvsim validate's reader of an inference-perf per-request report: records per second.
static void BM_ReadInferencePerfPerRequest(benchmark::State& state) {
  const std::string path = inference_perf_file();
  std::int64_t records = 0;
  for (auto _ : state) {
    const RealRun run = read_inference_perf_json(path, {});
    records += static_cast<std::int64_t>(run.requests.size());
    benchmark::DoNotOptimize(run.requests.back().tpot_s);
  }
  state.SetItemsProcessed(records);
}
BENCHMARK(BM_ReadInferencePerfPerRequest)->Unit(benchmark::kMillisecond);
