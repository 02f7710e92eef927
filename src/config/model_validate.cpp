#include "config/model_validate.h"

#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>

#include "model/kv_math.h"
#include "model/weights.h"

namespace kvsim::config {
namespace {

std::string num(std::int64_t v) {
  return std::to_string(v);
}

// Throws the located Error of a check that fails.
struct Checker {
  const FieldLocator& locate;
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw Error(locate(field), message);
  }
  void positive(const std::string& field, std::int64_t v) const {
    if (v <= 0) fail(field, "expected a positive integer, got " + num(v));
  }
  void at_most(const std::string& field, std::int64_t v, std::int64_t max) const {
    if (v > max) fail(field, "expected at most " + num(max) + ", got " + num(v));
  }
};

// Every dimension within its bound and non-negative where zero means "none".
void check_bounds(const model::ModelSpec& m, const Checker& c) {
  c.positive("layers", m.num_layers);
  c.positive("hidden_size", m.hidden_size);
  c.positive("vocab_size", m.vocab_size);
  c.positive("max_context", m.max_context);
  const model::AttentionSpec& att = m.attention;
  const model::MoeSpec& moe = m.moe;
  for (const auto& [field, value, max] :
       std::initializer_list<std::tuple<const char*, std::int64_t, std::int64_t>>{
           {"layers", m.num_layers, kMaxLayers},
           {"hidden_size", m.hidden_size, kMaxWidth},
           {"intermediate_size", m.intermediate_size, kMaxWidth},
           {"vocab_size", m.vocab_size, kMaxVocab},
           {"max_context", m.max_context, kMaxContext},
           {"q_heads", att.num_q_heads, kMaxHeads},
           {"kv_heads", att.num_kv_heads, kMaxHeads},
           {"head_dim", att.head_dim, kMaxWidth},
           {"head_dim", att.v_head_dim, kMaxWidth},
           {"sliding_window", att.sliding_window, kMaxContext},
           {"full_layer_kv_heads", att.full_layer_num_kv_heads, kMaxHeads},
           {"full_layer_head_dim", att.full_layer_head_dim, kMaxWidth},
           {"kv_lora_rank", att.mla.kv_lora_rank, kMaxWidth},
           {"qk_rope_head_dim", att.mla.qk_rope_head_dim, kMaxWidth},
           {"qk_rope_head_dim", att.mla.qk_nope_head_dim, kMaxWidth},
           {"kv_lora_rank", att.mla.v_head_dim, kMaxWidth},
           {"kv_lora_rank", att.mla.q_lora_rank, kMaxWidth},
           {"index_topk", att.indexer.topk, kMaxContext},
           {"index_heads", att.indexer.heads, kMaxHeads},
           {"index_head_dim", att.indexer.head_dim, kMaxWidth},
           {"experts", moe.num_experts, kMaxExperts},
           {"experts_per_token", moe.experts_per_token, kMaxExperts},
           {"expert_intermediate_size", moe.expert_intermediate_size, kMaxWidth},
           {"experts", moe.num_shared_experts, kMaxExperts},
           {"expert_intermediate_size", moe.shared_expert_intermediate_size, kMaxWidth},
           {"experts", moe.expert_scale_group_size, kMaxWidth},
           {"layer_pattern", m.ssm.num_heads, kMaxHeads},
           {"layer_pattern", m.ssm.head_dim, kMaxWidth},
           {"layer_pattern", m.ssm.state_size, kMaxWidth},
           {"layer_pattern", m.ssm.num_groups, kMaxHeads},
           {"layer_pattern", m.ssm.conv_kernel, kMaxWidth},
           {"linear_attention", m.gdn.num_key_heads, kMaxHeads},
           {"linear_attention", m.gdn.num_value_heads, kMaxHeads},
           {"linear_attention", m.gdn.key_head_dim, kMaxWidth},
           {"linear_attention", m.gdn.value_head_dim, kMaxWidth},
           {"linear_attention", m.gdn.conv_kernel, kMaxWidth},
       }) {
    c.at_most(field, value, max);
  }
  for (const auto& [field, value] : std::initializer_list<std::pair<const char*, std::int64_t>>{
           {"head_dim", att.v_head_dim},
           {"intermediate_size", m.intermediate_size},
           {"sliding_window", att.sliding_window},
           {"qk_rope_head_dim", att.mla.qk_nope_head_dim},
           {"kv_lora_rank", att.mla.v_head_dim},
           {"kv_lora_rank", att.mla.q_lora_rank},
           {"index_topk", att.indexer.topk},
           {"experts", moe.num_experts},
           {"experts", moe.num_shared_experts},
           {"expert_intermediate_size", moe.shared_expert_intermediate_size},
           {"layer_pattern", m.ssm.num_heads},
           {"layer_pattern", m.ssm.head_dim},
           {"layer_pattern", m.ssm.state_size},
           {"layer_pattern", m.ssm.num_groups},
           {"layer_pattern", m.ssm.conv_kernel},
       }) {
    if (value < 0) c.fail(field, "expected a non-negative integer, got " + num(value));
  }
}

// One layer kind (and block kind, when given) per layer; a dense MLP somewhere needs its width.
void check_layers(const model::ModelSpec& m, const Checker& c) {
  if (static_cast<std::int64_t>(m.layer_kinds.size()) != m.num_layers) {
    c.fail("layer_pattern", "expected one layer kind per layer (" + num(m.num_layers) + "), got " +
                                num(static_cast<std::int64_t>(m.layer_kinds.size())));
  }
  if (!m.block_kinds.empty() && static_cast<std::int64_t>(m.block_kinds.size()) != m.num_layers) {
    c.fail("layer_pattern", "expected one block kind per layer (" + num(m.num_layers) + "), got " +
                                num(static_cast<std::int64_t>(m.block_kinds.size())));
  }

  bool dense_mlp = false;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto b = m.block_kind(i);
    const bool has_mlp = b == model::BlockKind::kAttentionMlp || b == model::BlockKind::kMlpOnly ||
                         b == model::BlockKind::kLinearAttentionMlp;
    if (has_mlp && !m.moe.is_moe_layer(i)) dense_mlp = true;
  }
  if (dense_mlp) c.positive("intermediate_size", m.intermediate_size);
}

