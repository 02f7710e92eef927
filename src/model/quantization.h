#pragma once
// Weight quantization of a model's linear layers (vLLM's --quantization), as plain data: the
// method, its scale layout, and the modules kept at the model's dtype. Filled by config/ (an HF
// config's quantization_config, or --quantization); read by the weights math and the cost model.
//
// What is quantized (vLLM's layout): the linear layers of attention (Q/K/V/O, MLA projections),
// the dense MLP, routed and shared experts, Mamba in/out projections. Never: embeddings, the LM
// head, norms, biases, MoE routers, convolutions — they stay in ModelSpec::weight_dtype — nor any
// module a not_converted pattern names.
//
// Bytes of one quantized linear tensor of E elements with `in` input features (out = E / in):
//   fp8    1 B/element; scales fp32: per tensor 4 B, per channel 4 B × out, per block
//          4 B × ceil(out / block_n) × ceil(in / block_k)
//   int8   1 B/element; fp32 scales per channel (4 B × out) or per tensor (4 B)
//   awq    0.5 B/element; per group of group_size input elements an fp16 scale and a 4-bit zero
//          point (2.5 B per group)
//   gptq   0.5 B/element; per group an fp16 scale and a 4-bit zero point (vLLM allocates qzeros
//          even when symmetric), plus g_idx: one int32 per input feature
//   mxfp4  0.5 B/element (FP4 E2M1); one E8M0 scale (1 B) per 32 elements
//   nvfp4  0.5 B/element (FP4 E2M1); one FP8 E4M3 scale (1 B) per 16 elements, plus two fp32
//          per-tensor scales (weight_scale_2, input_scale: 8 B)
// Groups and blocks are counted over the rank's elements of the tensor (exact when the shards
// are whole groups, as vLLM requires).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.h"

namespace kvsim::model {

enum class QuantMethod : std::uint8_t { kNone, kFp8, kInt8, kAwq, kGptq, kMxfp4, kNvfp4 };

enum class ScaleLayout : std::uint8_t { kNone, kPerTensor, kPerChannel, kGroup, kBlock };

struct Quantization {
  QuantMethod method = QuantMethod::kNone;
  ScaleLayout scales = ScaleLayout::kNone;
  std::int64_t group_size = 0;  // kGroup: input elements per scale
  std::int64_t block_n = 0;     // kBlock: output rows per scale block
  std::int64_t block_k = 0;     // kBlock: input columns per scale block
  // Module patterns kept at the model's dtype (HF modules_to_not_convert / ignore /
  // exclude_modules): a plain pattern matches a module whose full name
  // ("model.layers.3.self_attn.q_proj") contains it, "*" standing for any layer number; a
  // "re:" pattern is a regular expression that must match the whole name.
  std::vector<std::string> not_converted;
  std::string origin;  // where it came from: "config.json" or "--quantization"

  bool enabled() const { return method != QuantMethod::kNone; }
  bool operator==(const Quantization&) const = default;
};

// "none", "fp8", "int8", "awq", "gptq", "mxfp4", "nvfp4".
std::string_view quant_method_name(QuantMethod method);
// The names above and vLLM's aliases ("modelopt" → fp8, "modelopt_fp4" → nvfp4, "awq_marlin",
// "gptq_marlin", "fbgemm_fp8", "w8a8_int8"), case-insensitive; nullopt for anything else.
std::optional<QuantMethod> parse_quant_method(std::string_view name);
// The canonical names, for errors and --help.
std::vector<std::string> quant_method_names();

// A method's layout as vLLM serves a checkpoint quantized online or without details: fp8 per
// tensor, int8 per channel, awq / gptq groups of 128, mxfp4 groups of 32, nvfp4 groups of 16.
Quantization default_quantization(QuantMethod method);

// Element type of the quantized weights: fp8, int8, int4 (awq/gptq), fp4 (mxfp4/nvfp4).
Dtype quant_weight_dtype(QuantMethod method);

// Bytes of a quantized linear tensor of `elements` elements standing for `matrices` matrices
// (all experts' up projections, say) of `in_features` input features each: weights plus scales,
// zero points and indices as the header comment says (per-tensor constants once per matrix).
std::uint64_t quantized_tensor_bytes(const Quantization& q, std::uint64_t elements,
                                     std::uint64_t in_features, std::uint64_t matrices = 1);

// Average bytes per weight element of a large quantized linear tensor with `in_features` input
// features (per-tensor constants left out): what the cost model reads per weight element.
double quantized_bytes_per_element(const Quantization& q, std::uint64_t in_features);

// True when the linear module `module` (e.g. "self_attn.q_proj", "mlp.experts") of decoder layer
// `layer` is quantized: the method is enabled and no not_converted pattern matches
// "model.layers.<layer>.<module>" (layer < 0: the module is outside the layers, e.g. "lm_head").
bool is_quantized_module(const Quantization& q, std::int64_t layer, std::string_view module);

// One line for reports: "none", "fp8 (per-tensor)", "awq (int4, group 128)", ...
std::string quantization_summary(const Quantization& q);

}  // namespace kvsim::model
