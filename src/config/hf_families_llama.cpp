// Hugging Face readers of the Llama lineage: RoPE decoders with GQA or MLA and gated MLPs or
// MoE (Llama, Mistral, Mixtral, Qwen 2/3 and their MoE, Phi-3, Gemma 1-4, DeepSeek V2/V3,
// gpt-oss).
#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error.h"
#include "common/strings.h"
#include "config/hf_families.h"
#include "config/model_validate.h"
#include "model/kv_math.h"

namespace kvsim::config::hf {

void family_llama(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
}

void family_mistral(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  window_all_layers(r, im);
}

void family_mixtral(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  window_all_layers(r, im);
  read_moe_common(r, im, "num_local_experts", {"num_experts_per_tok"}, "intermediate_size");
}

namespace {

void qwen_windows(const JsonReader& r, Import& im) {
  if (read_layer_types(r, im)) {
    if (r.has("sliding_window") && r.optional_bool("use_sliding_window", false)) {
      im.m.attention.sliding_window = r.get_int("sliding_window");
    }
    bool any = false;
    for (auto k : im.m.layer_kinds) any = any || k == model::LayerKind::kSlidingWindow;
    if (!any) im.m.attention.sliding_window = 0;
    return;
  }
  // Qwen: the window applies only with use_sliding_window, to layers >= max_window_layers.
  if (!r.optional_bool("use_sliding_window", false) || !r.has("sliding_window")) return;
  im.m.attention.sliding_window = r.get_int("sliding_window");
  const std::int64_t first = r.optional_int("max_window_layers", 0).value_or(0);
  bool any = false;
  for (std::int64_t i = first; i < im.m.num_layers; ++i) {
    im.m.layer_kinds[static_cast<std::size_t>(i)] = model::LayerKind::kSlidingWindow;
    any = true;
  }
  if (!any) im.m.attention.sliding_window = 0;
}

void qwen_moe(const JsonReader& r, Import& im) {
  read_moe_common(r, im, "num_experts", {"num_experts_per_tok"}, "moe_intermediate_size");
  const std::int64_t step = r.optional_int("decoder_sparse_step").value_or(1);
  // HF: a layer is MoE when (layer + 1) % step == 0.
  im.m.moe.first_dense_layers = step - 1;
  im.m.moe.moe_layer_interval = step;
  if (const Json* dense = r.optional_value("mlp_only_layers")) {
    if (!dense->is_array() || !dense->empty()) {
      throw r.error("mlp_only_layers",
                    "expected an empty list (per-layer dense exceptions are not "
                    "supported), got " +
                        describe_json(*dense));
    }
  }
  if (r.has("shared_expert_intermediate_size")) {
    im.m.moe.num_shared_experts = 1;
    im.m.moe.shared_expert_intermediate_size = r.get_int("shared_expert_intermediate_size");
  }
}

}  // namespace

void family_qwen2(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  im.m.attention_bias = true;  // Qwen2 projects Q, K and V with biases
  qwen_windows(r, im);
}

void family_qwen2_moe(const JsonReader& r, Import& im) {
  family_qwen2(r, im);
  qwen_moe(r, im);
}

void family_qwen3(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  im.m.qk_norm = true;
  qwen_windows(r, im);
}

void family_qwen3_moe(const JsonReader& r, Import& im) {
  family_qwen3(r, im);
  qwen_moe(r, im);
}

namespace {

// Qwen3-Next / Qwen3.5 hybrids: gated DeltaNet (linear attention) layers and gated full
// attention layers, each followed by the MLP or MoE. `layer_types` lists
// linear_attention|full_attention per layer; without it every full_attention_interval-th layer
// is full attention.
void qwen_gated_delta_net(const JsonReader& r, Import& im) {
  model::ModelSpec& m = im.m;
  model::GatedDeltaNetSpec& g = m.gdn;
  g.num_key_heads = r.get_int("linear_num_key_heads");
  g.num_value_heads = r.get_int("linear_num_value_heads");
  g.key_head_dim = r.get_int("linear_key_head_dim");
  g.value_head_dim = r.get_int("linear_value_head_dim");
  g.conv_kernel = r.get_int("linear_conv_kernel_dim");
  if (g.num_value_heads % g.num_key_heads != 0) {
    throw r.error("linear_num_value_heads", "expected a multiple of linear_num_key_heads (" +
                                                std::to_string(g.num_key_heads) + "), got " +
                                                std::to_string(g.num_value_heads));
  }
  // vLLM's mamba_ssm_cache_dtype follows the config's mamba_ssm_dtype (Qwen3.5); else "auto".
  if (const auto dt = r.optional_string("mamba_ssm_dtype")) {
    const auto d = model::parse_dtype(*dt);
    if (!d)
      throw r.error("mamba_ssm_dtype", "expected float32|float16|bfloat16, got '" + *dt + "'");
    g.has_state_dtype = true;
    g.state_dtype = *d;
  }
  m.attention.output_gate = r.optional_bool("attn_output_gate", true);
  m.block_kinds.clear();
  m.layer_kinds.clear();
  const auto add = [&](bool full) {
    m.block_kinds.push_back(full ? model::BlockKind::kAttentionMlp
                                 : model::BlockKind::kLinearAttentionMlp);
    m.layer_kinds.push_back(full ? model::LayerKind::kFullAttention : model::LayerKind::kNoKvCache);
  };
  if (const Json* v = r.optional_value("layer_types")) {
    if (!v->is_array()) throw r.error("layer_types", "expected a list, got " + describe_json(*v));
    if (static_cast<std::int64_t>(v->size()) != m.num_layers) {
      throw r.error("layer_types", "expected one entry per layer (" + std::to_string(m.num_layers) +
                                       "), got " + std::to_string(v->size()));
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& t = (*v)[i];
      const std::string s = t.is_string() ? t.get<std::string>() : std::string();
      if (s != "full_attention" && s != "linear_attention") {
        throw r.error("layer_types[" + std::to_string(i) + "]",
                      "expected full_attention|linear_attention, got " + describe_json(t));
      }
      add(s == "full_attention");
    }
    im.fields["layer_pattern"] = "layer_types";
  } else {
    const std::int64_t every = r.get_int("full_attention_interval");
    for (std::int64_t i = 0; i < m.num_layers; ++i) add((i + 1) % every == 0);
    im.fields["layer_pattern"] = "full_attention_interval";
  }
  if (m.num_layers_of(model::LayerKind::kFullAttention) == 0) {
    throw r.error(im.fields["layer_pattern"], "expected at least one full_attention layer");
  }
  im.fields["linear_attention"] = "linear_num_value_heads";
}

}  // namespace

// Qwen3-Next (MoE) and the Qwen3.5 text models (dense qwen3_5_text, MoE qwen3_5_moe_text).
void family_qwen3_next(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  im.m.qk_norm = true;
  qwen_gated_delta_net(r, im);
  if (r.has("num_experts") && r.get_int("num_experts", 0) > 0) qwen_moe(r, im);
}

void family_phi3(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  window_all_layers(r, im);
}

void family_gemma(const JsonReader& r, Import& im) {
  read_llama_like(r, im, true);
  im.m.gated_mlp = true;
}

void family_gemma2(const JsonReader& r, Import& im) {
  read_llama_like(r, im, true);
  im.m.weight_dtype = read_dtype(r, model::Dtype::kBf16, model::Dtype::kBf16);
  im.m.norms_per_layer = 4;
  if (read_layer_types(r, im)) {
    im.m.attention.sliding_window = r.get_int("sliding_window");
    return;
  }
  if (r.has("sliding_window")) {
    // Gemma 2 alternates: even layers local (sliding), odd layers global.
    im.m.attention.sliding_window = r.get_int("sliding_window");
    for (std::int64_t i = 0; i < im.m.num_layers; i += 2) {
      im.m.layer_kinds[static_cast<std::size_t>(i)] = model::LayerKind::kSlidingWindow;
    }
  }
}

void family_gemma3(const JsonReader& r, Import& im) {
  read_llama_like(r, im, true);
  im.m.weight_dtype = read_dtype(r, model::Dtype::kBf16, model::Dtype::kBf16);
  im.m.norms_per_layer = 4;
  im.m.qk_norm = true;
  if (read_layer_types(r, im)) {
    im.m.attention.sliding_window = r.get_int("sliding_window");
    return;
  }
  if (r.has("sliding_window")) {
    // Gemma 3: every `sliding_window_pattern`-th layer is global, the others local.
    im.m.attention.sliding_window = r.get_int("sliding_window");
    const std::int64_t pattern = r.optional_int("sliding_window_pattern").value_or(6);
    for (std::int64_t i = 0; i < im.m.num_layers; ++i) {
      if ((i + 1) % pattern != 0) {
        im.m.layer_kinds[static_cast<std::size_t>(i)] = model::LayerKind::kSlidingWindow;
      }
    }
  }
}

void family_gemma4(const JsonReader& r, Import& im) {
  read_llama_like(r, im, true);
  im.m.weight_dtype = read_dtype(r, model::Dtype::kBf16, model::Dtype::kBf16);
  model::ModelSpec& m = im.m;
  m.norms_per_layer = 4;
  m.qk_norm = true;
  if (r.has("num_kv_shared_layers") && r.get_int("num_kv_shared_layers", 0) > 0) {
    throw r.error(
        "num_kv_shared_layers",
        "expected 0 (layers that reuse another layer's KV cache are not supported), got " +
            std::to_string(r.get_int("num_kv_shared_layers", 0)));
  }
  if (!read_layer_types(r, im)) {
    throw r.missing("layer_types", "a list of full_attention|sliding_attention per layer");
  }
  m.attention.sliding_window = r.get_int("sliding_window");
  // Global (full) layers have their own geometry.
  if (r.has("num_global_key_value_heads")) {
    m.attention.full_layer_num_kv_heads = r.get_int("num_global_key_value_heads");
    im.fields["full_layer_kv_heads"] = "num_global_key_value_heads";
  }
  if (r.has("global_head_dim")) {
    m.attention.full_layer_head_dim = r.get_int("global_head_dim");
    im.fields["full_layer_head_dim"] = "global_head_dim";
  }
  m.attention.k_eq_v = r.optional_bool("attention_k_eq_v", false);
  if (r.optional_bool("enable_moe_block", false)) {
    // Every layer has its dense MLP (intermediate_size) beside the routed experts: model the
    // dense MLP as one always-active shared expert.
    read_moe_common(r, im, "num_experts", {"top_k_experts", "num_experts_per_tok"},
                    "moe_intermediate_size");
    m.moe.num_shared_experts = 1;
    m.moe.shared_expert_intermediate_size = r.get_int("intermediate_size");
  }
}

void family_deepseek(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  model::ModelSpec& m = im.m;
  model::AttentionSpec& a = m.attention;
  a.kind = model::AttentionKind::kMla;
  a.mla.kv_lora_rank = r.get_int("kv_lora_rank");
  a.mla.qk_rope_head_dim = r.get_int("qk_rope_head_dim");
  a.mla.qk_nope_head_dim = r.get_int("qk_nope_head_dim");
  a.mla.v_head_dim = r.get_int("v_head_dim");
  a.mla.q_lora_rank = r.optional_int("q_lora_rank").value_or(0);
  a.head_dim = a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim;
  a.v_head_dim = a.mla.v_head_dim;
  a.num_kv_heads = a.num_q_heads;  // nominal; the cache holds the latent
  im.fields["kv_lora_rank"] = "kv_lora_rank";
  im.fields["qk_rope_head_dim"] = "qk_rope_head_dim";
  if (r.has("index_topk")) {
    // DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): vLLM takes a config with index_topk as
    // one (its DeepseekV2 implementation's is_v32 test).
    a.indexer.topk = r.get_int("index_topk");
    a.indexer.heads = r.get_int("index_n_heads");
    a.indexer.head_dim = r.get_int("index_head_dim");
    im.fields["index_topk"] = "index_topk";
    im.fields["index_heads"] = "index_n_heads";
    im.fields["index_head_dim"] = "index_head_dim";
  }
  if (r.has("n_routed_experts")) {
    read_moe_common(r, im, "n_routed_experts", {"num_experts_per_tok"}, "moe_intermediate_size");
    m.moe.num_shared_experts = r.optional_int("n_shared_experts", 0).value_or(0);
    m.moe.first_dense_layers = r.optional_int("first_k_dense_replace", 0).value_or(0);
    im.fields["first_dense_layers"] = "first_k_dense_replace";
    const std::int64_t freq = r.optional_int("moe_layer_freq").value_or(1);
    if (freq != 1) {
      throw r.error("moe_layer_freq", "expected 1 (every layer after the dense ones is MoE), got " +
                                          std::to_string(freq));
    }
  }
}

// MiniMax-M2 (M2.1, M2.5): GQA with RMSNorms over the whole Q and K projections (qk_norm_type
// per_layer; per_head as Qwen3), partial rotary (no effect on sizes), and an MoE of
// num_local_experts (top num_experts_per_tok, sigmoid routing with a bias) in every layer, with
// no shared expert. Its multi-token-prediction modules are not loaded without speculative
// decoding, as in vLLM. attn_type_list marks each layer full (1) or lightning (linear) attention
// (0, MiniMax-Text-01's hybrid), which kvsim does not model.
void family_minimax_m2(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  model::ModelSpec& m = im.m;
  m.qk_norm = r.optional_bool("use_qk_norm", true);
  if (m.qk_norm) {
    const std::string type = r.optional_string("qk_norm_type").value_or("per_layer");
    if (type != "per_layer" && type != "per_head") {
      throw r.error("qk_norm_type", "expected per_layer or per_head, got '" + type + "'");
    }
    m.qk_norm_whole = type == "per_layer";
  }
  if (const Json* types = r.optional_value("attn_type_list"); types && types->is_array()) {
    for (std::size_t i = 0; i < types->size(); ++i) {
      if (!(*types)[i].is_number_integer() || (*types)[i].get<std::int64_t>() != 1) {
        throw r.error("attn_type_list",
                      "expected 1 (full attention) for every layer, got another value at layer " +
                          std::to_string(i) + " (lightning attention is not modelled)");
      }
    }
  }
  read_moe_common(r, im, "num_local_experts", {"num_experts_per_tok"}, "intermediate_size");
  if (r.optional_int("shared_intermediate_size", 0).value_or(0) > 0) {
    throw r.error("shared_intermediate_size",
                  "expected 0: MiniMax-M2's shared expert is not modelled, got " +
                      std::to_string(*r.optional_int("shared_intermediate_size", 0)));
  }
}

// GLM-4 (0414): biased Q/K/V, partial rotary (no effect on sizes), and four norms per layer
// (post-attention and post-MLP norms beside the two pre-norms).
void family_glm4(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  im.m.attention_bias = r.optional_bool("attention_bias", true);
  im.m.norms_per_layer = 4;
}

// GLM-4.5/4.6/4.7: GQA (optionally with QK norms) and DeepSeek-style MoE: the first
// `first_k_dense_replace` layers dense, then routed experts with `n_shared_experts` shared ones
// of the routed width. The multi-token-prediction layers (num_nextn_predict_layers) are not
// loaded without speculative decoding, as in vLLM.
void family_glm4_moe(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  model::ModelSpec& m = im.m;
  m.attention_bias = r.optional_bool("attention_bias", false);
  m.qk_norm = r.optional_bool("use_qk_norm", false);
  read_moe_common(r, im, "n_routed_experts", {"num_experts_per_tok"}, "moe_intermediate_size");
  m.moe.num_shared_experts = r.optional_int("n_shared_experts", 0).value_or(0);
  m.moe.first_dense_layers = r.optional_int("first_k_dense_replace", 0).value_or(0);
  im.fields["first_dense_layers"] = "first_k_dense_replace";
}

// Llama 4 (Scout, Maverick): every interleave_moe_layer_step-th layer is MoE (num_local_experts
// of intermediate_size, top num_experts_per_tok, plus one shared expert of that width), the others
// dense of intermediate_size_mlp. Three of four layers use chunked local attention
// (attention_chunk_size); vLLM 0.10 turns its hybrid allocator off for chunked attention, so
// every layer keeps its full KV and is read here as full attention.
void family_llama4(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  model::ModelSpec& m = im.m;
  read_moe_common(r, im, "num_local_experts", {"num_experts_per_tok"}, "intermediate_size");
  m.moe.num_shared_experts = 1;
  m.intermediate_size = r.get_int("intermediate_size_mlp");
  im.fields["intermediate_size"] = "intermediate_size_mlp";
  const std::int64_t step = r.optional_int("interleave_moe_layer_step").value_or(1);
  m.moe.first_dense_layers = step - 1;  // HF: layer i is MoE when (i + 1) % step == 0
  m.moe.moe_layer_interval = step;
  if (const Json* listed = r.optional_value("moe_layers"); listed && !listed->is_null()) {
    bool same = listed->is_array();
    std::int64_t count = 0;
    for (std::int64_t i = 0; same && i < m.num_layers; ++i) {
      if (!m.moe.is_moe_layer(i)) continue;
      same = count < static_cast<std::int64_t>(listed->size()) &&
             (*listed)[static_cast<std::size_t>(count)].is_number_integer() &&
             (*listed)[static_cast<std::size_t>(count)].get<std::int64_t>() == i;
      ++count;
    }
    if (!same || count != static_cast<std::int64_t>(listed->size())) {
      throw r.error("moe_layers", "expected every " + std::to_string(step) +
                                      "th layer (interleave_moe_layer_step); other layer lists "
                                      "are not supported");
    }
  }
}

void family_gpt_oss(const JsonReader& r, Import& im) {
  read_llama_like(r, im, false);
  model::ModelSpec& m = im.m;
  m.attention_bias = r.optional_bool("attention_bias", true);
  m.mlp_bias = true;  // experts and router carry biases
  if (!read_layer_types(r, im)) {
    throw r.missing("layer_types", "a list of full_attention|sliding_attention per layer");
  }
  m.attention.sliding_window = r.get_int("sliding_window");
  read_moe_common(r, im, "num_local_experts", {"num_experts_per_tok", "experts_per_token"},
                  "intermediate_size");
  if (r.has("quantization_config")) {
    const JsonReader q = r.get_object("quantization_config");
    const std::string method = q.get_string("quant_method");
    if (method == "mxfp4") {
      // MXFP4: FP4 (E2M1) elements with one 8-bit (E8M0) scale per 32, for the routed experts.
      m.moe.has_expert_dtype = true;
      m.moe.expert_dtype = model::Dtype::kFp4;
      m.moe.expert_scale_group_size = 32;
    } else {
      throw q.error("quant_method", "expected mxfp4, got '" + method + "'");
    }
  }
}

}  // namespace kvsim::config::hf
