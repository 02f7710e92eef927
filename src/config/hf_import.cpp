#include "config/hf_import.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "common/error.h"
#include "common/strings.h"
#include "config/json_reader.h"
#include "config/model_validate.h"
#include "model/kv_math.h"

namespace kvsim::config {
namespace {

// ---- Family readers -----------------------------------------------------------------------

// Where each canonical quantity came from, for validate_model's errors.
using FieldMap = std::map<std::string, std::string>;

struct Import {
  model::ModelSpec m;
  FieldMap fields;  // canonical name → key in the config object
};

// The dtype vLLM's --dtype auto serves the checkpoint in: its torch_dtype (or dtype), except
// that float32 checkpoints are served in float16 (bfloat16 for the Gemma 2+ families, which
// overflow in float16).
model::Dtype read_dtype(const JsonReader& r, model::Dtype when_absent,
                        model::Dtype fp32_served_as = model::Dtype::kFp16) {
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!r.has(key)) continue;
    const std::string text = r.get_string(key);
    const auto d = model::parse_dtype(text);
    if (!d) {
      throw r.error(key, "expected float32|float16|bfloat16, got '" + text + "'");
    }
    return *d == model::Dtype::kFp32 ? fp32_served_as : *d;
  }
  return when_absent;
}

void set_all_layers(model::ModelSpec& m, model::LayerKind kind) {
  m.layer_kinds.assign(static_cast<std::size_t>(m.num_layers), kind);
}

// `layer_types` (when present) decides the windowed layers.
bool read_layer_types(const JsonReader& r, Import& im) {
  const Json* v = r.optional_value("layer_types");
  if (v == nullptr) return false;
  if (!v->is_array()) throw r.error("layer_types", "expected a list, got " + describe_json(*v));
  if (static_cast<std::int64_t>(v->size()) != im.m.num_layers) {
    throw r.error("layer_types", "expected one entry per layer (" +
                                     std::to_string(im.m.num_layers) + "), got " +
                                     std::to_string(v->size()));
  }
  im.m.layer_kinds.clear();
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Json& t = (*v)[i];
    const std::string s = t.is_string() ? t.get<std::string>() : std::string();
    if (s == "full_attention") {
      im.m.layer_kinds.push_back(model::LayerKind::kFullAttention);
    } else if (s == "sliding_attention") {
      im.m.layer_kinds.push_back(model::LayerKind::kSlidingWindow);
    } else {
      const std::string key = "layer_types[" + std::to_string(i) + "]";
      throw r.error(key, "expected full_attention|sliding_attention, got " + describe_json(t));
    }
  }
  im.fields["layer_pattern"] = "layer_types";
  return true;
}

// The fields every decoder-only transformer config shares (Llama naming).
void read_llama_like(const JsonReader& r, Import& im, bool tie_default) {
  model::ModelSpec& m = im.m;
  m.num_layers = r.get_int("num_hidden_layers", 1, kMaxLayers);
  m.hidden_size = r.get_int("hidden_size");
  m.vocab_size = r.get_int("vocab_size");
  m.max_context = r.get_int("max_position_embeddings");
  m.attention.num_q_heads = r.get_int("num_attention_heads");
  m.attention.num_kv_heads =
      r.optional_int("num_key_value_heads").value_or(m.attention.num_q_heads);
  if (const auto hd = r.optional_int("head_dim")) {
    m.attention.head_dim = *hd;
    im.fields["head_dim"] = "head_dim";
  } else if (m.hidden_size % m.attention.num_q_heads == 0) {
    m.attention.head_dim = m.hidden_size / m.attention.num_q_heads;
  } else {
    throw r.missing("head_dim",
                    "an integer (hidden_size is not a multiple of num_attention_heads)");
  }
  if (r.has("intermediate_size")) m.intermediate_size = r.get_int("intermediate_size");
  m.tie_word_embeddings = r.optional_bool("tie_word_embeddings", tie_default);
  m.attention_bias = r.optional_bool("attention_bias", false);
  m.mlp_bias = r.optional_bool("mlp_bias", false);
  m.weight_dtype = read_dtype(r, model::Dtype::kBf16);
  set_all_layers(m, model::LayerKind::kFullAttention);
  im.fields.insert({{"layers", "num_hidden_layers"},
                    {"hidden_size", "hidden_size"},
                    {"intermediate_size", "intermediate_size"},
                    {"vocab_size", "vocab_size"},
                    {"max_context", "max_position_embeddings"},
                    {"q_heads", "num_attention_heads"},
                    {"kv_heads", "num_key_value_heads"},
                    {"head_dim", "num_attention_heads"},
                    {"sliding_window", "sliding_window"},
                    {"layer_pattern", "sliding_window"}});
}

