#include <catch2/catch.hpp>

#include "model/quantization.h"
#include "model/weights.h"

using namespace kvsim;
using namespace kvsim::model;

namespace {

// Meta-Llama-3.1-8B (its config.json): 32 layers, hidden 4096, MLP 14336, vocab 128256,
// 32 query / 8 KV heads of 128, untied, bf16.
ModelSpec llama31_8b() {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  m.max_context = 131072;
  m.weight_dtype = Dtype::kBf16;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.num_q_heads = 32;
  m.attention.num_kv_heads = 8;
  m.attention.head_dim = 128;
  m.layer_kinds.assign(32, LayerKind::kFullAttention);
  return m;
}

// Per layer the seven linear tensors: q 4096×4096 = 16,777,216, k and v 4096×1024 = 4,194,304,
// o 16,777,216, gate/up/down 4096×14336 = 58,720,256: 218,103,808 × 32 = 6,979,321,856.
// The rest stays bf16: embeddings and LM head 2 × 128256 × 4096 = 1,050,673,152 plus norms
// 65 × 4096 = 266,240, i.e. 1,050,939,392 × 2 B = 2,101,878,784 B.
constexpr std::uint64_t kLinear = 6'979'321'856ULL;
constexpr std::uint64_t kRestBytes = 2'101'878'784ULL;

Quantization method(QuantMethod q) {
  return default_quantization(q);
}

}  // namespace

TEST_CASE("Llama-3.1-8B weights: bf16, fp8 per tensor, AWQ and GPTQ int4 g128, by hand",
          "[model][weights][quant]") {
  ModelSpec m = llama31_8b();
  CHECK(parameter_counts(m).total() == kLinear + 1'050'939'392ULL);  // 8,030,261,248
  CHECK(weights_bytes(m) == 2 * (kLinear + 1'050'939'392ULL));       // 16,060,522,496
  // fp8: 1 B per linear element plus one fp32 scale per tensor (7 × 32 × 4 B = 896 B).
  m.quantization = method(QuantMethod::kFp8);
  CHECK(weights_bytes(m) == kLinear + 896 + kRestBytes);  // 9,081,201,536
  // AWQ g128: 0.5 B per element; 6,979,321,856 / 128 = 54,525,952 groups of an fp16 scale and a
  // 4-bit zero point (2.5 B): 136,314,880 B.
  m.quantization = method(QuantMethod::kAwq);
  CHECK(weights_bytes(m) == kLinear / 2 + 136'314'880ULL + kRestBytes);  // 5,727,854,592
  // GPTQ adds g_idx, one int32 per input feature: (6 × 4096 + 14336) × 4 B × 32 = 4,980,736 B.
  m.quantization = method(QuantMethod::kGptq);
  CHECK(weights_bytes(m) == kLinear / 2 + 136'314'880ULL + 4'980'736ULL + kRestBytes);
  // Parameter counts do not depend on how they are stored.
  CHECK(parameter_counts(m).total() == kLinear + 1'050'939'392ULL);
}

TEST_CASE("fp8 per GPU at TP 2 and block scales, by hand", "[model][weights][quant]") {
  ModelSpec m = llama31_8b();
  m.quantization = method(QuantMethod::kFp8);
  // TP 2: every linear tensor halves (3,489,660,928 elements), each shard keeps its per-tensor
  // scale (896 B); embeddings and LM head split (2 × 262,668,288), norms replicated (266,240):
  // (525,336,576 + 266,240) × 2 B = 1,051,205,632 B.
  CHECK(weights_bytes_per_gpu(m, 2) == 3'489'660'928ULL + 896 + 1'051'205'632ULL);
  // 128×128 blocks: q and o 32 × 32 = 1024 blocks each, k and v 8 × 32 = 256, gate and up
  // 112 × 32 = 3584, down 32 × 112 = 3584: 2048 + 512 + 10752 = 13,312 × 4 B × 32 layers.
  m.quantization.scales = ScaleLayout::kBlock;
  m.quantization.block_n = 128;
  m.quantization.block_k = 128;
  CHECK(weights_bytes(m) == kLinear + 13'312ULL * 4 * 32 + kRestBytes);
}

TEST_CASE("modules not converted stay at the model's dtype", "[model][weights][quant]") {
  ModelSpec m = llama31_8b();
  m.quantization = method(QuantMethod::kFp8);
  // Attention of every layer kept in bf16: q, k, v, o = 41,943,040 elements per layer.
  m.quantization.not_converted = {"model.layers.*.self_attn"};
  const std::uint64_t attn = 41'943'040ULL * 32;
  CHECK(weights_bytes(m) == (kLinear - attn) + 2 * attn + 3 * 32 * 4 + kRestBytes);
  // One layer's down projection by a regular expression.
  m.quantization.not_converted = {"re:.*layers\\.0\\.mlp\\.down_proj"};
  CHECK(weights_bytes(m) ==
        (kLinear - 58'720'256ULL) + 2 * 58'720'256ULL + (7 * 32 - 1) * 4 + kRestBytes);
  CHECK(is_quantized_module(m.quantization, 1, "mlp.down_proj"));
  CHECK_FALSE(is_quantized_module(m.quantization, 0, "mlp.down_proj"));
  CHECK_FALSE(is_quantized_module(Quantization{}, 0, "mlp.down_proj"));
}

TEST_CASE("mxfp4 and nvfp4 bytes: 4-bit elements and 8-bit group scales", "[model][quant]") {
  // 4096 × 4096: 8,388,608 B of FP4, plus 524,288 E8M0 scales (mxfp4, /32) or 1,048,576 E4M3
  // scales and two fp32 per-tensor scales (nvfp4, /16).
  CHECK(quantized_tensor_bytes(method(QuantMethod::kMxfp4), 16'777'216ULL, 4096) ==
        8'388'608ULL + 524'288ULL);
  CHECK(quantized_tensor_bytes(method(QuantMethod::kNvfp4), 16'777'216ULL, 4096) ==
        8'388'608ULL + 1'048'576ULL + 8);
  // int8 per channel: 4096 fp32 scales.
  CHECK(quantized_tensor_bytes(method(QuantMethod::kInt8), 16'777'216ULL, 4096) ==
        16'777'216ULL + 4096 * 4);
  CHECK(quantized_bytes_per_element(method(QuantMethod::kAwq), 4096) == 0.5 + 2.5 / 128);
  CHECK(quantized_bytes_per_element(method(QuantMethod::kFp8), 4096) == 1.0);
}

TEST_CASE("quantization names: vLLM's and their aliases", "[model][quant]") {
  CHECK(parse_quant_method("fp8") == QuantMethod::kFp8);
  CHECK(parse_quant_method("modelopt_fp4") == QuantMethod::kNvfp4);
  CHECK(parse_quant_method("AWQ_Marlin") == QuantMethod::kAwq);
  CHECK(parse_quant_method("gptq_marlin") == QuantMethod::kGptq);
  CHECK(parse_quant_method("w8a8_int8") == QuantMethod::kInt8);
  CHECK_FALSE(parse_quant_method("fp6").has_value());
  CHECK(quant_method_names() ==
        std::vector<std::string>{"none", "fp8", "int8", "awq", "gptq", "mxfp4", "nvfp4"});
  Quantization q = method(QuantMethod::kAwq);
  CHECK(quantization_summary(q) == "awq (int4, group 128)");
  CHECK(quantization_summary(Quantization{}) == "none");
}
