#include "cost/ops.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/enum_names.h"
#include "common/error.h"

namespace kvsim::cost {
namespace {

constexpr EnumNames<OpClass, kNumOpClasses> kNames{{{
    {OpClass::kGemm, "gemm"},
    {OpClass::kAttnPrefill, "attn_prefill"},
    {OpClass::kAttnDecode, "attn_decode"},
    {OpClass::kAllreduce, "allreduce"},
    {OpClass::kMemcpy, "memcpy"},
    {OpClass::kElementwise, "elementwise"},
    {OpClass::kMoe, "moe"},
}}};

double safe_log10(double x) {
  return std::log10(std::max(x, 1.0));
}

}  // namespace

std::string_view op_class_name(OpClass op) {
  return kNames.name(op);
}

std::optional<OpClass> parse_op_class(std::string_view name) {
  return kNames.parse(name);
}

std::vector<std::string> op_class_names() {
  return kNames.names();
}

bool has_compute_roof(OpClass op) {
  return op == OpClass::kGemm || is_attention(op) || op == OpClass::kMoe;
}

bool is_attention(OpClass op) {
  return op == OpClass::kAttnPrefill || op == OpClass::kAttnDecode;
}

MoeWork moe_work(const MoeGeometry& g, double tokens) {
  MoeWork r;
  r.assignments = tokens * g.top_k * g.assignment_share;
  r.touched_experts = g.top_k >= g.experts ? g.local_experts
                      : g.balanced
                          ? std::min(g.local_experts, r.assignments)
                          : g.local_experts * (1.0 - std::pow(1.0 - g.top_k / g.experts, tokens));
  const double up_w = g.gate_factor * g.hidden * g.width;
  const double down_w = g.hidden * g.width;
  r.up = {
      2.0 * r.assignments * up_w,
      r.touched_experts * up_w * g.w + r.assignments * (g.hidden + g.gate_factor * g.width) * g.a};
  r.down = {2.0 * r.assignments * down_w,
            r.touched_experts * down_w * g.w + r.assignments * (g.width + g.hidden) * g.a};
  return r;
}

Work gemm_work(double m, double n, double k, double batch, double a_bytes, double w_bytes,
               double c_bytes) {
  return {2.0 * m * n * k * batch, batch * (m * k * a_bytes + k * n * w_bytes + m * n * c_bytes)};
}

Work attention_work(const AttentionGeometry& g, double q_tokens, double pairs,
                    double kv_read_tokens, double kv_write_tokens) {
  Work w;
  w.flops = 2.0 * pairs * g.q_heads * (g.qk_dim + g.v_dim);
  w.bytes = q_tokens * g.q_heads * (g.qk_dim + g.v_dim) * g.act_bytes +
            kv_read_tokens * g.kv_read_bytes + kv_write_tokens * g.kv_write_bytes;
  return w;
}

std::int64_t causal_pairs(std::int64_t n, std::int64_t cached, std::int64_t window) {
  if (n <= 0) return 0;
  // Sum of min(j, W) for j = cached + 1 .. cached + n.
  const std::int64_t a = cached + 1;
  const std::int64_t b = cached + n;
  auto sum_range = [](std::int64_t lo, std::int64_t hi) {  // lo..hi inclusive, lo <= hi
    return (lo + hi) * (hi - lo + 1) / 2;
  };
  if (window <= 0 || b <= window) return sum_range(a, b);
  if (a > window) return window * n;
  return sum_range(a, window) + window * (b - window);
}

std::int64_t keys_read(std::int64_t n, std::int64_t cached, std::int64_t window) {
  if (n <= 0) return 0;
  if (window <= 0) return cached + n;
  return std::min(cached + n, window + n - 1);
}

double dtype_bytes(model::Dtype dtype) {
  return model::bits_per_element(dtype) / 8.0;
}

double gemm_output_bytes(model::Dtype dtype) {
  return model::bits_per_element(dtype) < 16 ? 2.0 : dtype_bytes(dtype);
}

Work kernel_work(const KernelShape& s) {
  const double b = dtype_bytes(s.dtype);
  const double batch = s.batch > 0 ? static_cast<double>(s.batch) : 1.0;
  switch (s.op) {
    case OpClass::kGemm:
      return gemm_work(static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k),
                       batch, b, b, gemm_output_bytes(s.dtype));
    case OpClass::kAttnPrefill:
    case OpClass::kAttnDecode: {
      const std::int64_t q_len = s.op == OpClass::kAttnDecode ? 1 : s.q_len;
      AttentionGeometry g;
      g.q_heads = static_cast<double>(s.q_heads);
      g.qk_dim = g.v_dim = static_cast<double>(s.head_dim);
      g.kv_read_bytes = g.kv_write_bytes = 2.0 * static_cast<double>(s.kv_heads * s.head_dim) * b;
      g.act_bytes = gemm_output_bytes(s.dtype);  // Q and O: 16-bit over an 8- or 4-bit cache
      const double pairs = static_cast<double>(causal_pairs(q_len, s.kv_len, 0));
      const double keys = static_cast<double>(keys_read(q_len, s.kv_len, 0));
      Work w =
          attention_work(g, static_cast<double>(q_len), pairs, keys, static_cast<double>(q_len));
      w.flops *= batch;
      w.bytes *= batch;
      return w;
    }
    case OpClass::kAllreduce: {
      const double p = static_cast<double>(std::max<std::int64_t>(s.num_gpus, 1));
      return {0.0, 2.0 * (p - 1.0) / p * s.bytes};
    }
    case OpClass::kMemcpy:
      return {0.0, 2.0 * s.bytes};
    case OpClass::kElementwise:
      return {0.0, s.bytes};
    case OpClass::kMoe: {
      MoeGeometry g;
      g.experts = g.local_experts = static_cast<double>(s.experts);
      g.top_k = static_cast<double>(s.top_k);
      g.hidden = static_cast<double>(s.k);
      g.width = static_cast<double>(s.n);
      g.w = b;
      g.a = s.dtype == model::Dtype::kFp8 || s.activation_bits == 8 ? 1.0 : 2.0;
      g.balanced = true;
      const MoeWork w = moe_work(g, static_cast<double>(s.m));
      return {w.up.flops + w.down.flops, w.up.bytes + w.down.bytes};
    }
  }
  return {};
}