void infer_attention_kind(model::AttentionSpec& a) {
  if (a.kind == model::AttentionKind::kMla) return;
  a.kind = a.num_kv_heads == a.num_q_heads ? model::AttentionKind::kMha
           : a.num_kv_heads == 1           ? model::AttentionKind::kMqa
                                           : model::AttentionKind::kGqa;
}

// sliding_window applied to every layer (Mistral, Phi-3); null = none.
void window_all_layers(const JsonReader& r, Import& im) {
  if (read_layer_types(r, im)) {
    if (r.has("sliding_window")) im.m.attention.sliding_window = r.get_int("sliding_window");
    return;
  }
  if (r.has("sliding_window")) {
    im.m.attention.sliding_window = r.get_int("sliding_window");
    set_all_layers(im.m, model::LayerKind::kSlidingWindow);
  }
}

void read_moe_common(const JsonReader& r, Import& im, const std::string& experts_key,
                     const std::vector<std::string>& top_k_keys, const std::string& width_key) {
  model::MoeSpec& e = im.m.moe;
  e.num_experts = r.get_int(experts_key);
  e.experts_per_token = r.get_int_any(top_k_keys);
  e.expert_intermediate_size = r.get_int(width_key);
  im.fields["experts"] = experts_key;
  im.fields["experts_per_token"] = top_k_keys.front();
  im.fields["expert_intermediate_size"] = width_key;
}

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
      // MXFP4: 4-bit elements with one 8-bit (E8M0) scale per 32, for the routed experts.
      m.moe.has_expert_dtype = true;
      m.moe.expert_dtype = model::Dtype::kInt4;
      m.moe.expert_scale_group_size = 32;
    } else {
      throw q.error("quant_method", "expected mxfp4, got '" + method + "'");
    }
  }
}

void family_falcon(const JsonReader& r, Import& im, const std::string& model_type) {
  model::ModelSpec& m = im.m;
  m.num_layers = r.get_int_any({"num_hidden_layers", "n_layer"}, 1, kMaxLayers);
  m.hidden_size = r.get_int_any({"hidden_size", "n_embd"});
  m.vocab_size = r.get_int("vocab_size");
  m.attention.num_q_heads = r.get_int_any({"num_attention_heads", "n_head"});
  const bool new_arch = r.optional_bool("new_decoder_architecture", model_type == "RefinedWeb");
  if (new_arch) {
    // Falcon-40B/180B: grouped KV heads, two layer norms (ln_attn, ln_mlp).
    m.attention.num_kv_heads = r.has("num_kv_heads") ? r.get_int("num_kv_heads")
                               : r.has("n_head_kv")  ? r.get_int("n_head_kv")
                                                     : m.attention.num_q_heads;
    m.norms_per_layer = 2;
    m.parallel_attention_mlp = true;
    im.fields["kv_heads"] = r.has("num_kv_heads") ? "num_kv_heads" : "n_head_kv";
  } else {
    const bool multi_query = r.optional_bool("multi_query", true);
    m.attention.num_kv_heads = multi_query ? 1 : m.attention.num_q_heads;
    if (r.has("num_kv_heads") || r.has("n_head_kv")) {
      m.attention.num_kv_heads =
          r.has("num_kv_heads") ? r.get_int("num_kv_heads") : r.get_int("n_head_kv");
      im.fields["kv_heads"] = r.has("num_kv_heads") ? "num_kv_heads" : "n_head_kv";
    } else {
      im.fields["kv_heads"] = "multi_query";
    }
    m.parallel_attention_mlp = r.optional_bool("parallel_attn", true);
    m.norms_per_layer = m.parallel_attention_mlp ? 1 : 2;
  }
  if (m.hidden_size % m.attention.num_q_heads != 0) {
    throw r.error("hidden_size", "expected a multiple of the head count " +
                                     std::to_string(m.attention.num_q_heads));
  }
  m.attention.head_dim = m.hidden_size / m.attention.num_q_heads;
  // Falcon-7B's original config has no max_position_embeddings; its model card gives 2,048.
  m.max_context = r.optional_int("max_position_embeddings").value_or(2048);
  m.intermediate_size = r.optional_int("ffn_hidden_size").value_or(4 * m.hidden_size);
  m.gated_mlp = false;
  m.layernorm_bias = true;
  const bool bias = r.optional_bool("bias", false);
  m.attention_bias = bias;
  m.mlp_bias = bias;
  m.tie_word_embeddings = r.optional_bool("tie_word_embeddings", true);
  m.weight_dtype = read_dtype(r, model::Dtype::kBf16);
  set_all_layers(m, model::LayerKind::kFullAttention);
  const bool hf_names = r.has("num_hidden_layers");
  im.fields.insert({{"layers", hf_names ? "num_hidden_layers" : "n_layer"},
                    {"hidden_size", r.has("hidden_size") ? "hidden_size" : "n_embd"},
                    {"vocab_size", "vocab_size"},
                    {"q_heads", r.has("num_attention_heads") ? "num_attention_heads" : "n_head"},
                    {"max_context", "max_position_embeddings"}});
}

