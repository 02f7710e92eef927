// Hugging Face readers outside the Llama lineage: Falcon (multi-query, parallel attention), GPT-2
// and OPT (learned positions, multi-head attention) and Nemotron-H (a Mamba-2 hybrid).
#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error.h"
#include "common/strings.h"
#include "config/hf_families.h"
#include "config/model_validate.h"
#include "model/kv_math.h"

namespace kvsim::config::hf {

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

namespace {

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

}  // namespace

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
  // vLLM keeps the SSM state in the config's mamba_ssm_cache_dtype (float16 when absent, as
  // wide as the bf16 weights).
  if (const auto dt = r.optional_string("mamba_ssm_cache_dtype")) {
    const auto d = model::parse_dtype(*dt);
    if (!d) {
      throw r.error("mamba_ssm_cache_dtype",
                    "expected float32|float16|bfloat16, got '" + *dt + "'");
    }
    m.ssm.has_state_dtype = true;
    m.ssm.state_dtype = *d;
  }
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

}  // namespace kvsim::config::hf
