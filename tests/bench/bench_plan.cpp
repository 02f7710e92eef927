// Benchmarks of the planner: the sweep runner's own overhead per job (threads, resume file).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "plan/sweep_runner.h"

namespace {

std::vector<std::string> bench_keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back(kvsim::plan::job_key("bench job " + std::to_string(i)));
  return keys;
}

}  // namespace

// Trivial jobs: what the runner costs per job (scheduling, ordering), with and without the
// resume file (one write + fdatasync per finished job). Arg 0: threads; arg 1: 1 = results file.
static void BM_SweepRunnerOverhead(benchmark::State& state) {
  const auto keys = bench_keys(256);
  kvsim::plan::RunnerOptions options;
  options.num_threads = static_cast<int>(state.range(0));
  const std::string path = "/tmp/kvsim_bench_runner_" + std::to_string(::getpid()) + ".jsonl";
  for (auto _ : state) {
    if (state.range(1)) {
      std::remove(path.c_str());
      options.results_path = path;
    }
    auto out = kvsim::plan::run_sweep(
        keys, [](std::size_t i) { return "{\"i\":" + std::to_string(i) + "}"; }, options);
    benchmark::DoNotOptimize(out.data());
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys.size()));
}
BENCHMARK(BM_SweepRunnerOverhead)
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond);
