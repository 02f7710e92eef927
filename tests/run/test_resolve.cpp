// run/resolve.h and run/run.h: a scenario resolved without touching the parsed one, errors located
// where the value came from, and one run with typed results.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/warning.h"
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

}  // namespace

TEST_CASE("resolve_scenario leaves the parsed scenario as it was", "[run]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.max_model_len = 0;  // the model's max context
  const Scenario before = s;
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK(s.deployment.max_model_len == 0);
  CHECK(s.sim.scheduler.max_model_len == before.sim.scheduler.max_model_len);
  CHECK(s.workload.synthetic.seed == before.workload.synthetic.seed);
  CHECK(r.deployment.max_model_len == r.deployment.model.max_context);
  CHECK(r.sim.scheduler.max_model_len == r.deployment.max_model_len);
  CHECK(r.sim.block_size == 16);
  CHECK(r.watermark == 0.0);
}

TEST_CASE("A resolve error is located at the scenario's YAML value", "[run]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  kvsim::config::apply_setting(
      *kvsim::config::find_setting_by_path("serving.max_num_batched_tokens"), "10",
      {"s.yaml", 7, 27, "serving.max_num_batched_tokens"}, s);
  try {
    (void)kvsim::run::resolve_scenario(s);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("s.yaml:7:27: serving.max_num_batched_tokens: the vllm "
                                      "scheduler computes a whole prompt in one step",
                                      0) == 0);
  }
}

TEST_CASE("The quantization flag: auto keeps the config's, another method wins with one warning",
          "[run][quant]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string path = kvsim::test::write_temp_file(dir, "config.json", R"({
  "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
  "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
  "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}})");
  std::vector<std::string> warnings;
  const auto previous =
      kvsim::set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  kvsim::config::ScenarioDeployment given;
  given.model = path;
  const auto config_q =
      kvsim::run::resolve_deployment(given, kvsim::run::GpuRequirement::kOptional);
  CHECK(config_q.model.quantization.method == kvsim::model::QuantMethod::kFp8);
  CHECK(config_q.model.quantization.scales == kvsim::model::ScaleLayout::kBlock);
  given.quantization = "fp8";  // the same method: the config's details stay
  CHECK(kvsim::run::resolve_deployment(given, kvsim::run::GpuRequirement::kOptional)
            .model.quantization.block_n == 128);
  CHECK(warnings.empty());
  given.quantization = "awq";
  const auto flag_q = kvsim::run::resolve_deployment(given, kvsim::run::GpuRequirement::kOptional);
  kvsim::set_warning_sink(previous);
  CHECK(flag_q.model.quantization.method == kvsim::model::QuantMethod::kAwq);
  CHECK(flag_q.model.quantization.group_size == 128);
  CHECK(flag_q.model.quantization.origin == "--quantization");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "--quantization: the model's config says fp8 (fp8, block 128x128); costing it as awq as "
        "asked (vLLM would refuse the mismatch)");
}

namespace {

// `yaml` (its serving section on line 3, if any) plus a one-request workload.
kvsim::run::ResolvedScenario resolve_text(const std::string& yaml) {
  return kvsim::run::resolve_scenario(kvsim::config::parse_scenario_text(
      yaml + "workload: {synthetic: {rate: 1, num_requests: 1, prompt_tokens: 8, "
             "output_tokens: 8}}\n",
      "s.yaml", kvsim::test::source_dir()));
}

}  // namespace

