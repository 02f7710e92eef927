// Scenario YAML (config/scenario.h): every field, defaults, path resolution, and bad input.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"

using kvsim::Error;
using kvsim::config::parse_scenario_text;
using kvsim::config::Scenario;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_scenario_text(yaml, "s.yaml", "/base");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("A scenario sets every field it names and keeps the defaults of the rest", "[sim]") {
  const Scenario s = parse_scenario_text(R"(
model: models/m.yaml
gpu: h100-sxm
tensor_parallel_size: 4
gpu_memory_utilization: 0.85
block_size: 32
max_model_len: 4096
kv_cache_dtype: fp8
activation_reserve_gib: 1.5
runtime_overhead_gib: 0.5
serving:
  replicas: 3
  router: least-kv
  scheduler: chunked-prefill
  max_num_seqs: 64
  max_num_batched_tokens: 1024
  long_prefill_token_threshold: 256
  allocator: contiguous-pow2
  placement: best-fit
  watermark: 0.02
  preemption: swap
  swap_space_gib: 2
  enable_prefix_caching: true
  time_limit_s: 600
cost_model: {kind: linear, base_us: 1000, prefill_us_per_token: 10, decode_us_per_seq: 100,
             context_us_per_token: 0.5, swap_gb_per_s: 20}
slo: {ttft_ms: 500, tpot_ms: 50, e2e_ms: 20000, percentile: 95}
seed: 42
workload:
  trace: traces/t.csv
)",
                                         "s.yaml", "/base");
  CHECK(s.deployment.model == "/base/models/m.yaml");  // relative paths: the scenario's folder
  CHECK(s.deployment.gpu == "h100-sxm");               // a shipped name stays a name
  CHECK(s.deployment.tensor_parallel_size == 4);
  CHECK(s.deployment.gpu_memory_utilization == 0.85);
  CHECK(s.deployment.block_size == 32);
  CHECK(s.deployment.max_model_len == 4096);
  CHECK(s.deployment.kv_cache_dtype == "fp8");
  CHECK(s.deployment.activation_reserve_gib == 1.5);
  CHECK(s.deployment.runtime_overhead_gib == 0.5);
  CHECK(s.sim.num_replicas == 3);
  CHECK(s.sim.router == kvsim::sim::RouterKind::kLeastKvUsage);
  CHECK(s.sim.scheduler.kind == kvsim::sim::SchedulerKind::kChunkedPrefill);
  CHECK(s.sim.scheduler.max_num_seqs == 64);
  CHECK(s.sim.scheduler.max_num_batched_tokens == 1024);
  CHECK(s.sim.scheduler.long_prefill_token_threshold == 256);
  CHECK(s.allocator == kvsim::memory::AllocatorKind::kContiguousPow2);
  CHECK(s.placement == kvsim::memory::Placement::kBestFit);
  CHECK(s.watermark == 0.02);
  CHECK(s.sim.scheduler.preemption == kvsim::sim::PreemptionMode::kSwap);
  CHECK(s.sim.scheduler.swap_space_bytes == 2 * kvsim::kGiB);
  CHECK(s.sim.enable_prefix_caching);
  CHECK(s.sim.time_limit_ns == 600 * kvsim::kNsPerSecond);
  CHECK(s.cost.kind == kvsim::cost::CostModelKind::kLinear);
  CHECK(s.cost.linear.base_ns == 1e6);
  CHECK(s.cost.linear.per_prefill_token_ns == 1e4);
  CHECK(s.cost.linear.per_decode_seq_ns == 1e5);
  CHECK(s.cost.linear.per_context_token_ns == 500);
  CHECK(s.cost.linear.swap_bytes_per_s == 20e9);
  CHECK(s.sim.slo.ttft_ns == 500 * kvsim::kNsPerMs);
  CHECK(s.sim.slo.tpot_ns == 50 * kvsim::kNsPerMs);
  CHECK(s.sim.slo.e2e_ns == 20000 * kvsim::kNsPerMs);
  CHECK(s.sim.slo.percentile == 95);
  CHECK(s.seed == 42);
  CHECK(s.has_workload);
  CHECK(s.workload.trace.path == "/base/traces/t.csv");

  const Scenario d = parse_scenario_text("model: llama-3-70b\n", "d.yaml", "");
  const kvsim::sim::SimOptions defaults;
  CHECK(d.deployment.tensor_parallel_size == 1);
  CHECK(d.deployment.gpu_memory_utilization == 0.9);
  CHECK(d.deployment.block_size == 16);
  CHECK(d.deployment.max_model_len == 0);
  CHECK_FALSE(d.deployment.activation_reserve_gib);  // estimated from the model
  CHECK(d.deployment.runtime_overhead_gib == 2.0);
  CHECK(d.sim.scheduler.max_num_seqs == defaults.scheduler.max_num_seqs);
  CHECK(d.sim.scheduler.kind == kvsim::sim::SchedulerKind::kVllm);
  CHECK(d.allocator == kvsim::memory::AllocatorKind::kPaged);
  CHECK(d.watermark == 0.01);
  CHECK(d.cost.kind == kvsim::cost::CostModelKind::kRoofline);
  CHECK_FALSE(d.has_workload);
}