// The HF config keys of a classic multi-head model with learned positions (GPT-2, OPT).
struct LearnedMhaKeys {
  const char* layers;
  const char* hidden;
  const char* max_context;
  const char* heads;
  const char* intermediate;
};

// The part GPT-2 and OPT share: MHA over all layers, learned positions, biased LayerNorm, a
// plain (ungated) MLP, fp16 weights unless torch_dtype says otherwise. The caller sets the MLP
// width and the biases its family has.
void read_learned_mha(const JsonReader& r, Import& im, const LearnedMhaKeys& k) {
  model::ModelSpec& m = im.m;
  m.num_layers = r.get_int(k.layers, 1, kMaxLayers);
  m.hidden_size = r.get_int(k.hidden);
  m.vocab_size = r.get_int("vocab_size");
  m.max_context = r.get_int(k.max_context);
  m.attention.num_q_heads = r.get_int(k.heads);
  m.attention.num_kv_heads = m.attention.num_q_heads;
  if (m.hidden_size % m.attention.num_q_heads != 0) {
    throw r.error(k.hidden, std::string("expected a multiple of ") + k.heads + " " +
                                std::to_string(m.attention.num_q_heads));
  }
  m.attention.head_dim = m.hidden_size / m.attention.num_q_heads;
  m.gated_mlp = false;
  m.learned_positions = true;
  m.layernorm_bias = true;
  m.tie_word_embeddings = r.optional_bool("tie_word_embeddings", true);
  m.weight_dtype = read_dtype(r, model::Dtype::kFp16);
  set_all_layers(m, model::LayerKind::kFullAttention);
  im.fields.insert({{"layers", k.layers},
                    {"hidden_size", k.hidden},
                    {"intermediate_size", k.intermediate},
                    {"vocab_size", "vocab_size"},
                    {"max_context", k.max_context},
                    {"q_heads", k.heads},
                    {"kv_heads", k.heads},
                    {"head_dim", k.heads}});
}

void family_gpt2(const JsonReader& r, Import& im) {
  read_learned_mha(r, im, {"n_layer", "n_embd", "n_positions", "n_head", "n_inner"});
  model::ModelSpec& m = im.m;
  m.intermediate_size = r.optional_int("n_inner").value_or(4 * m.hidden_size);
  m.attention_bias = true;
  m.mlp_bias = true;
}

void family_opt(const JsonReader& r, Import& im) {
  read_learned_mha(r, im,
                   {"num_hidden_layers", "hidden_size", "max_position_embeddings",
                    "num_attention_heads", "ffn_dim"});
  model::ModelSpec& m = im.m;
  m.intermediate_size = r.get_int("ffn_dim");
  if (const auto proj = r.optional_int("word_embed_proj_dim"); proj && *proj != m.hidden_size) {
    throw r.error("word_embed_proj_dim", "expected hidden_size (" + std::to_string(m.hidden_size) +
                                             "); projected embeddings are not supported, got " +
                                             std::to_string(*proj));
  }
  const bool bias = r.optional_bool("enable_bias", true);
  m.attention_bias = bias;
  m.mlp_bias = bias;
}

