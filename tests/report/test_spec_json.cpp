// report/spec_json.cpp: the model and hardware objects of every report's inputs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cost/cost_fixtures.h"
#include "model/weights.h"
#include "report/spec_json.h"

using namespace kvsim;
using kvsim::report::Json;

TEST_CASE("spec json: a dense GQA model: attention, layer counts, parameters and weights",
          "[report][spec]") {
  const model::ModelSpec m = test::llama3_70b();
  const Json j = report::model_json(m);
  CHECK(j["name"] == "llama-3-70b");
  CHECK(j["num_layers"] == 80);
  CHECK(j["hidden_size"] == 8192);
  CHECK(j["weight_dtype"] == "bf16");
  CHECK(j["attention"]["kind"] == "gqa");
  CHECK(j["attention"]["num_q_heads"] == 64);
  CHECK(j["attention"]["num_kv_heads"] == 8);
  CHECK(j["attention"]["v_head_dim"] == 128);  // 0 in the spec: the head dim
  CHECK_FALSE(j["attention"].contains("mla"));
  CHECK_FALSE(j["attention"].contains("k_eq_v"));
  CHECK(j["layer_kinds"] == Json{{"full", 80}, {"sliding", 0}, {"none", 0}});
  CHECK_FALSE(j.contains("layer_pattern"));  // all one kind
  CHECK_FALSE(j.contains("moe"));
  CHECK_FALSE(j.contains("ssm"));
  CHECK(j["num_parameters"] == model::parameter_counts(m).total());
  CHECK(j["weights_bytes"] == model::weights_bytes(m));
}

TEST_CASE("spec json: mixed layers list their pattern; MLA shows its ranks", "[report][spec]") {
  model::ModelSpec m = test::llama3_70b();
  m.num_layers = 3;
  m.layer_kinds = {model::LayerKind::kSlidingWindow, model::LayerKind::kSlidingWindow,
                   model::LayerKind::kFullAttention};
  m.attention.sliding_window = 4096;
  const Json j = report::model_json(m);
  CHECK(j["layer_kinds"] == Json{{"full", 1}, {"sliding", 2}, {"none", 0}});
  CHECK(j["layer_pattern"] == Json{"sliding", "sliding", "full"});
  CHECK(j["attention"]["sliding_window"] == 4096);

  const Json ds = report::model_json(test::deepseek_v2_lite());
  CHECK(ds["attention"]["kind"] == "mla");
  REQUIRE(ds["attention"].contains("mla"));
  CHECK(ds["attention"]["mla"]["kv_lora_rank"] ==
        test::deepseek_v2_lite().attention.mla.kv_lora_rank);
  CHECK(ds.contains("moe"));
}

TEST_CASE("spec json: hardware peaks by dtype name, no compute capability as null",
          "[report][spec]") {
  model::HardwareSpec hw = test::h100_sxm();
  const Json j = report::hardware_json(hw);
  CHECK(j["name"] == "h100-sxm");
  CHECK(j["memory_bytes"] == 80'000'000'000ULL);
  CHECK(j["memory_bandwidth_bytes_per_s"] == 3.35e12);
  CHECK(j["peak_flops"] == Json{{"fp16", 989.4e12}, {"bf16", 989.4e12}, {"fp8", 1978.9e12}});
  CHECK(j["pcie_bandwidth_bytes_per_s"] == 64e9);
  CHECK(j["compute_capability"].is_null());
  CHECK(j["cost_model_provenance"]["kind"] == "datasheet");
  hw.compute_capability = 90;
  CHECK(report::hardware_json(hw)["compute_capability"] == 90);
}
