#include "model/quantization.h"

#include <regex>

#include "common/checked_math.h"
#include "common/enum_names.h"
#include "common/int_math.h"
#include "common/strings.h"

namespace kvsim::model {
namespace {

constexpr EnumNames<QuantMethod, 7> kQuantNames{{{
    {QuantMethod::kNone, "none"},
    {QuantMethod::kFp8, "fp8"},
    {QuantMethod::kInt8, "int8"},
    {QuantMethod::kAwq, "awq"},
    {QuantMethod::kGptq, "gptq"},
    {QuantMethod::kMxfp4, "mxfp4"},
    {QuantMethod::kNvfp4, "nvfp4"},
}}};

constexpr const char* kWhat = "a quantized tensor's bytes";

// `pattern` matches a prefix of `name`; "*" stands for one or more characters other than '.'.
bool matches_prefix(std::string_view name, std::string_view pattern) {
  if (pattern.empty()) return true;
  if (pattern[0] == '*') {
    for (std::size_t i = 1; i <= name.size() && name[i - 1] != '.'; ++i) {
      if (matches_prefix(name.substr(i), pattern.substr(1))) return true;
    }
    return false;
  }
  return !name.empty() && name[0] == pattern[0] &&
         matches_prefix(name.substr(1), pattern.substr(1));
}

// A plain pattern matched anywhere in `name` (vLLM: `pattern in prefix`).
bool contains_pattern(std::string_view name, std::string_view pattern) {
  for (std::size_t at = 0; at < name.size(); ++at) {
    if (matches_prefix(name.substr(at), pattern)) return true;
  }
  return false;
}

bool matches(const std::string& name, const std::string& pattern) {
  if (pattern.starts_with("re:")) return std::regex_match(name, std::regex(pattern.substr(3)));
  return contains_pattern(name, pattern);
}

}  // namespace

std::string_view quant_method_name(QuantMethod method) {
  return kQuantNames.name(method);
}

std::optional<QuantMethod> parse_quant_method(std::string_view name) {
  const std::string n = to_lower(trim(name));
  if (auto m = kQuantNames.parse(n)) return m;
  if (n == "modelopt" || n == "fbgemm_fp8" || n == "ptpc_fp8") return QuantMethod::kFp8;
  if (n == "w8a8_int8" || n == "w8a8-int8") return QuantMethod::kInt8;
  if (n == "awq_marlin") return QuantMethod::kAwq;
  if (n == "gptq_marlin") return QuantMethod::kGptq;
  if (n == "modelopt_fp4") return QuantMethod::kNvfp4;
  return std::nullopt;
}

std::vector<std::string> quant_method_names() {
  return kQuantNames.names();
}

Quantization default_quantization(QuantMethod method) {
  Quantization q;
  q.method = method;
  switch (method) {
    case QuantMethod::kNone:
      break;
    case QuantMethod::kFp8:
      q.scales = ScaleLayout::kPerTensor;
      break;
    case QuantMethod::kInt8:
      q.scales = ScaleLayout::kPerChannel;
      break;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      q.scales = ScaleLayout::kGroup, q.group_size = 128;
      break;
    case QuantMethod::kMxfp4:
      q.scales = ScaleLayout::kGroup, q.group_size = 32;
      break;
    case QuantMethod::kNvfp4:
      q.scales = ScaleLayout::kGroup, q.group_size = 16;
      break;
  }
  return q;
}

Dtype quant_weight_dtype(QuantMethod method) {
  switch (method) {
    case QuantMethod::kFp8:
      return Dtype::kFp8;
    case QuantMethod::kInt8:
      return Dtype::kInt8;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      return Dtype::kInt4;
    case QuantMethod::kMxfp4:
    case QuantMethod::kNvfp4:
      return Dtype::kFp4;
    case QuantMethod::kNone:
      break;
  }
  return Dtype::kBf16;
}

std::uint64_t quantized_tensor_bytes(const Quantization& q, std::uint64_t elements,
                                     std::uint64_t in_features, std::uint64_t matrices) {
  std::uint64_t bytes = bytes_for_elements(elements, quant_weight_dtype(q.method));
  const std::uint64_t in = in_features > 0 ? in_features : 1;
  const std::uint64_t out = ceil_div(elements, in);
  std::uint64_t groups = 0;
  if (q.scales == ScaleLayout::kGroup && q.group_size > 0) {
    groups = ceil_div(elements, static_cast<std::uint64_t>(q.group_size));
  }
  std::uint64_t scale_bytes = 0;
  switch (q.method) {
    case QuantMethod::kFp8:
    case QuantMethod::kInt8:
      if (q.scales == ScaleLayout::kPerTensor) scale_bytes = checked_mul(4, matrices, kWhat);
      if (q.scales == ScaleLayout::kPerChannel) scale_bytes = checked_mul(4, out, kWhat);
      if (q.scales == ScaleLayout::kGroup) scale_bytes = checked_mul(4, groups, kWhat);
      if (q.scales == ScaleLayout::kBlock && q.block_n > 0 && q.block_k > 0) {
        // Blocks of each matrix: its rows are out / matrices.
        const std::uint64_t rows = ceil_div(out, matrices > 0 ? matrices : 1);
        scale_bytes =
            checked_product({4, matrices, ceil_div(rows, static_cast<std::uint64_t>(q.block_n)),
                             ceil_div(in, static_cast<std::uint64_t>(q.block_k))},
                            kWhat);
      }
      break;
    case QuantMethod::kAwq:
      scale_bytes =
          checked_mul(2, groups, kWhat) + ceil_div(groups, std::uint64_t{2});  // fp16 + 4-bit zeros
      break;
    case QuantMethod::kGptq:
      scale_bytes = checked_mul(2, groups, kWhat) + ceil_div(groups, std::uint64_t{2}) +
                    checked_product({4, in, matrices}, kWhat);  // + g_idx
      break;
    case QuantMethod::kMxfp4:
      scale_bytes = groups;
      break;
    case QuantMethod::kNvfp4:
      scale_bytes = groups + checked_mul(8, matrices, kWhat);
      break;
    case QuantMethod::kNone:
      return bytes_for_elements(elements, Dtype::kBf16);
  }
  bytes = checked_add(bytes, scale_bytes, kWhat);
  return bytes;
}

double quantized_bytes_per_element(const Quantization& q, std::uint64_t in_features) {
  double per = bits_per_element(quant_weight_dtype(q.method)) / 8.0;
  const double in = static_cast<double>(in_features > 0 ? in_features : 1);
  const double g = q.group_size > 0 ? static_cast<double>(q.group_size) : 1.0;
  switch (q.method) {
    case QuantMethod::kFp8:
    case QuantMethod::kInt8:
      if (q.scales == ScaleLayout::kPerChannel) per += 4.0 / in;
      if (q.scales == ScaleLayout::kGroup) per += 4.0 / g;
      if (q.scales == ScaleLayout::kBlock && q.block_n > 0 && q.block_k > 0) {
        per += 4.0 / static_cast<double>(q.block_n * q.block_k);
      }
      break;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:
      per += 2.5 / g;  // GPTQ's g_idx (4 B per input row) is left out: 4 / out per element
      break;
    case QuantMethod::kMxfp4:
    case QuantMethod::kNvfp4:
      per += 1.0 / g;
      break;
    case QuantMethod::kNone:
      return 2.0;
  }
  return per;
}

bool is_quantized_module(const Quantization& q, std::int64_t layer, std::string_view module) {
  if (!q.enabled()) return false;
  if (q.not_converted.empty()) return true;
  const std::string name =
      layer < 0 ? std::string(module)
                : "model.layers." + std::to_string(layer) + "." + std::string(module);
  for (const std::string& pattern : q.not_converted) {
    if (matches(name, pattern)) return false;
  }
  return true;
}

std::string quantization_summary(const Quantization& q) {
  std::string s(quant_method_name(q.method));
  if (!q.enabled()) return s;
  s += " (" + std::string(dtype_name(quant_weight_dtype(q.method)));
  switch (q.scales) {
    case ScaleLayout::kNone:
      break;
    case ScaleLayout::kPerTensor:
      s += ", per-tensor scales";
      break;
    case ScaleLayout::kPerChannel:
      s += ", per-channel scales";
      break;
    case ScaleLayout::kGroup:
      s += ", group " + std::to_string(q.group_size);
      break;
    case ScaleLayout::kBlock:
      s += ", block " + std::to_string(q.block_n) + "x" + std::to_string(q.block_k);
      break;
  }
  return s + ")";
}

}  // namespace kvsim::model
