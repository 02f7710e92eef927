#include "config/model_yaml.h"

#include <map>
#include <optional>

#include "common/strings.h"
#include "config/model_validate.h"
#include "config/yaml_reader.h"
#include "config/yaml_typos.h"

namespace kvsim::config {
namespace {

model::Dtype read_dtype(MapReader& r, const std::string& key, model::Dtype fallback) {
  const auto text = r.optional_string(key);
  if (!text) return fallback;
  const auto dtype = model::parse_dtype(*text);
  if (!dtype) {
    throw r.error(key, "expected one of " + join(model::dtype_names(), "|") + ", got '" + *text +
                           "'" + did_you_mean(*text, model::dtype_names()));
  }
  return *dtype;
}

// The top-level scalars: name, source, sizes, dtype, MLP and norm kinds, biases.
void parse_top_level(MapReader& r, model::ModelSpec& m) {
  m.name = r.get_name("name");
  m.display_name = r.optional_string("display_name").value_or("");
  m.family = r.optional_string("family").value_or("");
  m.source = r.get_string("source");
  if (trim(m.source).empty())
    throw r.error("source", "expected where the numbers come from, got ''");
  m.num_layers = r.get_positive_int("layers");
  if (m.num_layers > kMaxLayers) {  // before any per-layer allocation
    throw r.error("layers", "expected an integer in [1, " + std::to_string(kMaxLayers) + "], got " +
                                std::to_string(m.num_layers));
  }
  m.hidden_size = r.get_positive_int("hidden_size");
  const auto intermediate = r.optional_int("intermediate_size", 1);
  m.intermediate_size = intermediate.value_or(0);
  m.vocab_size = r.get_positive_int("vocab_size");
  m.max_context = r.get_positive_int("max_context");
  m.weight_dtype = read_dtype(r, "weight_dtype", model::Dtype::kBf16);
  m.gated_mlp = r.optional_choice("mlp", {"gated", "plain"}).value_or("gated") == "gated";
  m.layernorm_bias =
      r.optional_choice("norm", {"rmsnorm", "layernorm"}).value_or("rmsnorm") == "layernorm";
  m.norms_per_layer = r.optional_int("norms_per_layer", 1, 8).value_or(2);
  m.tie_word_embeddings = r.optional_bool("tie_word_embeddings", false);
  m.learned_positions = r.optional_bool("learned_positions", false);
  m.parallel_attention_mlp = r.optional_bool("parallel_attention_mlp", false);
  m.attention_bias = r.optional_bool("attention_bias", false);
  m.mlp_bias = r.optional_bool("mlp_bias", false);
  m.qk_norm = r.optional_bool("qk_norm", false);
}

void parse_mla(MapReader& att, model::AttentionSpec& a) {
  a.kind = model::AttentionKind::kMla;
  a.mla.kv_lora_rank = att.get_positive_int("kv_lora_rank");
  a.mla.qk_rope_head_dim = att.get_positive_int("qk_rope_head_dim");
  a.mla.qk_nope_head_dim = att.optional_int("qk_nope_head_dim", 0).value_or(0);
  a.mla.v_head_dim = att.optional_int("v_head_dim", 0).value_or(0);
  a.mla.q_lora_rank = att.optional_int("q_lora_rank", 0).value_or(0);
  a.num_kv_heads = att.optional_int("kv_heads", 1).value_or(a.num_q_heads);
  a.head_dim =
      att.optional_int("head_dim", 1).value_or(a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim);
  a.v_head_dim = a.mla.v_head_dim;
  // DeepSeek Sparse Attention: the indexer's heads and the keys each query attends.
  if (const auto topk = att.optional_int("index_topk", 1)) {
    a.indexer.topk = *topk;
    a.indexer.heads = att.get_positive_int("index_heads");
    a.indexer.head_dim = att.get_positive_int("index_head_dim");
  }
}

// GQA/MHA/MQA: KV heads, head dims (head_dim from hidden_size when omitted), the kind.
void parse_heads(MapReader& att, std::int64_t hidden_size, const std::optional<std::string>& kind,
                 model::AttentionSpec& a) {
  a.num_kv_heads = att.get_positive_int("kv_heads");
  if (const auto hd = att.optional_int("head_dim", 1)) {
    a.head_dim = *hd;
  } else if (hidden_size % a.num_q_heads == 0) {
    a.head_dim = hidden_size / a.num_q_heads;
  } else {
    throw att.error("head_dim", "missing required field (hidden_size " +
                                    std::to_string(hidden_size) + " is not a multiple of q_heads " +
                                    std::to_string(a.num_q_heads) + ")");
  }
  a.v_head_dim = att.optional_int("v_head_dim", 1).value_or(0);
  if (kind == std::optional<std::string>("mha")) {
    a.kind = model::AttentionKind::kMha;
  } else if (kind == std::optional<std::string>("mqa")) {
    a.kind = model::AttentionKind::kMqa;
  } else if (kind == std::optional<std::string>("gqa")) {
    a.kind = model::AttentionKind::kGqa;
  } else {
    a.kind = a.num_kv_heads == a.num_q_heads ? model::AttentionKind::kMha
             : a.num_kv_heads == 1           ? model::AttentionKind::kMqa
                                             : model::AttentionKind::kGqa;
  }
  a.full_layer_num_kv_heads = att.optional_int("full_layer_kv_heads", 1).value_or(0);
  a.full_layer_head_dim = att.optional_int("full_layer_head_dim", 1).value_or(0);
  a.k_eq_v = att.optional_bool("k_eq_v", false);
}

// One entry of a layer pattern: the layer's cache kind and whether it is a gated DeltaNet
// (linear attention) layer instead of an attention layer.
struct PatternEntry {
  model::LayerKind kind = model::LayerKind::kFullAttention;
  bool linear = false;
};

// Layer kinds: a pattern cycled over the layers.
std::vector<PatternEntry> parse_layer_pattern(MapReader& att, const std::string& file,
                                              std::int64_t sliding_window) {
  std::vector<PatternEntry> pattern;
  if (const auto node = att.optional_node("layer_pattern")) {
    if (!node->IsSequence() || node->size() == 0) {
      throw att.error("layer_pattern", "expected a non-empty list of full|sliding|linear, got " +
                                           describe_node(*node));
    }
    for (std::size_t i = 0; i < node->size(); ++i) {
      const YAML::Node item = (*node)[i];
      const std::string text = item.IsScalar() ? item.Scalar() : std::string();
      if (text == "full") {
        pattern.push_back({model::LayerKind::kFullAttention, false});
      } else if (text == "sliding") {
        pattern.push_back({model::LayerKind::kSlidingWindow, false});
      } else if (text == "linear") {
        pattern.push_back({model::LayerKind::kNoKvCache, true});
      } else {
        throw Error(
            node_location(item, file, att.field("layer_pattern") + "[" + std::to_string(i) + "]"),
            "expected full|sliding|linear, got " + describe_node(item) +
                did_you_mean(text, {"full", "sliding", "linear"}));
      }
    }
  } else {
    pattern.push_back(
        {sliding_window > 0 ? model::LayerKind::kSlidingWindow : model::LayerKind::kFullAttention,
         false});
  }
  return pattern;
}

void parse_attention(MapReader& att, const std::string& file, model::ModelSpec& m) {
  check_required_typos(att, {"q_heads", "kv_heads", "kv_lora_rank", "qk_rope_head_dim"});
  model::AttentionSpec& a = m.attention;
  const auto kind = att.optional_choice("kind", {"mha", "mqa", "gqa", "mla"});
  a.num_q_heads = att.get_positive_int("q_heads");
  const bool mla = kind ? *kind == "mla" : att.has("kv_lora_rank");
  if (mla) {
    parse_mla(att, a);
  } else {
    parse_heads(att, m.hidden_size, kind, a);
  }
  a.sliding_window = att.optional_int("sliding_window", 1).value_or(0);
  a.output_gate = att.optional_bool("output_gate", false);
  const std::vector<PatternEntry> pattern = parse_layer_pattern(att, file, a.sliding_window);
  bool linear = false;
  for (const PatternEntry& e : pattern) linear = linear || e.linear;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const PatternEntry& e = pattern[static_cast<std::size_t>(i) % pattern.size()];
    m.layer_kinds.push_back(e.kind);
    if (linear) {
      m.block_kinds.push_back(e.linear ? model::BlockKind::kLinearAttentionMlp
                                       : model::BlockKind::kAttentionMlp);
    }
  }
}

// The gated DeltaNet geometry of `linear` layers.
void parse_linear_attention(MapReader& la, model::ModelSpec& m) {
  check_required_typos(
      la, {"key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel"});
  model::GatedDeltaNetSpec& g = m.gdn;
  g.num_key_heads = la.get_positive_int("key_heads");
  g.num_value_heads = la.get_positive_int("value_heads");
  g.key_head_dim = la.get_positive_int("key_head_dim");
  g.value_head_dim = la.get_positive_int("value_head_dim");
  g.conv_kernel = la.get_positive_int("conv_kernel");
  if (la.has("state_dtype")) {
    g.has_state_dtype = true;
    g.state_dtype = read_dtype(la, "state_dtype", model::Dtype::kFp32);
  }
  if (g.num_value_heads % g.num_key_heads != 0) {
    throw la.error("value_heads", "expected a multiple of key_heads (" +
                                      std::to_string(g.num_key_heads) + "), got " +
                                      std::to_string(g.num_value_heads));
  }
}

void parse_moe(MapReader& moe, model::MoeSpec& e) {
  check_required_typos(moe, {"experts", "experts_per_token", "expert_intermediate_size"});
  e.num_experts = moe.get_positive_int("experts");
  e.experts_per_token = moe.get_positive_int("experts_per_token");
  e.expert_intermediate_size = moe.get_positive_int("expert_intermediate_size");
  e.num_shared_experts = moe.optional_int("shared_experts", 0).value_or(0);
  e.shared_expert_intermediate_size =
      moe.optional_int("shared_expert_intermediate_size", 0).value_or(0);
  e.first_dense_layers = moe.optional_int("first_dense_layers", 0).value_or(0);
  e.moe_layer_interval = moe.optional_int("layer_interval", 1).value_or(1);
}

// validate_model, with each error located at the key (in its own map) it names.
void validate_located(const model::ModelSpec& m, MapReader& r, MapReader& att,
                      std::optional<MapReader>& moe) {
  const std::map<std::string, std::pair<MapReader*, std::string>> where{
      {"layers", {&r, "layers"}},
      {"hidden_size", {&r, "hidden_size"}},
      {"intermediate_size", {&r, "intermediate_size"}},
      {"vocab_size", {&r, "vocab_size"}},
      {"max_context", {&r, "max_context"}},
      {"q_heads", {&att, "q_heads"}},
      {"kv_heads", {&att, "kv_heads"}},
      {"head_dim", {&att, "head_dim"}},
      {"sliding_window", {&att, "sliding_window"}},
      {"layer_pattern", {&att, "layer_pattern"}},
      {"kv_lora_rank", {&att, "kv_lora_rank"}},
      {"qk_rope_head_dim", {&att, "qk_rope_head_dim"}},
      {"full_layer_kv_heads", {&att, "full_layer_kv_heads"}},
      {"full_layer_head_dim", {&att, "full_layer_head_dim"}},
  };
  validate_model(m, [&](const std::string& name) -> ErrorLocation {
    if (const auto it = where.find(name); it != where.end()) {
      return it->second.first->error(it->second.second, "").location();
    }
    if (moe) return moe->error(name, "").location();
    return r.error(name, "").location();
  });
}

// The checkpoint's weight quantization, as an HF config's quantization_config states it: the
// method (vLLM's names), for fp8 / int8 the block of one scale (weight_block_size: [rows, cols];
// per tensor / channel otherwise), for awq / gptq the group size.
void parse_quantization(MapReader& q, model::ModelSpec& m) {
  const std::string name = q.get_string("method");
  const auto method = model::parse_quant_method(name);
  if (!method || *method == model::QuantMethod::kNone) {
    throw q.error("method", "expected one of " + join(model::quant_method_names(), "|") +
                                ", got '" + name + "'");
  }
  model::Quantization out = model::default_quantization(*method);
  if (const auto block = q.optional_node("weight_block_size")) {
    if (*method != model::QuantMethod::kFp8 && *method != model::QuantMethod::kInt8) {
      throw q.error("weight_block_size", "expected block scales only with method fp8 or int8");
    }
    std::vector<std::int64_t> dims;
    if (block->IsSequence()) {
      for (const auto& d : *block) {
        std::int64_t v = 0;
        if (!d.IsScalar() || !YAML::convert<std::int64_t>::decode(d, v) || v < 1) break;
        dims.push_back(v);
      }
    }
    if (!block->IsSequence() || block->size() != 2 || dims.size() != 2) {
      throw q.error("weight_block_size", "expected [rows, cols], two positive integers");
    }
    out.scales = model::ScaleLayout::kBlock;
    out.block_n = dims[0];
    out.block_k = dims[1];
  }
  if (const auto group = q.optional_int("group_size", 1, 1 << 20)) {
    if (*method != model::QuantMethod::kAwq && *method != model::QuantMethod::kGptq) {
      throw q.error("group_size", "expected a group size only with method awq or gptq");
    }
    out.group_size = *group;
  }
  out.origin = "model YAML";
  m.quantization = out;
}

model::ModelSpec parse_model(const YAML::Node& root, const std::string& file) {
  MapReader r(root, file);
  check_required_typos(
      r, {"name", "source", "layers", "hidden_size", "vocab_size", "max_context", "attention"});
  model::ModelSpec m;
  parse_top_level(r, m);
  MapReader att = r.get_map("attention");
  parse_attention(att, file, m);
  std::optional<MapReader> moe = r.optional_map("moe");
  if (moe) parse_moe(*moe, m.moe);
  std::optional<MapReader> linear = r.optional_map("linear_attention");
  if (linear) parse_linear_attention(*linear, m);
  std::optional<MapReader> quantization = r.optional_map("quantization");
  if (quantization) parse_quantization(*quantization, m);
  if (linear.has_value() != !m.block_kinds.empty()) {
    throw linear
        ? r.error("linear_attention", "expected linear layers in attention.layer_pattern to use it")
        : att.error("layer_pattern", "expected a linear_attention section for its linear layers");
  }

  // Unknown keys first (a typo'd key is the likeliest cause of a later "missing" error).
  att.finish();
  if (moe) moe->finish();
  if (linear) linear->finish();
  if (quantization) quantization->finish();
  r.finish();
  validate_located(m, r, att, moe);
  return m;
}

}  // namespace

model::ModelSpec load_model_yaml_file(const std::string& path) {
  return parse_model(load_yaml_file(path), path);
}

model::ModelSpec parse_model_yaml(std::string_view text, const std::string& display_path) {
  return parse_model(load_yaml_text(text, display_path), display_path);
}

}  // namespace kvsim::config
