// Step-cost throughput: the simulator calls step_time once per engine step, millions of times
// per simulated week. Run: build/tests/bench/kvsim_bench --benchmark_filter=StepTime
#include <benchmark/benchmark.h>

#include <vector>

#include "../cost/cost_fixtures.h"
#include "common/rng.h"
#include "cost/linear_model.h"
#include "cost/roofline_model.h"

namespace {

using namespace kvsim;

// A mixed step: `decodes` sequences with varied contexts, one 512-token prefill chunk.
void run_steps(benchmark::State& state, const cost::CostModel& model) {
  const auto decodes = static_cast<std::size_t>(state.range(0));
  Rng rng(7);
  std::vector<std::int64_t> ctx(decodes);
  for (auto& c : ctx) c = rng.uniform_int(100, 8000);
  const cost::PrefillChunk chunk{512, 1024};
  cost::StepBatch b;
  b.prefills = {&chunk, 1};
  b.decode_context_tokens = ctx;
  b.num_sampling = static_cast<std::int64_t>(decodes) + 1;
  TimeNs sum = 0;
  for (auto _ : state) {
    sum += model.step_time(b);
    ctx[0] += 1;  // a different batch every call
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}

void BM_StepTimeRooflineLlama70bTp4(benchmark::State& state) {
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  const cost::RooflineCostModel model(test::llama3_70b(), test::h100_sxm(), o);
  run_steps(state, model);
}
BENCHMARK(BM_StepTimeRooflineLlama70bTp4)->Arg(1)->Arg(64)->Arg(256);

void BM_StepTimeRooflineDeepseekMoe(benchmark::State& state) {
  const cost::RooflineCostModel model(test::deepseek_v2_lite(), test::h100_sxm(), {});
  run_steps(state, model);
}
BENCHMARK(BM_StepTimeRooflineDeepseekMoe)->Arg(64);

void BM_StepTimeLinear(benchmark::State& state) {
  cost::LinearCostParams p;
  p.base_ns = 1e6;
  p.per_prefill_token_ns = 100;
  p.per_decode_seq_ns = 2e4;
  p.per_context_token_ns = 0.5;
  const cost::LinearCostModel model(p);
  run_steps(state, model);
}
BENCHMARK(BM_StepTimeLinear)->Arg(64);

}  // namespace
