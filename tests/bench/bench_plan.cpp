// Benchmarks of the planner: the shipped 54-deployment sweep end to end (`kvsim plan` on 1 and 2
// threads), and the sweep runner's own overhead per job (threads, resume file).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "cli/app.h"
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

// configs/scenarios/sweep-llama-3-70b-full.yaml: Llama-3-70B on 3 GPUs × TP 2/4/8 × KV auto/fp8
// × block 8/16/32 = 54 deployments, each a load search of full simulations of 3,000 requests.
// Arg: worker threads. stdout (the plan's JSON) goes to /dev/null while it runs.
static void BM_PlanSweep54(benchmark::State& state) {
  const std::string config =
      std::string(KVSIM_SOURCE_DIR) + "/configs/scenarios/sweep-llama-3-70b-full.yaml";
  const std::string jobs = std::to_string(state.range(0));
  const char* argv[] = {"kvsim",      "plan",     "--config", config.c_str(), "--jobs",
                        jobs.c_str(), "--format", "json",     "--no-progress"};
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int devnull = ::open("/dev/null", O_WRONLY);
  for (auto _ : state) {
    ::dup2(devnull, STDOUT_FILENO);
    const int rc = kvsim::cli::run_cli(static_cast<int>(std::size(argv)), argv);
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    if (rc != 0) state.SkipWithError("kvsim plan failed");
  }
  ::close(devnull);
  ::close(saved);
  state.counters["deployments"] = 54;
}
BENCHMARK(BM_PlanSweep54)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
