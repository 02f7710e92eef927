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