TEST_CASE("Engine v1 without serving settings resolves to vLLM V1's vllm serve defaults",
          "[run][v1]") {
  using kvsim::sim::SchedulerKind;
  // H100 (>= 70 GiB, not an A100): 1,024 sequences and 8,192 tokens per step.
  auto r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\n");
  CHECK(r.sim.scheduler.kind == SchedulerKind::kVllmV1);
  CHECK(r.sim.scheduler.max_num_seqs == 1024);
  CHECK(r.sim.scheduler.max_num_batched_tokens == 8192);
  CHECK(r.sim.enable_prefix_caching);
  CHECK(r.watermark == 0.0);
  CHECK(r.sim.scheduler.cuda_graph_max_size == 512);
  // A100: 256 and 2,048; the graph sizes follow max_num_seqs (min(2 x 256, 512)).
  r = resolve_text("model: llama-3-8b\ngpu: a100-80gb\nserving: {max_num_seqs: 64}\n");
  CHECK(r.sim.scheduler.max_num_seqs == 64);
  CHECK(r.sim.scheduler.max_num_batched_tokens == 2048);
  CHECK(r.sim.scheduler.cuda_graph_max_size == 128);
  // Given values win.
  r = resolve_text(
      "model: llama-3-8b\ngpu: h100-sxm\nserving: {max_num_batched_tokens: 4096, watermark: 0.01, "
      "enable_prefix_caching: false, cuda_graph_sizes: 64}\n");
  CHECK(r.sim.scheduler.max_num_batched_tokens == 4096);
  CHECK(r.watermark == 0.01);
  CHECK_FALSE(r.sim.enable_prefix_caching);
  CHECK(r.sim.scheduler.cuda_graph_max_size == 64);
  r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {enforce_eager: true}\n");
  CHECK(r.sim.scheduler.cuda_graph_max_size == 0);
}

TEST_CASE("Engine v0, or a V0 scheduler named, keeps the V0 defaults", "[run][v1]") {
  using kvsim::sim::SchedulerKind;
  auto r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n");
  CHECK(r.sim.scheduler.kind == SchedulerKind::kVllm);
  CHECK(r.sim.scheduler.max_num_seqs == 256);
  CHECK(r.sim.scheduler.max_num_batched_tokens == 0);  // max(max_model_len, 2048)
  CHECK_FALSE(r.sim.enable_prefix_caching);
  CHECK(r.watermark == 0.01);
  CHECK(r.sim.scheduler.cuda_graph_max_size == 0);
  // V0's host work per scheduled sequence; none with the V1 engine below.
  CHECK(r.cost.roofline.engine_seq_overhead_s == kvsim::cost::kVllmV0SeqOverheadS);
  r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {scheduler: chunked-prefill}\n");
  CHECK(r.cost.roofline.engine_seq_overhead_s == 0);
  CHECK(r.sim.scheduler.kind == SchedulerKind::kChunkedPrefill);
  CHECK(r.sim.scheduler.max_num_seqs == 256);
  CHECK(r.sim.scheduler.cuda_graph_max_size == 0);
  // vLLM V1 cannot swap: the error is at the YAML value.
  try {
    (void)resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {preemption: swap}\n");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind(
              "s.yaml:3:23: serving.preemption: vLLM V1 preempts by recompute only", 0) == 0);
  }
}

namespace {

// Mixtral 8x7B on H100s, TP 2 × DP 2 with expert parallelism (the golden two-request scenario's
// serving settings).
Scenario mixtral_tp2_dp2_ep() {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.model = "mixtral-8x7b";
  s.deployment.gpu = "h100-sxm";
  s.deployment.tensor_parallel_size = 2;
  s.deployment.data_parallel_size = 2;
  s.deployment.enable_expert_parallel = true;
  return s;
}

// The prefill instances of `r`: their builder inputs (TP, DP, one stage, experts whole over
// `expert_gpus` GPUs) and the pool built from them (lockstep ranks; the KV link's bandwidth over
// all of its streams).
void check_prefill_pool(const kvsim::run::ResolvedScenario& r, std::int64_t tp, std::int64_t dp,
                        std::int64_t expert_gpus, double bandwidth) {
  const kvsim::sim::DeploymentInputs in = r.prefill_deployment_inputs();
  CHECK(in.tensor_parallel_size == tp);
  CHECK(in.data_parallel_size == dp);
  CHECK(in.pipeline_parallel_size == 1);
  CHECK(in.model->moe.shard_ranks == expert_gpus);
  CHECK(in.model->moe.expert_parallel);
  const kvsim::sim::BuiltDeployment built = kvsim::sim::build_deployment(in, r.sim);
  const kvsim::sim::SimSetup::PrefillPool pool = r.prefill_pool(built);
  CHECK(pool.data_parallel.size == dp);
  CHECK(pool.data_parallel.lockstep == (dp > 1));
  CHECK(pool.bandwidth == Approx(bandwidth));
}

}  // namespace

