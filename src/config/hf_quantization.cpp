// An HF config's quantization_config → model::Quantization, for every family (hf_families.h).
// A method kvsim cannot cost is an error at its quant_method: a quantized checkpoint is never
// silently costed at its torch_dtype.
#include <algorithm>
#include <string>
#include <vector>

#include "common/strings.h"
#include "config/hf_families.h"

namespace kvsim::config::hf {
namespace {

using model::QuantMethod;
using model::ScaleLayout;

const std::vector<std::string>& known_methods() {
  static const std::vector<std::string> kMethods = {
      "fp8",      "fbgemm_fp8",   "awq",  "gptq", "compressed-tensors",
      "modelopt", "modelopt_fp4", "mxfp4"};
  return kMethods;
}

// The strings of list `key` (absent or null: none).
std::vector<std::string> string_list(const JsonReader& r, const std::string& key) {
  std::vector<std::string> out;
  const Json* v = r.optional_value(key);
  if (v == nullptr) return out;
  if (!v->is_array())
    throw r.error(key, "expected a list of module names, got " + describe_json(*v));
  for (const Json& item : *v) {
    if (!item.is_string()) {
      throw r.error(key, "expected a list of module names, got an item " + describe_json(item));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

void read_not_converted(const JsonReader& q, model::Quantization& out) {
  for (const char* key :
       {"modules_to_not_convert", "ignore", "ignored_layers", "exclude_modules"}) {
    for (std::string& name : string_list(q, key)) out.not_converted.push_back(std::move(name));
  }
}

void read_group(const JsonReader& q, model::Quantization& out, std::int64_t fallback) {
  out.scales = ScaleLayout::kGroup;
  out.group_size = fallback;
  if (q.has("group_size")) {
    const Json& v = *q.optional_value("group_size");
    if (v.is_number_integer() && v.get<std::int64_t>() == -1) {
      throw q.error("group_size", "per-channel scales (group_size -1) are not modelled for " +
                                      std::string(model::quant_method_name(out.method)) +
                                      "; expected a positive group size");
    }
    out.group_size = q.get_int("group_size", 1, 1 << 20);
  }
}

void read_int4(const JsonReader& q, model::Quantization& out) {
  const std::int64_t bits = q.optional_int("bits", 1, 64).value_or(4);
  if (bits != 4) {
    throw q.error("bits", "expected 4 (int4 weights, w4a16), got " + std::to_string(bits));
  }
  read_group(q, out, 128);
}

void read_fp8(const JsonReader& q, model::Quantization& out) {
  // The fp8 format, by its short name or PyTorch's (MiniMax-M2: float8_e4m3fn); one byte either
  // way.
  static const std::vector<std::string> kFormats = {"e4m3", "e5m2", "float8_e4m3fn", "float8_e5m2"};
  if (auto fmt = q.optional_string("fmt");
      fmt && std::find(kFormats.begin(), kFormats.end(), to_lower(*fmt)) == kFormats.end()) {
    throw q.error("fmt", "expected one of " + join(kFormats, "|") + ", got '" + *fmt + "'");
  }
  const Json* block = q.optional_value("weight_block_size");
  if (block == nullptr) return;  // per-tensor scales (default_quantization)
  if (!block->is_array() || block->size() != 2 || !(*block)[0].is_number_integer() ||
      !(*block)[1].is_number_integer() || (*block)[0].get<std::int64_t>() <= 0 ||
      (*block)[1].get<std::int64_t>() <= 0) {
    throw q.error("weight_block_size",
                  "expected [rows, columns] of positive integers, got " + describe_json(*block));
  }
  out.scales = ScaleLayout::kBlock;
  out.block_n = (*block)[0].get<std::int64_t>();
  out.block_k = (*block)[1].get<std::int64_t>();
}

// compressed-tensors: the first config group's weights {num_bits, type, strategy, group_size,
// block_structure} and whether activations are quantized (input_activations).
void read_compressed_tensors(const JsonReader& q, model::Quantization& out) {
  const JsonReader groups = q.get_object("config_groups");
  const Json* all = q.optional_value("config_groups");
  if (all->empty()) throw q.error("config_groups", "expected at least one quantization group");
  const JsonReader group = groups.get_object(all->begin().key());
  const JsonReader w = group.get_object("weights");
  const std::int64_t bits = w.get_int("num_bits", 1, 64);
  const std::string type = to_lower(w.optional_string("type").value_or("int"));
  const std::string strategy = to_lower(w.optional_string("strategy").value_or("tensor"));
  if (bits == 8 && type == "float") {
    out = model::default_quantization(QuantMethod::kFp8);
  } else if (bits == 8 && type == "int") {
    out = model::default_quantization(QuantMethod::kInt8);
  } else if (bits == 4 && type == "float") {
    out = model::default_quantization(QuantMethod::kNvfp4);
  } else if (bits == 4 && type == "int") {
    // pack-quantized w4a16: int4 with fp16 group scales (counted with AWQ's zero points).
    out = model::default_quantization(QuantMethod::kAwq);
  } else {
    throw w.error("num_bits", "expected 8 (fp8/int8) or 4 (int4/fp4) bits of type int|float, got " +
                                  std::to_string(bits) + " bits of type " + type);
  }
  if (strategy == "tensor" && bits == 8) {
    out.scales = ScaleLayout::kPerTensor;
  } else if (strategy == "channel" && bits == 8) {
    out.scales = ScaleLayout::kPerChannel;
  } else if (strategy == "group" || strategy == "tensor_group") {
    read_group(w, out, out.group_size);
  } else if (strategy == "block" && bits == 8) {
    const Json* block = w.optional_value("block_structure");
    if (block == nullptr || !block->is_array() || block->size() != 2 ||
        !(*block)[0].is_number_integer() || !(*block)[1].is_number_integer() ||
        (*block)[0].get<std::int64_t>() <= 0 || (*block)[1].get<std::int64_t>() <= 0) {
      throw w.error("block_structure", "expected [rows, columns] of positive integers");
    }
    out.scales = ScaleLayout::kBlock;
    out.block_n = (*block)[0].get<std::int64_t>();
    out.block_k = (*block)[1].get<std::int64_t>();
  } else {
    throw w.error("strategy", "expected tensor|channel|block (8 bits) or group (4 bits), got '" +
                                  strategy + "'");
  }
}

}  // namespace

void read_quantization(const JsonReader& r, Import& im) {
  if (!r.has("quantization_config")) return;
  const JsonReader q = r.get_object("quantization_config");
  const std::string method = q.get_string("quant_method");
  const std::string m = to_lower(method);
  model::Quantization out;
  if (m == "fp8") {
    out = model::default_quantization(QuantMethod::kFp8);
    read_fp8(q, out);
  } else if (m == "fbgemm_fp8") {
    out = model::default_quantization(QuantMethod::kFp8);
    out.scales = ScaleLayout::kPerChannel;
  } else if (m == "awq" || m == "gptq") {
    out = model::default_quantization(m == "awq" ? QuantMethod::kAwq : QuantMethod::kGptq);
    read_int4(q, out);
  } else if (m == "mxfp4") {
    out = model::default_quantization(QuantMethod::kMxfp4);
  } else if (m == "modelopt" || m == "modelopt_fp4") {
    const std::string algo =
        to_lower(q.optional_string("quant_algo").value_or(m == "modelopt_fp4" ? "NVFP4" : "FP8"));
    if (algo == "fp8") {
      out = model::default_quantization(QuantMethod::kFp8);
    } else if (algo == "nvfp4") {
      out = model::default_quantization(QuantMethod::kNvfp4);
      read_group(q, out, 16);
    } else {
      throw q.error("quant_algo", "expected FP8 or NVFP4, got '" + algo + "'");
    }
  } else if (m == "compressed-tensors") {
    read_compressed_tensors(q, out);
  } else {
    throw q.error("quant_method", "unsupported quantization '" + method + "'" +
                                      did_you_mean(m, known_methods()) + "; expected one of " +
                                      join(known_methods(), ", "));
  }
  read_not_converted(q, out);
  out.origin = "config.json";
  im.m.quantization = out;
}

}  // namespace kvsim::config::hf
