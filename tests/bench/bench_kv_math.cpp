// Benchmarks of the foundation: the KV memory math a planning sweep evaluates per deployment,
// and loading model configs (shipped YAML and Hugging Face JSON).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "config/catalog.h"
#include "config/hf_import.h"
#include "model/kv_math.h"

namespace {

using namespace kvsim;

void BM_AnalyzeKvLlama70bTp4(benchmark::State& state) {
  const model::ModelSpec m = config::load_model("llama-3-70b");
  const model::HardwareSpec hw = config::load_hardware("h100-sxm");
  model::KvQuery q;
  q.tensor_parallel_size = 4;
  q.batch = 16;
  q.context = 8192;
  q.format = *model::kv_format_from_name(m, "auto");
  for (auto _ : state) benchmark::DoNotOptimize(model::analyze_kv(m, &hw, q));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyzeKvLlama70bTp4);

void BM_PagedBytesForSequenceGemma2(benchmark::State& state) {
  const model::ModelSpec m = config::load_model("gemma-2-9b");
  const auto groups = model::kv_groups(m, *model::kv_format_from_name(m, "auto"));
  std::int64_t n = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model::paged_bytes_for_sequence(groups, n, 16));
    n = n % 8192 + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PagedBytesForSequenceGemma2);

void BM_LoadShippedModel(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(config::load_model("deepseek-v2-lite"));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoadShippedModel);

void BM_ParseHfConfigGemma4(benchmark::State& state) {
  std::ifstream in(std::string(KVSIM_SHARED_DATA_DIR) + "/models/google--gemma-4-26B-A4B.json");
  if (!in) {
    state.SkipWithError("shared data absent (../shared/data/models)");
    return;
  }
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  for (auto _ : state) benchmark::DoNotOptimize(config::parse_hf_config(text, "gemma4.json"));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseHfConfigGemma4);

}  // namespace