TEST_CASE("Data and expert parallelism: one GPU's model, and the combination not modelled",
          "[run][ep]") {
  Scenario s = mixtral_tp2_dp2_ep();
  kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  // 8 experts whole over 4 GPUs: 2 each.
  CHECK(r.deployment.model.moe.shard_ranks == 4);
  CHECK(r.deployment.model.moe.expert_parallel);
  CHECK(r.deployment.gpus_per_replica() == 4);
  CHECK_FALSE(r.not_modelled().has_value());
  s.deployment.pipeline_parallel_size = 2;
  r = kvsim::run::resolve_scenario(s);
  REQUIRE(r.not_modelled().has_value());
  CHECK_THAT(r.not_modelled()->what(), Catch::Contains("--data-parallel-size"));
  CHECK_THROWS_WITH(kvsim::run::run(r, nullptr), Catch::Contains("is not modelled"));
  // More GPUs than experts: refused when resolving, at the flag.
  s.deployment.pipeline_parallel_size = 1;
  s.deployment.data_parallel_size = 8;
  CHECK_THROWS_WITH(kvsim::run::resolve_scenario(s),
                    Catch::Contains("--enable-expert-parallel") &&
                        Catch::Contains("leaves GPUs without an expert"));
}

TEST_CASE("A dense model's data-parallel ranks may have pipeline stages", "[run][pp][dp]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.model = "llama-3-8b";
  s.deployment.gpu = "h100-sxm";  // 8 GPUs per node
  s.deployment.tensor_parallel_size = 2;
  s.deployment.pipeline_parallel_size = 2;
  s.deployment.data_parallel_size = 2;
  s.cost = kvsim::cost::CostModelConfig{};  // the roofline: stages need layers
  kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK(r.deployment.gpus_per_replica() == 8);
  CHECK_FALSE(r.not_modelled().has_value());
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  // Ranks of 4 GPUs fill a node of 8 whole; ranks of 16 (TP 4 × PP 4) fill whole nodes.
  s.deployment.tensor_parallel_size = 4;
  s.deployment.pipeline_parallel_size = 4;
  CHECK_FALSE(kvsim::run::resolve_scenario(s).not_modelled().has_value());
  // Ranks of TP 2 × PP 3 = 6 GPUs: rank 1 (GPUs 6-11) would cross nodes between its stages
  // where rank 0 does not.
  s.deployment.tensor_parallel_size = 2;
  s.deployment.pipeline_parallel_size = 3;
  r = kvsim::run::resolve_scenario(s);
  REQUIRE(r.not_modelled().has_value());
  CHECK_THAT(r.not_modelled()->what(), Catch::Contains("--data-parallel-size") &&
                                           Catch::Contains("TP × PP = 6 GPUs on nodes of 8"));
}

TEST_CASE("Disaggregated serving with data- and expert-parallel prefill and decode instances",
          "[run][ep][disagg]") {
  Scenario s = mixtral_tp2_dp2_ep();
  s.deployment.prefill_tensor_parallel_size = 4;
  s.sim.num_prefill_replicas = 1;
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK_FALSE(r.not_modelled().has_value());
  // Decode: 8 experts over DP 2 × TP 2 = 4 GPUs. Prefill: one engine of 4 GPUs, 2 experts each.
  CHECK(r.deployment.model.moe.shard_ranks == 4);
  CHECK(r.deployment.disaggregated_gpus(1, 1) == 8);
  // The prompt's KV goes to one rank (TP 2): min(4, 2) = 2 streams of NVLink (one node of 8).
  check_prefill_pool(r, 4, 1, 4, 2 * 450e9);
  // Without expert parallelism the prefill instance splits every expert over its 4 GPUs.
  s.deployment.enable_expert_parallel = false;
  const kvsim::run::ResolvedScenario tp_only = kvsim::run::resolve_scenario(s);
  CHECK_FALSE(tp_only.deployment.prefill_model.moe.expert_parallel);
  CHECK(tp_only.deployment.prefill_model.moe.shard_ranks == 0);  // its TP group
  // Prefill instances of two data-parallel ranks of 2 GPUs: the experts over all 4, in lockstep.
  s.deployment.enable_expert_parallel = true;
  s.deployment.prefill_tensor_parallel_size = 2;
  s.deployment.prefill_data_parallel_size = 2;
  const kvsim::run::ResolvedScenario dp_prefill = kvsim::run::resolve_scenario(s);
  CHECK(dp_prefill.deployment.disaggregated_gpus(1, 1) == 8);
  check_prefill_pool(dp_prefill, 2, 2, 4, 2 * 450e9);  // a rank's 2 GPUs to a decode rank's 2
  s.deployment.prefill_data_parallel_size = 8;         // 16 GPUs, 8 experts
  CHECK_THROWS_WITH(kvsim::run::resolve_scenario(s),
                    Catch::Contains("--prefill-data-parallel-size") &&
                        Catch::Contains("leaves GPUs without an expert"));
  s.deployment.prefill_data_parallel_size = 1;
  // A prefill instance of more GPUs than experts cannot hold whole experts.
  s.deployment.data_parallel_size = 1;
  s.deployment.prefill_tensor_parallel_size = 16;
  CHECK_THROWS_WITH(kvsim::run::resolve_scenario(s),
                    Catch::Contains("--prefill-tensor-parallel-size") &&
                        Catch::Contains("leaves GPUs without an expert"));
}