std::optional<TableCoordinates> table_coordinates(const KernelShape& s) {
  TableCoordinates c;
  switch (s.op) {
    case OpClass::kGemm:
      c.shape = {{"n", s.n}, {"k", s.k}, {"batch", std::max<std::int64_t>(s.batch, 1)}};
      c.x1 = static_cast<double>(s.m);
      return c;
    case OpClass::kAttnPrefill:
      c.shape = {{"batch", std::max<std::int64_t>(s.batch, 1)},
                 {"q_heads", s.q_heads},
                 {"kv_heads", s.kv_heads},
                 {"head_dim", s.head_dim}};
      c.x1 = static_cast<double>(s.q_len);
      c.x2 = static_cast<double>(s.kv_len);
      return c;
    case OpClass::kAttnDecode:
      c.shape = {{"q_heads", s.q_heads}, {"kv_heads", s.kv_heads}, {"head_dim", s.head_dim}};
      c.x1 = static_cast<double>(std::max<std::int64_t>(s.batch, 1));
      c.x2 = static_cast<double>(s.kv_len);
      return c;
    case OpClass::kAllreduce:
      c.shape = {{"num_gpus", s.num_gpus}};
      c.x1 = s.bytes;
      return c;
    case OpClass::kMemcpy:
      c.x1 = s.bytes;
      return c;
    case OpClass::kElementwise:
      return std::nullopt;
    case OpClass::kMoe:
      c.shape = {{"n", s.n}, {"k", s.k}, {"experts", s.experts}, {"top_k", s.top_k}};
      // A kernel with wider activations than weights is another kernel (entry_key).
      if (activation_key(s.op, s.dtype, s.activation_bits))
        c.shape.emplace_back("a", s.activation_bits);
      if (block_key(s.op, s.dtype, s.block_scales)) c.shape.emplace_back("block", 1);
      c.x1 = static_cast<double>(s.m);
      return c;
  }
  return std::nullopt;
}

std::string table_key(std::string_view op, std::string_view dtype,
                      const std::vector<std::pair<std::string, std::int64_t>>& shape) {
  // fp16 and bf16 kernels run at the same speed: they share tables.
  std::string key = std::string(op) + "|" + std::string(dtype == "bf16" ? "fp16" : dtype) + "|";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) key += ",";
    key += shape[i].first + "=" + std::to_string(shape[i].second);
  }
  return key;
}

