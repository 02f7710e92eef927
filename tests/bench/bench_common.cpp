// Benchmarks of the common layer: the random number generator every synthetic workload uses.
#include <benchmark/benchmark.h>

#include "common/rng.h"

static void BM_RngNextU64(benchmark::State& state) {
  kvsim::Rng rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.next_u64());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RngNextU64);

static void BM_RngGamma(benchmark::State& state) {
  kvsim::Rng rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.gamma(0.5, 2.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RngGamma);