TEST_CASE("Async scheduling reaches the roofline cost model; other schedulers and models refuse it",
          "[run][v1]") {
  auto r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {async_scheduling: true}\n");
  CHECK(r.cost.roofline.async_scheduling);
  // A cost_model setting, whatever its order, keeps it: it is copied when resolved.
  r = resolve_text(
      "model: llama-3-8b\ngpu: h100-sxm\nserving: {async_scheduling: true}\n"
      "cost_model: roofline\n");
  CHECK(r.cost.roofline.async_scheduling);
  CHECK_FALSE(resolve_text("model: llama-3-8b\ngpu: h100-sxm\n").cost.roofline.async_scheduling);
  CHECK_THAT(kvsim::test::error_of([] {
               (void)resolve_text(
                   "model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n"
                   "serving: {async_scheduling: true}\n");
             }),
             Catch::StartsWith("s.yaml:4:29: serving.async_scheduling: async scheduling is vLLM "
                               "V1's"));
  CHECK_THROWS_WITH(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {async_scheduling: "
                                 "true}\ncost_model: linear:100:1:10\n"),
                    Catch::Contains("the linear cost model has none"));
  CHECK_THROWS_WITH(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {async_scheduling: "
                                 "true}\npipeline_parallel_size: 2\n"),
                    Catch::Contains("with pipeline parallelism is not modelled"));
}

TEST_CASE("Pipeline stages: vLLM V1's one engine holds the whole cache, V0's engines 1/PP each",
          "[run][pp][v1]") {
  const auto built = [](const std::string& engine) {
    const kvsim::run::ResolvedScenario r = resolve_text(
        "model: llama-3-8b\ngpu: h100-sxm\npipeline_parallel_size: 2\ncost_model: roofline\n"
        "engine: " +
        engine + "\n");
    return kvsim::sim::build_deployment(r.deployment_inputs(), r.sim);
  };
  const kvsim::sim::BuiltDeployment v1 = built("v1");
  const kvsim::sim::BuiltDeployment v0 = built("v0");
  CHECK(v1.virtual_engines() == 1);
  CHECK(v1.allocator_options().capacity_bytes == v1.budget().kv_budget_bytes);
  CHECK(v0.virtual_engines() == 2);
  CHECK(v0.allocator_options().capacity_bytes == v0.budget().kv_budget_bytes / 2);
}

TEST_CASE("Async scheduling follows the vLLM release when not given", "[run][v1]") {
  const auto async_of = [](const std::string& extra) {
    const auto r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\n" + extra);
    CHECK(r.cost.roofline.async_scheduling == r.sim.scheduler.async_scheduling);
    return r.cost.roofline.async_scheduling;
  };
  CHECK_FALSE(async_of(""));  // 0.10.1
  CHECK_FALSE(async_of("vllm_version: 0.13.0\n"));
  CHECK(async_of("vllm_version: 0.14.1\n"));
  CHECK(async_of("vllm_version: 0.18.0\n"));  // runs as 0.14, the newest modelled
  // Given, it is kept either way; pipeline stages, V0 and the linear model leave it off.
  CHECK_FALSE(async_of("vllm_version: 0.14.1\nserving: {async_scheduling: false}\n"));
  CHECK(async_of("vllm_version: 0.13.0\nserving: {async_scheduling: true}\n"));
  CHECK_FALSE(async_of("vllm_version: 0.14.1\npipeline_parallel_size: 2\n"));
  CHECK_FALSE(async_of("vllm_version: 0.14.1\ncost_model: linear:100:1:10\n"));
  CHECK_FALSE(async_of("vllm_version: 0.14.1\nserving: {scheduler: vllm}\n"));
}