model::OpClassProfile default_op_class_profile(OpClass op) {
  model::OpClassProfile p;
  switch (op) {
    case OpClass::kGemm:
      p.compute.value = 0.75, p.memory.value = 0.80, p.launch_latency_s = 4e-6;
      break;
    case OpClass::kAttnPrefill:
      p.compute.value = 0.50, p.memory.value = 0.80, p.launch_latency_s = 5e-6;
      break;
    case OpClass::kAttnDecode:
      p.compute.value = 0.50, p.memory.value = 0.75, p.launch_latency_s = 5e-6;
      break;
    case OpClass::kAllreduce:
      p.memory.value = 0.70, p.launch_latency_s = 8e-6;
      break;
    case OpClass::kMemcpy:
      p.memory.value = 0.90, p.launch_latency_s = 3e-6;
      break;
    case OpClass::kElementwise:
      p.memory.value = 0.70, p.launch_latency_s = 3e-6;
      break;
    case OpClass::kMoe:
      p.compute.value = 0.50, p.memory.value = 0.60, p.launch_latency_s = 10e-6;
      break;
  }
  return p;
}

model::OpClassProfile op_class_profile(const model::CostProfile& profile, OpClass op,
                                       bool* defaulted) {
  const auto it = profile.op_classes.find(std::string(op_class_name(op)));
  if (defaulted != nullptr) *defaulted = it == profile.op_classes.end();
  return it != profile.op_classes.end() ? it->second : default_op_class_profile(op);
}

std::optional<std::string> op_class_dtype_key(OpClass op, model::Dtype dtype) {
  if (dtype == model::Dtype::kFp16 || dtype == model::Dtype::kBf16) return std::nullopt;
  return std::string(op_class_name(op)) + "." + std::string(model::dtype_name(dtype));
}

model::OpClassProfile op_class_profile(const model::CostProfile& profile, OpClass op,
                                       model::Dtype dtype, bool* defaulted) {
  // A 4-bit kernel without its own entry takes the 8-bit one of its kind, the nearest measured
  // low-precision path, before the 16-bit entry.
  const model::Dtype wider = dtype == model::Dtype::kFp4    ? model::Dtype::kFp8
                             : dtype == model::Dtype::kInt4 ? model::Dtype::kInt8
                                                            : dtype;
  for (const model::Dtype d : {dtype, wider}) {
    const auto key = op_class_dtype_key(op, d);
    if (!key) continue;
    const auto it = profile.op_classes.find(*key);
    if (it != profile.op_classes.end()) {
      if (defaulted != nullptr) *defaulted = false;
      return it->second;
    }
  }
  return op_class_profile(profile, op, defaulted);
}

bool is_op_class_key(std::string_view key) {
  const auto dot = key.find('.');
  const auto op = parse_op_class(key.substr(0, dot));
  if (!op) return false;
  if (dot == std::string_view::npos) return true;
  std::string_view rest = key.substr(dot + 1);
  if (rest.ends_with(".block")) {
    rest.remove_suffix(6);
    const auto dtype = model::parse_dtype(rest);
    return dtype.has_value() && block_key(*op, *dtype, true).has_value();
  }
  int bits = 0;
  for (const int b : {8, 16}) {
    const std::string suffix = ".a" + std::to_string(b);
    if (rest.ends_with(suffix)) {
      rest.remove_suffix(suffix.size());
      bits = b;
      break;
    }
  }
  const auto dtype = model::parse_dtype(rest);
  return dtype.has_value() && (bits == 0 || activation_key(*op, *dtype, bits).has_value());
}

namespace {

// 8- or 16-bit activations over narrower weights (KernelShape::activation_bits).
bool wider_activations(model::Dtype dtype, int activation_bits) {
  return (activation_bits == 8 || activation_bits == 16) &&
         activation_bits > model::bits_per_element(dtype);
}

}  // namespace

std::optional<std::string> activation_key(OpClass op, model::Dtype dtype, int activation_bits) {
  if (!wider_activations(dtype, activation_bits)) return std::nullopt;
  return *op_class_dtype_key(op, dtype) + ".a" + std::to_string(activation_bits);
}

std::optional<std::string> block_key(OpClass op, model::Dtype dtype, bool block_scales) {
  if (!block_scales || op != OpClass::kMoe || dtype != model::Dtype::kFp8) return std::nullopt;
  return *op_class_dtype_key(op, dtype) + ".block";
}

std::optional<std::string> entry_key(const KernelShape& shape) {
  if (auto key = activation_key(shape.op, shape.dtype, shape.activation_bits)) return key;
  if (auto key = block_key(shape.op, shape.dtype, shape.block_scales)) return key;
  return op_class_dtype_key(shape.op, shape.dtype);
}

