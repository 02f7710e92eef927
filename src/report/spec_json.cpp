#include "report/spec_json.h"

#include <algorithm>

#include "cost/ops.h"
#include "model/vllm_memory.h"
#include "model/weights.h"

namespace kvsim::report {

namespace {

Json attention_json(const model::AttentionSpec& a) {
  Json att;
  att["kind"] = std::string(model::attention_kind_name(a.kind));
  att["num_q_heads"] = a.num_q_heads;
  att["num_kv_heads"] = a.num_kv_heads;
  att["head_dim"] = a.head_dim;
  att["v_head_dim"] = a.v_head_dim > 0 ? a.v_head_dim : a.head_dim;
  att["sliding_window"] = a.sliding_window;
  if (a.kind == model::AttentionKind::kMla) {
    att["mla"] = {{"kv_lora_rank", a.mla.kv_lora_rank},
                  {"qk_rope_head_dim", a.mla.qk_rope_head_dim},
                  {"qk_nope_head_dim", a.mla.qk_nope_head_dim},
                  {"v_head_dim", a.mla.v_head_dim},
                  {"q_lora_rank", a.mla.q_lora_rank}};
    if (a.indexer.enabled()) {
      att["sparse_indexer"] = {{"index_topk", a.indexer.topk},
                               {"index_heads", a.indexer.heads},
                               {"index_head_dim", a.indexer.head_dim}};
    }
  }
  if (a.full_layer_num_kv_heads > 0 || a.full_layer_head_dim > 0 || a.k_eq_v) {
    att["full_layer_num_kv_heads"] =
        a.full_layer_num_kv_heads > 0 ? a.full_layer_num_kv_heads : a.num_kv_heads;
    att["full_layer_head_dim"] = a.full_layer_head_dim > 0 ? a.full_layer_head_dim : a.head_dim;
    att["k_eq_v"] = a.k_eq_v;
  }
  if (a.output_gate) att["output_gate"] = true;
  return att;
}

Json moe_json(const model::MoeSpec& e) {
  Json moe{{"num_experts", e.num_experts},
           {"experts_per_token", e.experts_per_token},
           {"expert_intermediate_size", e.expert_intermediate_size},
           {"num_shared_experts", e.num_shared_experts},
           {"shared_expert_intermediate_size", e.shared_expert_size()},
           {"first_dense_layers", e.first_dense_layers},
           {"layer_interval", e.moe_layer_interval}};
  if (e.has_expert_dtype) {
    moe["expert_dtype"] = std::string(model::dtype_name(e.expert_dtype));
    moe["expert_scale_group_size"] = e.expert_scale_group_size;
  }
  if (e.mxfp4_activation_bits != 16) moe["mxfp4_activation"] = "mxfp8";
  return moe;
}

Json ssm_json(const model::ModelSpec& m) {
  return {{"num_heads", m.ssm.num_heads},
          {"head_dim", m.ssm.head_dim},
          {"state_size", m.ssm.state_size},
          {"num_groups", m.ssm.num_groups},
          {"conv_kernel", m.ssm.conv_kernel},
          {"state_dtype", std::string(model::dtype_name(m.ssm.has_state_dtype ? m.ssm.state_dtype
                                                                              : m.weight_dtype))},
          {"num_layers", [&] {
             std::int64_t n = 0;
             for (auto b : m.block_kinds) n += b == model::BlockKind::kMamba ? 1 : 0;
             return n;
           }()}};
}

Json gdn_json(const model::ModelSpec& m) {
  const model::GatedDeltaNetSpec& g = m.gdn;
  std::int64_t layers = 0;
  for (auto b : m.block_kinds) layers += b == model::BlockKind::kLinearAttentionMlp ? 1 : 0;
  return {{"num_key_heads", g.num_key_heads},
          {"num_value_heads", g.num_value_heads},
          {"key_head_dim", g.key_head_dim},
          {"value_head_dim", g.value_head_dim},
          {"conv_kernel", g.conv_kernel},
          {"state_dtype",
           std::string(model::dtype_name(g.has_state_dtype ? g.state_dtype : m.weight_dtype))},
          {"num_layers", layers}};
}

// {"method": "none"}, or the method with its weights' type, scale layout, the modules kept at
// the model's dtype and where it came from (config.json or --quantization).
Json quantization_json(const model::Quantization& q) {
  Json j{{"method", std::string(model::quant_method_name(q.method))}};
  if (!q.enabled()) return j;
  j["weight_dtype"] = std::string(model::dtype_name(model::quant_weight_dtype(q.method)));
  switch (q.scales) {
    case model::ScaleLayout::kNone:
      j["scales"] = "none";
      break;
    case model::ScaleLayout::kPerTensor:
      j["scales"] = "tensor";
      break;
    case model::ScaleLayout::kPerChannel:
      j["scales"] = "channel";
      break;
    case model::ScaleLayout::kGroup:
      j["scales"] = "group";
      j["group_size"] = q.group_size;
      break;
    case model::ScaleLayout::kBlock:
      j["scales"] = "block";
      j["block"] = {q.block_n, q.block_k};
      break;
  }
  j["not_converted"] = q.not_converted;
  j["origin"] = q.origin;
  return j;
}

}  // namespace

Json model_json(const model::ModelSpec& m) {
  Json j;
  j["name"] = m.name;
  j["display_name"] = m.display_name;
  j["family"] = m.family;
  j["source"] = m.source;
  j["num_layers"] = m.num_layers;
  j["hidden_size"] = m.hidden_size;
  j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["max_context"] = m.max_context;
  j["weight_dtype"] = std::string(model::dtype_name(m.weight_dtype));
  j["quantization"] = quantization_json(m.quantization);
  j["attention"] = attention_json(m.attention);
  j["layer_kinds"] = {{"full", m.num_layers_of(model::LayerKind::kFullAttention)},
                      {"sliding", m.num_layers_of(model::LayerKind::kSlidingWindow)},
                      {"none", m.num_layers_of(model::LayerKind::kNoKvCache)}};
  bool uniform = true;
  for (auto k : m.layer_kinds) uniform = uniform && k == m.layer_kinds.front();
  if (!uniform) {
    Json pattern = Json::array();
    for (auto k : m.layer_kinds) pattern.push_back(std::string(model::layer_kind_name(k)));
    j["layer_pattern"] = pattern;
  }
  if (m.moe.enabled()) j["moe"] = moe_json(m.moe);
  if (m.ssm.enabled()) j["ssm"] = ssm_json(m);
  if (m.gdn.enabled()) j["linear_attention"] = gdn_json(m);
  j["gated_mlp"] = m.gated_mlp;
  j["tie_word_embeddings"] = m.tie_word_embeddings;
  const model::ParameterCounts counts = model::parameter_counts(m);
  j["num_parameters"] = counts.total();
  j["num_active_parameters"] = counts.active(m);
  if (counts.vision > 0) j["vision_parameters"] = counts.vision;
  j["weights_bytes"] = model::weights_bytes(m);
  return j;
}

Json hardware_json(const model::HardwareSpec& hw) {
  Json j;
  j["name"] = hw.name;
  j["display_name"] = hw.display_name;
  j["vendor"] = hw.vendor;
  j["source"] = hw.source;
  j["memory_bytes"] = hw.memory_bytes;
  j["memory_bandwidth_bytes_per_s"] = hw.memory_bandwidth;
  Json peaks = Json::object();
  for (const auto& [dtype, flops] : hw.peak_flops)
    peaks[std::string(model::dtype_name(dtype))] = flops;
  j["peak_flops"] = peaks;
  j["interconnect_bandwidth_bytes_per_s"] = hw.interconnect_bandwidth;
  j["interconnect_latency_s"] = hw.interconnect_latency_s;
  j["pcie_bandwidth_bytes_per_s"] = hw.pcie_bandwidth;
  j["gpus_per_node"] = hw.gpus_per_node;
  j["compute_capability"] = hw.compute_capability > 0 ? Json(hw.compute_capability) : Json(nullptr);
  j["price_per_hour"] = hw.price_per_hour;
  const auto& p = hw.cost.provenance;
  j["cost_model_provenance"] = {{"kind", p.kind},
                                {"device", p.device},
                                {"driver", p.driver},
                                {"date", p.date},
                                {"kvsim_version", p.kvsim_version},
                                {"source", p.source}};
  // Which op classes (and per-dtype entries) are measured, which the datasheet's guesses.
  Json classes = Json::object();
  const auto status = [&](const std::string& name) {
    const bool fitted = std::find(p.fitted_op_classes.begin(), p.fitted_op_classes.end(), name) !=
                        p.fitted_op_classes.end();
    classes[name] = fitted ? "measured" : "datasheet";
  };
  // A profile without a fused-MoE entry costs the routed experts as GEMMs (no moe guess is used).
  for (const std::string& name : cost::op_class_names()) {
    if (name != cost::op_class_name(cost::OpClass::kMoe)) status(name);
  }
  for (const auto& entry : hw.cost.op_classes) status(entry.first);
  j["cost_model_provenance"]["op_classes"] = classes;
  if (!p.held_out.empty()) {
    Json held = Json::object();
    for (const auto& [name, e] : p.held_out) {
      held[name] = {{"rows", e.rows}, {"median_ape", e.median_ape}, {"p90_ape", e.p90_ape}};
    }
    j["cost_model_provenance"]["held_out"] = {
        {"fraction", p.held_out_fraction}, {"seed", p.held_out_seed}, {"op_classes", held}};
  }
  return j;
}

Json serving_json(const ServingMemoryInputs& s) {
  Json j;
  j["tensor_parallel_size"] = s.tensor_parallel_size;
  j["gpu_memory_utilization"] = s.gpu_memory_utilization;
  j["block_size"] = s.block_size;
  j["max_model_len"] = s.max_model_len;
  j["kv_cache_dtype"] = s.kv_cache_dtype;
  j["kv_format"] = {{"dtype", std::string(model::dtype_name(s.kv_format.dtype))},
                    {"scale_group_size", s.kv_format.scale_group_size},
                    {"scale_dtype", std::string(model::dtype_name(s.kv_format.scale_dtype))}};
  j["activation_reserve_bytes"] =
      s.activation_reserve_bytes ? Json(*s.activation_reserve_bytes) : Json(nullptr);
  j["runtime_overhead_bytes"] = s.runtime_overhead_bytes;
  if (s.engine == model::MemoryEngine::kVllmV1) {
    j["engine"] = "vllm-v1";
    j["vllm_version"] = s.vllm_release.text();
    j["kv_cache_memory_bytes"] =
        s.kv_cache_memory_bytes ? Json(*s.kv_cache_memory_bytes) : Json(nullptr);
    j["num_gpu_blocks_override"] =
        s.num_gpu_blocks_override ? Json(*s.num_gpu_blocks_override) : Json(nullptr);
  }
  return j;
}

}  // namespace kvsim::report