TEST_CASE("The front end's latency: the setting's, else the GPU profile's, else vLLM V0's",
          "[run][overhead]") {
  // Datasheet profiles have none; vLLM V0's front end takes 10 ms with the roofline model.
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\n").sim.frontend_latency_ns == 0);
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n").sim.frontend_latency_ns ==
        10'000'000);
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\ncost_model: {kind: linear}\n")
            .sim.frontend_latency_ns == 0);
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n"
                     "serving: {frontend_latency_us: 0}\n")
            .sim.frontend_latency_ns == 0);
  const auto r =
      resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {frontend_latency_us: 8500}\n");
  CHECK(r.sim.frontend_latency_ns == 8'500'000);
  // A profile's (what calibrate --from-run writes) is used when the setting is absent.
  const std::string dir = kvsim::test::temp_dir();
  const std::string gpu =
      kvsim::test::write_temp_file(dir, "gpu.yaml",
                                   "name: fitted\nmemory_bytes: 85899345920\npeak_tflops: {bf16: "
                                   "989}\nmemory_bandwidth_gb_s: 3350\n"
                                   "interconnect_bandwidth_gb_s: 450\npcie_bandwidth_gb_s: 64\n"
                                   "cost_model:\n  frontend_latency_us: 2500\n");
  CHECK(resolve_text("model: llama-3-8b\ngpu: " + gpu + "\n").sim.frontend_latency_ns == 2'500'000);
  CHECK(resolve_text("model: llama-3-8b\ngpu: " + gpu + "\nserving: {frontend_latency_us: 0}\n")
            .sim.frontend_latency_ns == 0);
  CHECK(resolve_text("model: llama-3-8b\ngpu: " + gpu + "\nengine: v0\n").sim.frontend_latency_ns ==
        2'500'000);
  // A profile whose fit found no front end (listed, 0) keeps 0 under V0 too.
  const std::string fitted_zero = kvsim::test::write_temp_file(
      dir, "gpu0.yaml",
      "name: fitted0\nmemory_bytes: 85899345920\npeak_tflops: {bf16: 989}\n"
      "memory_bandwidth_gb_s: 3350\ninterconnect_bandwidth_gb_s: 450\npcie_bandwidth_gb_s: 64\n"
      "cost_model:\n  provenance: {kind: calibrated, fitted_overheads: [frontend_latency_us]}\n");
  CHECK(resolve_text("model: llama-3-8b\ngpu: " + fitted_zero + "\nengine: v0\n")
            .sim.frontend_latency_ns == 0);
}

TEST_CASE("Engine host overheads given as settings replace the GPU profile's", "[run][overhead]") {
  auto r = resolve_text(
      "model: llama-3-8b\ngpu: h100-sxm\n"
      "serving: {step_overhead_us: 2000, context_token_overhead_us: 0.1}\n");
  REQUIRE(r.cost.roofline.step_overhead_s);
  CHECK(*r.cost.roofline.step_overhead_s == Approx(0.002));
  REQUIRE(r.cost.roofline.context_token_overhead_s);
  CHECK(*r.cost.roofline.context_token_overhead_s == Approx(0.1e-6));
  r = resolve_text("model: llama-3-8b\ngpu: h100-sxm\n");
  CHECK_FALSE(r.cost.roofline.step_overhead_s);
  CHECK_FALSE(r.cost.roofline.context_token_overhead_s);
  CHECK_THAT(kvsim::test::error_of([] {
               (void)resolve_text(
                   "model: llama-3-8b\ngpu: h100-sxm\nserving: {context_token_overhead_us: 0.1}\n"
                   "cost_model: linear:100:1:10\n");
             }),
             Catch::StartsWith("s.yaml:3:38: serving.context_token_overhead_us: the host overhead "
                               "is the roofline cost model's"));
}

