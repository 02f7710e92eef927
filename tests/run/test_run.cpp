// run/run.cpp: one run of a resolved scenario with typed results.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"
#include "config/settings.h"
#include "run/resolve.h"
#include "run/run.h"
#include "test_util.h"

using kvsim::Error;
using kvsim::config::Scenario;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

kvsim::run::ResolvedScenario resolve_yaml(const std::string& yaml) {
  return kvsim::run::resolve_scenario(
      kvsim::config::parse_scenario_text(yaml, "s.yaml", kvsim::test::source_dir()));
}

kvsim::run::RunResult run_yaml(const std::string& yaml) {
  return kvsim::run::run(resolve_yaml(yaml), nullptr);
}

// A scenario's workload line: `n` requests of `prompt` + `output` tokens within n ms.
std::string burst(int n, int prompt, int output) {
  return "workload: {synthetic: {rate: 1000, num_requests: " + std::to_string(n) +
         ", prompt_tokens: " + std::to_string(prompt) +
         ", output_tokens: " + std::to_string(output) + "}}\n";
}

}  // namespace

TEST_CASE("run::run returns the simulation with its reader stats and KV analysis", "[run]") {
  const Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  CHECK(out.reader_stats.rows_read == 2);
  CHECK(out.replica_capacity_bytes > 0);
  CHECK(out.kv.bytes_per_token > 0);
}

TEST_CASE(
    "Disaggregated serving with pipelined decode instances runs; the prefill pool is not "
    "staged",
    "[run][disagg][pp]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.model = "opt-13b";
  s.deployment.gpu = "a100-80gb";
  s.cost.kind = kvsim::cost::CostModelKind::kRoofline;  // stages split the model's layers
  s.deployment.pipeline_parallel_size = 2;
  s.deployment.prefill_tensor_parallel_size = 2;
  s.sim.num_prefill_replicas = 1;
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK_FALSE(r.not_modelled().has_value());
  // 1 prefill instance of TP 2 and 1 decode instance of TP 1 x PP 2.
  CHECK(r.deployment.disaggregated_gpus(1, 1) == 4);
  CHECK(r.prefill_deployment_inputs().pipeline_parallel_size == 1);
  CHECK(r.deployment_inputs().pipeline_parallel_size == 2);
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  CHECK(out.result.metrics.kv_transfer.count() == 2);
}

TEST_CASE("A gated DeltaNet hybrid runs with its state pages in the KV pool", "[run][hybrid]") {
  const std::string yaml = "model: " + kvsim::test::source_dir() +
                           "/tests/config/data/hf/qwen3-next-80b-a3b.json\n"
                           "gpu: h100-sxm\ntensor_parallel_size: 4\ncost_model: roofline\n" +
                           burst(64, 100, 50);
  const kvsim::run::RunResult out = run_yaml(yaml);
  CHECK(out.result.metrics.completed == 64);
  // All 64 run at once (they arrive within 64 ms): each holds three 3,342,336-byte state pages
  // (272 tokens × 12 layers × 1,024 B) and one page for its 150 tokens.
  CHECK(out.result.peak_used_bytes == 64ULL * 4 * 3'342'336);
}

TEST_CASE("A pipelined replica's largest batch sums its engines', as its mean does", "[run][pp]") {
  // vLLM V0's virtual engines.
  const std::string yaml =
      "model: llama-3-8b\ngpu: h100-sxm\npipeline_parallel_size: 2\ncost_model: roofline\n"
      "engine: v0\n" +
      burst(64, 100, 200);
  const kvsim::run::RunResult out = run_yaml(yaml);
  CHECK(out.result.metrics.completed == 64);
  // The 64 requests run at once, 32 on each virtual engine: the replica's batch is 64.
  CHECK(out.result.max_running == 64);
  CHECK(out.result.mean_running <= static_cast<double>(out.result.max_running));
  CHECK(out.result.mean_running > 32.0);
}

TEST_CASE("Data-parallel ranks with stages: a replica's batch is its largest rank's",
          "[run][pp][dp]") {
  const std::string yaml =
      "model: llama-3-8b\ngpu: h100-sxm\npipeline_parallel_size: 2\ndata_parallel_size: 2\n"
      "cost_model: roofline\n" +
      burst(64, 100, 200);
  CHECK(resolve_yaml(yaml).deployment.gpus_per_replica() == 4);
  const kvsim::run::RunResult out = run_yaml(yaml);
  CHECK(out.result.metrics.completed == 64);
  // The 64 requests run at once, 32 on each rank (one engine each, vLLM V1's): the replica's
  // batch is a rank's, 32; its mean is per rank too.
  CHECK(out.result.max_running == 32);
  CHECK(out.result.mean_running <= 32.0);
  CHECK(out.result.mean_running > 16.0);
  CHECK(out.result.completed_per_replica == std::vector<std::int64_t>{64});
  // The replica's cache holds twice the tokens of one rank (the same deployment without data
  // parallelism), in the same bytes per GPU.
  std::string one_rank = yaml;
  one_rank.replace(one_rank.find("data_parallel_size: 2"), 21, "data_parallel_size: 1");
  const kvsim::run::RunResult single = run_yaml(one_rank);
  CHECK(out.result.capacity_slots == 2 * single.result.capacity_slots);
  CHECK(out.result.capacity_bytes == single.result.capacity_bytes);
  CHECK(single.result.max_running == 64);
}

TEST_CASE("vLLM V1 with stages: one scheduler over the whole cache starts what V0's share cannot",
          "[run][pp][v1]") {
  // Llama-3-70B over two nodes of 4 A100-40GB at 0.44 utilization: the cache holds a little more
  // than one 8,192-token sequence, so V0's two virtual engines (half each) could not start;
  // V1's one scheduler runs with all of it.
  const std::string yaml =
      "model: llama-3-70b\ngpu: a100-40gb\ntensor_parallel_size: 4\npipeline_parallel_size: 2\n"
      "gpus_per_node: 4\ninternode_bandwidth_gb_s: 0.75\ngpu_memory_utilization: 0.44\n"
      "cost_model: roofline\nengine: v1\n" +
      burst(16, 100, 50);
  const kvsim::run::RunResult out = run_yaml(yaml);
  CHECK(out.result.metrics.completed == 16);
  CHECK(out.result.capacity_slots >= 8192);
  CHECK(out.result.capacity_slots < 2 * 8192);
  // One engine: the 16 requests run in its batches together.
  CHECK(out.result.max_running == 16);
}