model::Dtype roof_dtype(model::Dtype dtype, int activation_bits) {
  if (!wider_activations(dtype, activation_bits)) return dtype;
  return activation_bits == 8 ? model::Dtype::kFp8 : model::Dtype::kBf16;
}

ResolvedEntry resolve_entry(const model::CostProfile& profile, OpClass op, model::Dtype dtype,
                            int activation_bits, bool block_scales) {
  ResolvedEntry e;
  if (const auto key = activation_key(op, dtype, activation_bits)) {
    const auto it = profile.op_classes.find(*key);
    if (it != profile.op_classes.end()) {
      e.profile = it->second;
      e.roof_dtype = roof_dtype(dtype, activation_bits);
      return e;
    }
  }
  if (const auto key = block_key(op, dtype, block_scales)) {
    const auto it = profile.op_classes.find(*key);
    if (it != profile.op_classes.end()) {
      e.profile = it->second;
      e.roof_dtype = dtype;
      return e;
    }
  }
  e.profile = op_class_profile(profile, op, dtype, &e.defaulted);
  e.roof_dtype = dtype;
  return e;
}

KernelTime roofline_time(const model::OpClassProfile& profile, double peak_flops, double bandwidth,
                         double extra_latency_s, const Work& work) {
  KernelTime t;
  if (work.flops > 0 && peak_flops > 0) {
    t.compute_s = work.flops / (peak_flops * profile.compute.at(safe_log10(work.flops)));
  }
  if (work.bytes > 0 && bandwidth > 0) {
    t.memory_s = work.bytes / (bandwidth * profile.memory.at(safe_log10(work.bytes)));
  }
  t.time_s = std::max(t.compute_s, t.memory_s) + profile.launch_latency_s + extra_latency_s;
  return t;
}

Roof roof_for(const model::HardwareSpec& hardware, OpClass op, model::Dtype dtype,
              std::int64_t num_gpus) {
  Roof r;
  switch (op) {
    case OpClass::kGemm:
    case OpClass::kAttnPrefill:
    case OpClass::kAttnDecode:
    case OpClass::kMoe: {
      // Attention over an 8- or 4-bit cache is measured against the 16-bit peak (its dtype is
      // the cache's, not its arithmetic's): one roof for every attention entry.
      if (is_attention(op) && model::bits_per_element(dtype) < 16) dtype = model::Dtype::kBf16;
      const auto peak = hardware.peak_flops_for(dtype);
      if (!peak) {
        throw Error(ErrorLocation{hardware.name, 0, 0, "peak_flops"},
                    "expected a peak FLOP/s for " + std::string(model::dtype_name(dtype)) +
                        " (or a wider type), got none");
      }
      r.peak_flops = *peak;
      r.bandwidth = hardware.memory_bandwidth;
      break;
    }
    case OpClass::kAllreduce: {
      // A ring over more GPUs than one node holds crosses the inter-node link, which bounds the
      // whole ring (every GPU sends over its own NIC; hops pay the inter-node latency). Inside an
      // NVLink node vLLM's one-shot custom all-reduce pays one hop (model::allreduce_hops).
      const model::Link link = model::allreduce_link(hardware, num_gpus);
      r.bandwidth = link.bandwidth;
      r.extra_latency_s = model::allreduce_hops(hardware, num_gpus) * link.latency_s;
      if (num_gpus > 1 && !(r.bandwidth > 0)) {
        throw Error(ErrorLocation{hardware.name, 0, 0, link.field},
                    "expected a positive " + std::string(link.name) + " bandwidth for a " +
                        std::to_string(num_gpus) + "-GPU all-reduce" +
                        (link.internode ? " across " + std::to_string(hardware.gpus_per_node) +
                                              "-GPU nodes (give internode_bandwidth_gb_s in the "
                                              "hardware YAML or --internode-bandwidth-gb-s)"
                                        : ""));
      }
      break;
    }
    case OpClass::kMemcpy:
    case OpClass::kElementwise:
      r.bandwidth = hardware.memory_bandwidth;
      break;
  }
  if (op != OpClass::kAllreduce && !(r.bandwidth > 0)) {
    throw Error(ErrorLocation{hardware.name, 0, 0, "memory_bandwidth"},
                "expected a positive HBM bandwidth");
  }
  return r;
}

}  // namespace kvsim::cost
