#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/hf_import.h"
#include "model/weights.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::model;

using kvsim::test::error_of;

namespace {

// A small Llama config with `quant` as its quantization_config (JSON object text).
std::string llama_with(const std::string& quant, const std::string& model_type = "llama") {
  return R"({"model_type": ")" + model_type +
         R"(", "num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
  "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
  "quantization_config": )" +
         quant + "}";
}

ModelSpec parse(const std::string& text) {
  return config::parse_hf_config(text, "q/config.json");
}

}  // namespace

TEST_CASE("HF quantization_config: fp8 per tensor and in blocks", "[config][hf][quant]") {
  const ModelSpec per_tensor = parse(llama_with(R"({"quant_method": "fp8", "fmt": "e4m3",
      "activation_scheme": "dynamic", "ignored_layers": ["lm_head"]})"));
  CHECK(per_tensor.quantization.method == QuantMethod::kFp8);
  CHECK(per_tensor.quantization.scales == ScaleLayout::kPerTensor);
  CHECK(per_tensor.quantization.not_converted == std::vector<std::string>{"lm_head"});
  CHECK(per_tensor.quantization.origin == "config.json");
  CHECK(per_tensor.weight_dtype == Dtype::kBf16);  // the rest of the model
  const ModelSpec block = parse(llama_with(
      R"({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})", "qwen3"));
  CHECK(block.quantization.scales == ScaleLayout::kBlock);
  CHECK(block.quantization.block_n == 128);
  CHECK(block.quantization.block_k == 128);
  // Never costed as bf16: smaller than the same model unquantized.
  ModelSpec plain = block;
  plain.quantization = {};
  CHECK(weights_bytes(block) < weights_bytes(plain));
}

TEST_CASE("HF quantization_config: AWQ, GPTQ, compressed-tensors and ModelOpt",
          "[config][hf][quant]") {
  const ModelSpec awq = parse(llama_with(R"({"quant_method": "awq", "bits": 4, "group_size": 64,
      "zero_point": true, "version": "gemm", "modules_to_not_convert": ["visual"]})",
                                         "mistral"));
  CHECK(awq.quantization.method == QuantMethod::kAwq);
  CHECK(awq.quantization.group_size == 64);
  CHECK(awq.quantization.not_converted == std::vector<std::string>{"visual"});
  const ModelSpec gptq = parse(llama_with(R"({"quant_method": "gptq", "bits": 4,
      "group_size": 128, "desc_act": false, "sym": true})",
                                          "qwen2"));
  CHECK(gptq.quantization.method == QuantMethod::kGptq);
  CHECK(gptq.quantization.group_size == 128);
  const ModelSpec ct = parse(llama_with(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "ignore": ["lm_head", "re:.*mlp.gate$"],
      "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": true},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "token",
                              "dynamic": true}}}})"));
  CHECK(ct.quantization.method == QuantMethod::kFp8);
  CHECK(ct.quantization.scales == ScaleLayout::kPerChannel);
  CHECK(ct.quantization.not_converted.size() == 2);
  const ModelSpec w8a8 = parse(llama_with(R"({"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int",
        "strategy": "channel"}}}})"));
  CHECK(w8a8.quantization.method == QuantMethod::kInt8);
  const ModelSpec nvfp4 =
      parse(llama_with(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
      "exclude_modules": ["lm_head"]})"));
  CHECK(nvfp4.quantization.method == QuantMethod::kNvfp4);
  CHECK(nvfp4.quantization.group_size == 16);
}

TEST_CASE("HF quantization_config errors: a method kvsim cannot cost is never ignored",
          "[config][hf][quant]") {
  CHECK(error_of([] { parse(llama_with(R"({"quant_method": "bitsandbytes"})")); }) ==
        "q/config.json:4:43: quantization_config.quant_method: unsupported quantization "
        "'bitsandbytes'; expected one of fp8, fbgemm_fp8, awq, gptq, compressed-tensors, "
        "modelopt, modelopt_fp4, mxfp4");
  CHECK(error_of([] { parse(llama_with(R"({"quant_method": "awq", "bits": 8})")); }) ==
        "q/config.json:4:58: quantization_config.bits: expected 4 (int4 weights, w4a16), got 8");
  CHECK(error_of([] {
          parse(llama_with(R"({"quant_method": "awk"})"));
        }).find("did you mean 'awq'?") != std::string::npos);
}

TEST_CASE("gpt-oss-120b: mxfp4 experts, everything else not converted, bytes unchanged",
          "[config][hf][quant]") {
  KVSIM_REQUIRE_SHARED(path, "models/openai--gpt-oss-120b.json");
  const ModelSpec m = parse(test::slurp(path));
  CHECK(m.quantization.method == QuantMethod::kMxfp4);
  CHECK(m.quantization.group_size == 32);
  CHECK(m.quantization.not_converted == std::vector<std::string>{"model.layers.*.self_attn",
                                                                 "model.layers.*.mlp.router",
                                                                 "model.embed_tokens", "lm_head"});
  CHECK(m.moe.has_expert_dtype);
  CHECK_FALSE(is_quantized_module(m.quantization, 5, "self_attn.q_proj"));
  CHECK(is_quantized_module(m.quantization, 5, "mlp.experts"));
  // The experts were already costed in MXFP4 (moe.expert_dtype); attention stays bf16.
  ModelSpec before = m;
  before.quantization = {};
  CHECK(weights_bytes(m) == weights_bytes(before));
}