void check_attention(const model::AttentionSpec& a, const Checker& c) {
  c.positive("q_heads", a.num_q_heads);
  if (a.kind == model::AttentionKind::kMla) {
    c.positive("kv_lora_rank", a.mla.kv_lora_rank);
    c.positive("qk_rope_head_dim", a.mla.qk_rope_head_dim);
    if (a.indexer.enabled()) {
      c.positive("index_heads", a.indexer.heads);
      c.positive("index_head_dim", a.indexer.head_dim);
    }
  } else {
    if (a.indexer.enabled()) {
      c.fail("index_topk", "expected sparse attention (an indexer) only over MLA attention");
    }
    c.positive("kv_heads", a.num_kv_heads);
    c.positive("head_dim", a.head_dim);
    if (a.num_q_heads % a.num_kv_heads != 0) {
      c.fail("kv_heads",
             "expected a divisor of the " + num(a.num_q_heads) +
                 " query heads (each KV head serves a whole group of query heads), got " +
                 num(a.num_kv_heads));
    }
    if (a.kind == model::AttentionKind::kMha && a.num_kv_heads != a.num_q_heads) {
      c.fail("kv_heads", "expected " + num(a.num_q_heads) +
                             " (kind mha: one KV head per query head), got " + num(a.num_kv_heads));
    }
    if (a.kind == model::AttentionKind::kMqa && a.num_kv_heads != 1) {
      c.fail("kv_heads", "expected 1 (kind mqa: one shared KV head), got " + num(a.num_kv_heads));
    }
    if (a.full_layer_num_kv_heads < 0) {
      c.fail("full_layer_kv_heads",
             "expected a positive integer, got " + num(a.full_layer_num_kv_heads));
    }
    if (a.full_layer_num_kv_heads > 0 && a.num_q_heads % a.full_layer_num_kv_heads != 0) {
      c.fail("full_layer_kv_heads", "expected a divisor of the " + num(a.num_q_heads) +
                                        " query heads, got " + num(a.full_layer_num_kv_heads));
    }
    if (a.full_layer_head_dim < 0) {
      c.fail("full_layer_head_dim",
             "expected a positive integer, got " + num(a.full_layer_head_dim));
    }
  }
}

// Sliding layers need a window (and a window needs one); some layer must hold KV.
void check_layer_kinds(const model::ModelSpec& m, const Checker& c) {
  const model::AttentionSpec& a = m.attention;
  bool any_sliding = false, any_kv = false;
  for (auto k : m.layer_kinds) {
    any_sliding = any_sliding || k == model::LayerKind::kSlidingWindow;
    any_kv = any_kv || k != model::LayerKind::kNoKvCache;
  }
  if (any_sliding && a.sliding_window <= 0) {
    c.fail("sliding_window",
           "expected a positive window (tokens) since some layers are sliding-window "
           "layers, got " +
               num(a.sliding_window));
  }
  if (!any_sliding && a.sliding_window != 0) {
    c.fail("layer_pattern", "expected at least one 'sliding' layer since sliding_window is " +
                                num(a.sliding_window) + ", got none");
  }
  if (!any_kv) c.fail("layer_pattern", "expected at least one attention layer, got none");
  if (any_sliding && a.indexer.enabled()) {
    c.fail("index_topk", "expected no sliding-window layers with sparse attention (index_topk " +
                             num(a.indexer.topk) + "), got some");
  }
}

void check_moe(const model::ModelSpec& m, const Checker& c) {
  if (m.moe.enabled()) {
    const auto& e = m.moe;
    c.positive("expert_intermediate_size", e.expert_intermediate_size);
    if (e.experts_per_token < 1 || e.experts_per_token > e.num_experts) {
      c.fail("experts_per_token", "expected an integer in [1, " + num(e.num_experts) +
                                      "] (at most the number of experts), got " +
                                      num(e.experts_per_token));
    }
    if (e.first_dense_layers < 0 || e.first_dense_layers > m.num_layers) {
      c.fail("first_dense_layers", "expected an integer in [0, " + num(m.num_layers) + "], got " +
                                       num(e.first_dense_layers));
    }
  }
}

void check_products(const model::ModelSpec& m, const Checker& c) {
  // Every dimension is bounded, but their products may still pass 2^64: say so at the file.
  try {
    (void)model::parameter_counts(m).total();
    (void)model::weights_bytes(m);
    model::KvFormat widest;
    widest.dtype = model::Dtype::kFp32;
    (void)model::kv_bytes_for_sequence(m, widest, m.max_context);
    (void)model::ssm_state_bytes_per_sequence(m);
  } catch (const Error& e) {
    c.fail("layers", e.message());
  }
}

}  // namespace

void validate_model(const model::ModelSpec& m, const FieldLocator& locate) {
  const Checker c{locate};
  check_bounds(m, c);
  check_layers(m, c);
  check_attention(m.attention, c);
  check_layer_kinds(m, c);
  check_moe(m, c);
  check_products(m, c);
}

}  // namespace kvsim::config