void family_nemotron_h(const JsonReader& r, Import& im) {
  model::ModelSpec& m = im.m;
  m.num_layers = r.get_int("num_hidden_layers", 1, kMaxLayers);
  m.hidden_size = r.get_int("hidden_size");
  m.vocab_size = r.get_int("vocab_size");
  m.max_context = r.get_int("max_position_embeddings");
  m.intermediate_size = r.get_int("intermediate_size");
  m.attention.num_q_heads = r.get_int("num_attention_heads");
  m.attention.num_kv_heads =
      r.optional_int("num_key_value_heads").value_or(m.attention.num_q_heads);
  m.attention.head_dim = r.has("attention_head_dim") ? r.get_int("attention_head_dim")
                         : r.has("head_dim")         ? r.get_int("head_dim")
                                                     : m.hidden_size / m.attention.num_q_heads;
  m.attention_bias = r.optional_bool("attention_bias", false);
  m.mlp_bias = r.optional_bool("mlp_bias", false);
  m.gated_mlp = false;  // relu² MLP: up and down only
  m.tie_word_embeddings = r.optional_bool("tie_word_embeddings", false);
  m.weight_dtype = read_dtype(r, model::Dtype::kBf16);
  m.ssm.num_heads = r.get_int("mamba_num_heads");
  m.ssm.head_dim = r.get_int("mamba_head_dim");
  m.ssm.state_size = r.get_int("ssm_state_size");
  m.ssm.num_groups = r.get_int("n_groups");
  m.ssm.conv_kernel = r.get_int("conv_kernel");
  m.ssm.conv_bias = r.optional_bool("use_conv_bias", true);
  const std::string pattern = r.get_string("hybrid_override_pattern");
  if (static_cast<std::int64_t>(pattern.size()) != m.num_layers) {
    throw r.error("hybrid_override_pattern", "expected one character per layer (" +
                                                 std::to_string(m.num_layers) + "), got " +
                                                 std::to_string(pattern.size()));
  }
  const bool windowed = r.has("sliding_window");
  if (windowed) m.attention.sliding_window = r.get_int("sliding_window");
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    switch (pattern[i]) {
      case 'M':
        m.block_kinds.push_back(model::BlockKind::kMamba);
        m.layer_kinds.push_back(model::LayerKind::kNoKvCache);
        break;
      case '*':
        m.block_kinds.push_back(model::BlockKind::kAttentionOnly);
        m.layer_kinds.push_back(windowed ? model::LayerKind::kSlidingWindow
                                         : model::LayerKind::kFullAttention);
        break;
      case '-':
        m.block_kinds.push_back(model::BlockKind::kMlpOnly);
        m.layer_kinds.push_back(model::LayerKind::kNoKvCache);
        break;
      default:
        throw r.error("hybrid_override_pattern",
                      "expected only M (Mamba-2), * (attention) and - (MLP), got '" +
                          std::string(1, pattern[i]) + "' at layer " + std::to_string(i));
    }
  }
  m.ssm_state_bytes_per_sequence = model::ssm_state_bytes_per_sequence(m, 1);
  im.fields.insert({{"layers", "num_hidden_layers"},
                    {"hidden_size", "hidden_size"},
                    {"intermediate_size", "intermediate_size"},
                    {"vocab_size", "vocab_size"},
                    {"max_context", "max_position_embeddings"},
                    {"q_heads", "num_attention_heads"},
                    {"kv_heads", "num_key_value_heads"},
                    {"head_dim", "attention_head_dim"},
                    {"layer_pattern", "hybrid_override_pattern"}});
}

using FamilyReader = std::function<void(const JsonReader&, Import&, const std::string&)>;