TEST_CASE(
    "A hybrid model under vLLM V1: state pages in the pool, the raised block, no prefix cache",
    "[run][v1][hybrid]") {
  const std::string model =
      "model: " + kvsim::test::source_dir() + "/tests/config/data/hf/qwen3-next-80b-a3b.json\n";
  auto r = resolve_text(model + "gpu: h100-sxm\ntensor_parallel_size: 4\n");
  // 1 KV head of 256 per GPU (1,024 B per token per layer); a DeltaNet layer's state on one of 4
  // GPUs is 274,432 B: 16 × ceil(274,432 / 16,384) = 272 tokens per block.
  CHECK(r.deployment.block_size == 16);
  CHECK(r.deployment.engine_block_size() == 272);
  CHECK(r.sim.block_size == 272);
  CHECK_FALSE(r.sim.enable_prefix_caching);
  const kvsim::sim::BuiltDeployment d = kvsim::sim::build_deployment(r.deployment_inputs(), r.sim);
  const kvsim::memory::AllocatorOptions& a = d.allocator_options();
  // 36 DeltaNet layers in 3 groups of 12: three pages of 272 × 12 layers × 1,024 B per request.
  CHECK(a.block_size == 272);
  CHECK(a.state_blocks_per_seq == 3);
  CHECK(a.state_bytes_per_seq == 36ULL * 274'432);
  // Asking for prefix caching is refused where it was asked.
  CHECK_THROWS_WITH(resolve_text(model + "gpu: h100-sxm\ntensor_parallel_size: 4\n"
                                         "serving: {enable_prefix_caching: true}\n"),
                    Catch::Contains("s.yaml:4:34: serving.enable_prefix_caching") &&
                        Catch::Contains("per-sequence state"));
  // Engine v0 keeps the asked block size and no state pages (vLLM V0's separate state cache is
  // not modelled).
  r = resolve_text(model + "gpu: h100-sxm\ntensor_parallel_size: 4\nengine: v0\n");
  CHECK(r.sim.block_size == 16);
  CHECK(kvsim::sim::build_deployment(r.deployment_inputs(), r.sim)
            .allocator_options()
            .state_blocks_per_seq == 0);
}

TEST_CASE("The CUDA-graph mode: vLLM's default by release, --enforce-eager, V0 refuses it",
          "[run][v1]") {
  using kvsim::sim::CudaGraphMode;
  // FULL_AND_PIECEWISE from vLLM 0.11, PIECEWISE before.
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nvllm_version: 0.10.1\n")
            .sim.scheduler.cuda_graph_mode == CudaGraphMode::kPiecewise);
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nvllm_version: 0.11.0\n")
            .sim.scheduler.cuda_graph_mode == CudaGraphMode::kFullAndPiecewise);
  const auto given = resolve_text(
      "model: llama-3-8b\ngpu: h100-sxm\nserving: {cudagraph_mode: FULL_DECODE_ONLY}\n");
  CHECK(given.sim.scheduler.cuda_graph_mode == CudaGraphMode::kFullDecodeOnly);
  CHECK(given.sim.scheduler.cuda_graph_max_size == 512);
  const auto eager =
      resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {enforce_eager: true}\n");
  CHECK(eager.sim.scheduler.cuda_graph_mode == CudaGraphMode::kNone);
  CHECK(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n")
            .sim.scheduler.cuda_graph_mode == CudaGraphMode::kNotModelled);
  CHECK_THROWS_WITH(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {enforce_eager: true, "
                                 "cudagraph_mode: FULL}\n"),
                    Catch::Contains("--enforce-eager captures no graph"));
  CHECK_THROWS_WITH(resolve_text("model: llama-3-8b\ngpu: h100-sxm\nengine: v0\n"
                                 "serving: {cudagraph_mode: FULL}\n"),
                    Catch::Contains("vLLM V1's"));
  CHECK_THROWS_WITH(
      resolve_text("model: llama-3-8b\ngpu: h100-sxm\nserving: {cudagraph_mode: full}\n"),
      Catch::Contains("FULL_DECODE_ONLY"));
}
