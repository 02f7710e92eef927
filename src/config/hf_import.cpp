#include "config/hf_import.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/warning.h"
#include "config/hf_families.h"
#include "config/json_reader.h"
#include "config/model_validate.h"
#include "model/kv_math.h"

namespace kvsim::config {
namespace hf {

// ---- Helpers the family readers share -----------------------------------------------------

// The dtype vLLM's --dtype auto serves the checkpoint in: its torch_dtype (or dtype), except
// that float32 checkpoints are served in float16 (bfloat16 for the Gemma 2+ families, which
// overflow in float16).
model::Dtype read_dtype(const JsonReader& r, model::Dtype when_absent,
                        model::Dtype fp32_served_as) {
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

}  // namespace hf

namespace {

using hf::Import;

using FamilyReader = std::function<void(const JsonReader&, Import&, const std::string&)>;

const std::map<std::string, FamilyReader>& families() {
  static const std::map<std::string, FamilyReader> kFamilies = [] {
    std::map<std::string, FamilyReader> f;
    auto plain = [](void (*fn)(const JsonReader&, Import&)) {
      return [fn](const JsonReader& r, Import& im, const std::string&) { fn(r, im); };
    };
    f["llama"] = plain(hf::family_llama);
    f["llama4_text"] = plain(hf::family_llama4);
    f["mistral"] = plain(hf::family_mistral);
    f["mixtral"] = plain(hf::family_mixtral);
    f["qwen2"] = plain(hf::family_qwen2);
    f["qwen2_moe"] = plain(hf::family_qwen2_moe);
    f["qwen3"] = plain(hf::family_qwen3);
    f["qwen3_moe"] = plain(hf::family_qwen3_moe);
    // Qwen-VL language models: Qwen2 (older configs keep its fields at the top level) and Qwen3.
    for (const char* qwen2 : {"qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text"}) {
      f[qwen2] = plain(hf::family_qwen2);
    }
    f["qwen3_vl_text"] = plain(hf::family_qwen3);
    f["qwen3_vl_moe_text"] = plain(hf::family_qwen3_moe);
    f["kimi_k2"] = plain(hf::family_deepseek);  // Kimi K2: DeepSeek-V3's architecture
    f["qwen3_next"] = plain(hf::family_qwen3_next);
    f["qwen3_5_text"] = plain(hf::family_qwen3_next);
    f["qwen3_5_moe_text"] = plain(hf::family_qwen3_next);
    f["phi3"] = plain(hf::family_phi3);
    f["gemma"] = plain(hf::family_gemma);
    f["gemma2"] = plain(hf::family_gemma2);
    f["gemma3"] = plain(hf::family_gemma3);
    f["gemma3_text"] = plain(hf::family_gemma3);
    f["gemma4"] = plain(hf::family_gemma4);
    f["gemma4_text"] = plain(hf::family_gemma4);
    f["deepseek_v2"] = plain(hf::family_deepseek);
    f["deepseek_v3"] = plain(hf::family_deepseek);
    f["glm4_moe_lite"] = plain(hf::family_deepseek);  // GLM-4.7-Flash: DeepSeek-V3's MLA + MoE
    // DeepSeek-V3.2 and GLM-5: DeepSeek-V3's MLA + MoE with DeepSeek Sparse Attention.
    f["deepseek_v32"] = plain(hf::family_deepseek);
    f["glm_moe_dsa"] = plain(hf::family_deepseek);
    f["glm4"] = plain(hf::family_glm4);
    f["minimax_m2"] = plain(hf::family_minimax_m2);
    f["glm4_moe"] = plain(hf::family_glm4_moe);
    f["gpt_oss"] = plain(hf::family_gpt_oss);
    f["gpt2"] = plain(hf::family_gpt2);
    f["opt"] = plain(hf::family_opt);
    f["nemotron_h"] = plain(hf::family_nemotron_h);
    for (const char* falcon : {"falcon", "RefinedWeb", "RefinedWebModel"}) {
      f[falcon] = hf::family_falcon;
    }
    return f;
  }();
  return kFamilies;
}

// The keys vision_parameters needs that `v` lacks, as "a|b" alternatives; empty when it has them
// all (configs that leave a key at its class default cannot be sized).
std::string missing_vision_keys(const JsonReader& v) {
  const std::vector<std::vector<const char*>> needed = {
      {"depth", "num_hidden_layers", "vt_num_hidden_layers"},
      {"hidden_size", "embed_dim", "vt_hidden_size"},
      {"intermediate_size", "vt_intermediate_size", "mlp_ratio"},
      {"patch_size"}};
  std::string missing;
  for (const auto& alternatives : needed) {
    bool any = false;
    std::string names;
    for (const char* key : alternatives) {
      any = any || v.has(key);
      names += (names.empty() ? "" : "|") + std::string(key);
    }
    if (!any) missing += (missing.empty() ? "" : ", ") + names;
  }
  return missing;
}

// A multimodal model's vision encoder and projector, estimated from its vision_config (vLLM
// loads them beside the language model): a ViT of `depth` blocks, each attention with biased
// Q/K/V/O projections, an MLP (three matrices when its activation is SiLU, else two) with
// biases, and two LayerNorms; the patch embedding and a learned position table where the config
// gives one; then the projector into the language model's width: Qwen-VL's patch merger
// (spatial_merge_size² patches → an MLP of that width → out_hidden_size, one more per deepstack
// level) or one linear layer (two for LLaVA-style multi_modal_projector configs).
std::uint64_t vision_parameters(const JsonReader& v, std::int64_t text_hidden,
                                bool two_layer_projector) {
  const std::int64_t depth = v.get_int_any({"depth", "num_hidden_layers", "vt_num_hidden_layers"});
  const bool qwen2_vl = v.has("embed_dim");  // Qwen2-VL: embed_dim wide, hidden_size its output
  const std::int64_t width =
      qwen2_vl ? v.get_int("embed_dim") : v.get_int_any({"hidden_size", "vt_hidden_size"});
  std::int64_t inter = 0;
  if (v.has("intermediate_size") || v.has("vt_intermediate_size")) {
    inter = v.get_int_any({"intermediate_size", "vt_intermediate_size"});
  } else {
    inter = width * v.get_int("mlp_ratio");
  }
  std::string act;
  for (const char* key : {"hidden_act", "hidden_activation"}) {
    if (const auto a = v.optional_string(key)) act = to_lower(*a);
  }
  const bool gated = act == "silu" || act == "swiglu";
  const std::int64_t channels = v.has("in_channels") ? v.get_int("in_channels")
                                : v.has("in_chans")  ? v.get_int("in_chans")
                                                     : v.optional_int("num_channels").value_or(3);
  const std::int64_t patch = v.get_int("patch_size");
  const std::int64_t temporal = v.optional_int("temporal_patch_size").value_or(1);
  std::int64_t positions = v.optional_int("num_position_embeddings").value_or(0);
  if (positions == 0 && v.has("image_size")) {
    const std::int64_t side = v.get_int("image_size") / patch;
    positions = side * side;
  }
  const std::int64_t merge = v.optional_int("spatial_merge_size").value_or(1);
  const std::int64_t out = qwen2_vl                   ? v.get_int("hidden_size")
                           : v.has("out_hidden_size") ? v.get_int("out_hidden_size")
                                                      : text_hidden;
  std::int64_t deepstack = 0;
  if (const Json* d = v.optional_value("deepstack_visual_indexes"); d && d->is_array()) {
    deepstack = static_cast<std::int64_t>(d->size());
  }
  const char* what = "the vision encoder's parameter count";
  const auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  const std::uint64_t w = u(width);
  const std::uint64_t i = u(inter);
  const std::uint64_t attention = checked_add(checked_product({4, w, w}, what), 4 * w, what);
  const std::uint64_t mlp =
      checked_add(checked_product({gated ? 3U : 2U, w, i}, what), (gated ? 2 : 1) * i + w, what);
  const std::uint64_t block = checked_add(checked_add(attention, mlp, what), 4 * w, what);
  std::uint64_t total = checked_mul(u(depth), block, what);
  total = checked_add(
      total, checked_product({u(channels), u(temporal), u(patch), u(patch), w}, what), what);
  total = checked_add(total, checked_mul(u(positions), w, what), what);
  if (merge > 1) {
    const std::uint64_t merged = checked_product({w, u(merge), u(merge)}, what);
    const std::uint64_t merger =
        checked_add(checked_add(checked_mul(merged, merged, what), merged, what),
                    checked_add(checked_mul(merged, u(out), what), u(out) + 2 * w, what), what);
    total = checked_add(total, checked_mul(u(1 + deepstack), merger, what), what);
  } else {
    std::uint64_t projector = checked_add(checked_mul(w, u(out), what), u(out), what);
    if (two_layer_projector) {
      projector = checked_add(projector,
                              checked_add(checked_mul(u(out), u(out), what), u(out), what), what);
    }
    total = checked_add(total, projector, what);
  }
  return total;
}

// Multimodal wrappers whose language model is under text_config.
bool is_wrapper(const std::string& model_type) {
  return model_type == "gemma3" || model_type == "gemma4" || model_type == "llava" ||
         model_type == "mistral3" || model_type == "qwen3_5" || model_type == "qwen3_5_moe" ||
         model_type == "qwen2_vl" || model_type == "qwen2_5_vl" || model_type == "qwen3_vl" ||
         model_type == "qwen3_vl_moe" || model_type == "kimi_k25" || model_type == "llama4";
}

// vLLM picks a model's implementation by the class in `architectures`, not by model_type: a
// checkpoint that keeps an architecture under its own model_type (a fine-tune of
// DeepseekV3ForCausalLM) is served as that architecture. The classes of the families above.
const std::map<std::string, std::string>& family_of_architecture() {
  static const std::map<std::string, std::string> kArchitectures = {
      {"DeepseekV2ForCausalLM", "deepseek_v2"},
      {"DeepseekV3ForCausalLM", "deepseek_v3"},
      {"DeepseekV32ForCausalLM", "deepseek_v32"},
      {"FalconForCausalLM", "falcon"},
      {"GPT2LMHeadModel", "gpt2"},
      {"Gemma2ForCausalLM", "gemma2"},
      {"Gemma3ForCausalLM", "gemma3_text"},
      {"GemmaForCausalLM", "gemma"},
      {"Glm4ForCausalLM", "glm4"},
      {"Glm4MoeForCausalLM", "glm4_moe"},
      {"Glm4MoeLiteForCausalLM", "glm4_moe_lite"},
      {"GlmMoeDsaForCausalLM", "glm_moe_dsa"},
      {"GptOssForCausalLM", "gpt_oss"},
      {"LlamaForCausalLM", "llama"},
      {"Llama4ForCausalLM", "llama4_text"},
      {"MiniMaxM2ForCausalLM", "minimax_m2"},
      {"MistralForCausalLM", "mistral"},
      {"MixtralForCausalLM", "mixtral"},
      {"NemotronHForCausalLM", "nemotron_h"},
      {"OPTForCausalLM", "opt"},
      {"Phi3ForCausalLM", "phi3"},
      {"Qwen2ForCausalLM", "qwen2"},
      {"Qwen2MoeForCausalLM", "qwen2_moe"},
      {"Qwen3ForCausalLM", "qwen3"},
      {"Qwen3MoeForCausalLM", "qwen3_moe"},
      {"Qwen3NextForCausalLM", "qwen3_next"},
  };
  return kArchitectures;
}

// The family of the first class in `architectures` that kvsim knows; empty when none.
std::string family_by_architecture(const JsonReader& r) {
  const Json* v = r.optional_value("architectures");
  if (v == nullptr || !v->is_array()) return {};
  for (const Json& a : *v) {
    if (!a.is_string()) continue;
    const auto it = family_of_architecture().find(a.get<std::string>());
    if (it != family_of_architecture().end()) return it->second;
  }
  return {};
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
  const auto& fams = families();
  JsonReader cfg = top;
  bool wrapped = false;
  // A wrapper (a known multimodal one, or any config whose own model_type kvsim does not know)
  // holds its language model under text_config.
  if ((is_wrapper(model_type) || fams.count(model_type) == 0) && top.has("text_config")) {
    cfg = top.get_object("text_config");
    wrapped = true;
    if (cfg.has("model_type")) model_type = cfg.get_string("model_type");
  }
  std::string family = model_type;
  std::string read_as;
  if (fams.count(family) == 0) {
    family = family_by_architecture(cfg);
    if (family.empty()) family = family_by_architecture(top);
    if (!family.empty()) read_as = " (model_type '" + model_type + "' read as " + family + ")";
  }
  const auto it = fams.find(family);
  if (it == fams.end()) {
    const JsonReader& where = cfg.has("model_type") ? cfg : top;
    throw where.error("model_type", "unsupported model_type '" + model_type + "'" +
                                        did_you_mean(model_type, hf_model_types()) +
                                        " and no supported class in architectures; expected one "
                                        "of " +
                                        join(hf_model_types(), ", "));
  }
  Import im;
  im.m.family = family;
  im.m.name = model_name_from_path(file);
  im.m.source = "Hugging Face config.json: " + file + read_as;
  it->second(cfg, im, family);
  // A wrapper may say at its top level whether the language model's head is tied.
  if (wrapped && !cfg.has("tie_word_embeddings") && top.has("tie_word_embeddings")) {
    im.m.tie_word_embeddings = top.optional_bool("tie_word_embeddings", im.m.tie_word_embeddings);
  }
  if (top.has("vision_config") && top.optional_value("vision_config")->is_object()) {
    const JsonReader vision = top.get_object("vision_config");
    if (const std::string missing = missing_vision_keys(vision); missing.empty()) {
      im.m.vision_parameters =
          vision_parameters(vision, im.m.hidden_size, top.has("projector_hidden_act"));
      im.m.source += " (+ vision encoder estimated from vision_config)";
    } else {
      warn(top.location("vision_config"),
           "the vision encoder's weights are not counted: vision_config lacks " + missing);
    }
  }
  hf::read_quantization(cfg.has("quantization_config") ? cfg : top, im);
  hf::infer_attention_kind(im.m.attention);
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