const std::map<std::string, FamilyReader>& families() {
  static const std::map<std::string, FamilyReader> kFamilies = [] {
    std::map<std::string, FamilyReader> f;
    auto plain = [](void (*fn)(const JsonReader&, Import&)) {
      return [fn](const JsonReader& r, Import& im, const std::string&) { fn(r, im); };
    };
    f["llama"] = plain(family_llama);
    f["mistral"] = plain(family_mistral);
    f["mixtral"] = plain(family_mixtral);
    f["qwen2"] = plain(family_qwen2);
    f["qwen2_moe"] = plain(family_qwen2_moe);
    f["qwen3"] = plain(family_qwen3);
    f["qwen3_moe"] = plain(family_qwen3_moe);
    f["phi3"] = plain(family_phi3);
    f["gemma"] = plain(family_gemma);
    f["gemma2"] = plain(family_gemma2);
    f["gemma3"] = plain(family_gemma3);
    f["gemma3_text"] = plain(family_gemma3);
    f["gemma4"] = plain(family_gemma4);
    f["gemma4_text"] = plain(family_gemma4);
    f["deepseek_v2"] = plain(family_deepseek);
    f["deepseek_v3"] = plain(family_deepseek);
    f["gpt_oss"] = plain(family_gpt_oss);
    f["gpt2"] = plain(family_gpt2);
    f["opt"] = plain(family_opt);
    f["nemotron_h"] = plain(family_nemotron_h);
    for (const char* falcon : {"falcon", "RefinedWeb", "RefinedWebModel"}) {
      f[falcon] = family_falcon;
    }
    return f;
  }();
  return kFamilies;
}

// Multimodal wrappers whose language model is under text_config.
bool is_wrapper(const std::string& model_type) {
  return model_type == "gemma3" || model_type == "gemma4" || model_type == "llava" ||
         model_type == "mistral3";
}

std::string model_name_from_path(const std::string& p) {
  const auto slash = p.find_last_of('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  std::string dir = slash == std::string::npos ? std::string() : p.substr(0, slash);
  const auto dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  if (base == "config" && !dir.empty()) {
    const auto s2 = dir.find_last_of('/');
    base = s2 == std::string::npos ? dir : dir.substr(s2 + 1);
  }
  return to_lower(base);
}

model::ModelSpec parse(std::string_view original, const std::string& file) {
  const std::string text = sanitize_non_finite(original);
  check_json_text(text, file);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    const Position p = position_of(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    const auto colon = what.find("syntax error");
    throw Error({file, p.line, p.column, ""},
                "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon)));
  } catch (const Json::exception& e) {
    throw Error({file, 0, 0, ""}, std::string("invalid JSON: ") + e.what());
  }
  const Locator locator(text);
  if (!root.is_object()) {
    throw Error({file, 1, 1, ""},
                "expected a JSON object (a Hugging Face config.json), got " + describe_json(root));
  }
  KeyLog log;
  JsonReader top(root, file, "", locator, &log);
  std::string model_type = top.get_string("model_type");
  JsonReader cfg = top;
  if (is_wrapper(model_type) && top.has("text_config")) {
    cfg = top.get_object("text_config");
    if (cfg.has("model_type")) model_type = cfg.get_string("model_type");
  }
  const auto& fams = families();
  const auto it = fams.find(model_type);
  if (it == fams.end()) {
    const JsonReader& where = cfg.has("model_type") ? cfg : top;
    throw where.error("model_type", "unsupported model_type '" + model_type + "'" +
                                        did_you_mean(model_type, hf_model_types()) +
                                        "; expected one of " + join(hf_model_types(), ", "));
  }
  Import im;
  im.m.family = model_type;
  im.m.name = model_name_from_path(file);
  im.m.source = "Hugging Face config.json: " + file;
  it->second(cfg, im, model_type);
  infer_attention_kind(im.m.attention);
  if (im.m.intermediate_size == 0 && im.m.moe.enabled()) {
    im.m.intermediate_size = im.m.moe.expert_intermediate_size;
  }
  validate_model(im.m, [&](const std::string& name) {
    const auto f = im.fields.find(name);
    return cfg.location(f != im.fields.end() ? f->second : name);
  });
  warn_near_miss_keys(log, file, locator);
  return im.m;
}

}  // namespace

std::vector<std::string> hf_model_types() {
  std::vector<std::string> names;
  for (const auto& [name, reader] : families()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

model::ModelSpec parse_hf_config(std::string_view text, const std::string& display_path) {
  return parse(text, display_path);
}

}  // namespace kvsim::config