TEST_CASE("Scenario errors name the file, line, column and field", "[sim]") {
  CHECK(error_of("model: m\nserving:\n  scheduler: [vllm, static]\n") ==
        "s.yaml:3:14: serving.scheduler: lists make a sweep: use kvsim plan");
  CHECK(error_of("model: [a, b]\n") == "s.yaml:1:8: model: lists make a sweep: use kvsim plan");
  CHECK(error_of("model: m\nworkload:\n  rate_scale: [1, 2]\n") ==
        "s.yaml:3:15: workload.rate_scale: lists make a sweep: use kvsim plan");
  CHECK(error_of("model: m\nserving:\n  max_num_seq: 8\n") ==
        "s.yaml:3:3: serving.max_num_seq: unknown key 'max_num_seq', did you mean 'max_num_seqs'?");
  CHECK(error_of("model: m\nservng: {}\n") ==
        "s.yaml:2:1: servng: unknown key 'servng', did you mean 'serving'?");
  CHECK(error_of("model: m\nserving:\n  scheduler: vlm\n")
            .find("s.yaml:3:14: serving.scheduler: expected one of") == 0);
  CHECK(error_of("model: m\nserving:\n  scheduler: vlm\n").find("did you mean 'vllm'?") !=
        std::string::npos);
  CHECK(error_of("model: m\nserving:\n  replicas: 0\n")
            .find("s.yaml:3:13: serving.replicas: expected") == 0);
  CHECK(error_of("model: m\nserving:\n  watermark: 1\n")
            .find("serving.watermark: expected a fraction in [0, 1)") != std::string::npos);
  CHECK(error_of("model: m\ngpu_memory_utilization: 0\n")
            .find("gpu_memory_utilization: expected a fraction in (0, 1]") != std::string::npos);
  CHECK(error_of("model: m\nslo: {percentile: 0}\n")
            .find("slo.percentile: expected a percentile in (0, 100]") != std::string::npos);
  CHECK(error_of("model: m\nslo: {ttft_m: 5}\n").find("did you mean 'ttft_ms'?") !=
        std::string::npos);
  CHECK(error_of("model: m\ncost_model: lineer\n")
            .find("s.yaml:2:13: cost_model: expected 'roofline' or 'linear:") == 0);
  CHECK(
      error_of("model: m\ncost_model: {kind: linear, base_us: -1}\n").find("cost_model.base_us") !=
      std::string::npos);
  CHECK(error_of("model: m\ncost_model: {kind: roofline, base_us: 5}\n") ==
        "s.yaml:2:39: cost_model.base_us: applies to kind: linear only, and kind is roofline");
  CHECK(error_of("model: m\nruntime_overhead_gib: -1\n")
            .find("s.yaml:2:23: runtime_overhead_gib: ") == 0);
  CHECK(error_of("model: m\nseed: -3\n").find("seed") != std::string::npos);
  CHECK(error_of("- a\n- b\n").find("lists make a sweep") != std::string::npos);
}

TEST_CASE("The linear cost model's command-line form", "[sim]") {
  const kvsim::ErrorLocation where{"", 0, 0, "--cost-model"};
  const auto c = kvsim::config::parse_cost_model_spec("linear:1000:10:100:0.5", where);
  CHECK(c.kind == kvsim::cost::CostModelKind::kLinear);
  CHECK(c.linear.base_ns == 1e6);
  CHECK(c.linear.per_prefill_token_ns == 1e4);
  CHECK(c.linear.per_decode_seq_ns == 1e5);
  CHECK(c.linear.per_context_token_ns == 500);
  CHECK(kvsim::config::parse_cost_model_spec("roofline", where).kind ==
        kvsim::cost::CostModelKind::kRoofline);
  CHECK_THROWS_WITH(kvsim::config::parse_cost_model_spec("linear:1", where),
                    Catch::Contains("--cost-model: expected 'roofline' or 'linear:"));
  CHECK_THROWS_WITH(kvsim::config::parse_cost_model_spec("linear:1:2:-3", where),
                    Catch::Contains("expected a non-negative number of microseconds, got '-3'"));
}
