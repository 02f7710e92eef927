#include "model/weights.h"

#include <functional>

#include "common/assert.h"
#include "common/checked_math.h"
#include "common/int_math.h"
#include "model/kv_math.h"

namespace kvsim::model {
namespace {

enum class Part {
  kEmbedding,
  kAttention,
  kMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kSsm,
  kNorms,
  kLmHead,
  kVision
};

// One weight tensor: its elements in the whole model, the elements one rank holds, and how it is
// stored.
struct Tensor {
  Part part;
  std::uint64_t elements = 0;
  std::uint64_t elements_per_rank = 0;
  Dtype dtype = Dtype::kBf16;
  std::int64_t scale_group_size = 0;  // one 8-bit scale per this many elements; 0 = none
  // A linear layer under ModelSpec::quantization: stored as quantized_tensor_bytes says, with
  // `matrices` matrices of `in_features` inputs each (dtype and scale_group_size unused).
  const Quantization* quant = nullptr;
  std::uint64_t in_features = 0;
  std::uint64_t matrices = 1;
};

std::uint64_t u64(std::int64_t v) {
  KVSIM_ASSERT(v >= 0, "negative size in weights math");
  return static_cast<std::uint64_t>(v);
}

constexpr const char* kWhat = "the model's parameter count";

// Checked products and sums of element counts (a model's dimensions come from its file).
std::uint64_t mul(std::initializer_list<std::uint64_t> factors) {
  return checked_product(factors, kWhat);
}
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  return checked_add(a, b, kWhat);
}

// Emits every weight tensor of a model as sharded over `tp` ranks, part by part.
class TensorWalker {
 public:
  TensorWalker(const ModelSpec& m, std::int64_t tp, const ExpertPadding& padding,
               const std::function<void(const Tensor&)>& emit)
      : m(m), t(u64(tp)), padding(padding), emit(emit), wd(m.weight_dtype), h(u64(m.hidden_size)) {
    KVSIM_ASSERT(tp >= 1, "weights: tp < 1");
  }

  void run() {
    // Embeddings (vocabulary-parallel) and learned positions (replicated).
    // A pipeline stage holds the embeddings on the first stage, the final norm and the LM head on
    // the last; a tied head on a last stage without the embeddings is its own copy (vLLM).
    if (m.holds_embedding) {
      if (m.vision_parameters > 0) sharded(Part::kVision, m.vision_parameters);
      sharded(Part::kEmbedding, mul({u64(m.vocab_size), h}));
      if (m.learned_positions) replicated(Part::kEmbedding, mul({u64(m.max_context), h}));
    }
    for (std::int64_t layer = 0; layer < m.num_layers; ++layer) decoder_layer(layer);
    if (!m.holds_lm_head) return;
    norm(Part::kNorms, h);  // final norm
    if (!m.tie_word_embeddings || !m.holds_embedding) {
      sharded(Part::kLmHead, mul({u64(m.vocab_size), h}));
    }
  }

 private:
  void sharded(Part part, std::uint64_t elements) {
    emit({part, elements, ceil_div(elements, t), wd, 0});
  }
  void replicated(Part part, std::uint64_t elements) { emit({part, elements, elements, wd, 0}); }
  // A linear layer's weight (`module` as vLLM names it in a decoder layer), `in_features` its
  // inputs on one rank (row-parallel layers split them): sharded or replicated, quantized unless
  // ModelSpec::quantization keeps the module at the model's dtype.
  void linear_shard(Part part, const char* module, std::uint64_t elements, std::uint64_t per_rank,
                    std::uint64_t in_features, std::uint64_t matrices) {
    Tensor tensor{part, elements, per_rank, wd, 0};
    if (is_quantized_module(m.quantization, layer_, module)) {
      tensor.quant = &m.quantization;
      tensor.in_features = in_features;
      tensor.matrices = matrices;
    }
    emit(tensor);
  }
  void linear(Part part, const char* module, std::uint64_t elements, std::uint64_t in_features,
              std::uint64_t matrices = 1) {
    linear_shard(part, module, elements, ceil_div(elements, t), in_features, matrices);
  }
  void norm(Part part, std::uint64_t width) {
    replicated(part, mul({width, m.layernorm_bias ? 2U : 1U}));
  }

  void decoder_layer(std::int64_t layer) {
    layer_ = layer;
    const BlockKind block = m.block_kind(layer);
    const bool has_attention =
        block == BlockKind::kAttentionMlp || block == BlockKind::kAttentionOnly;
    const bool two_sublayers =
        block == BlockKind::kAttentionMlp || block == BlockKind::kLinearAttentionMlp;
    const bool has_mlp = two_sublayers || block == BlockKind::kMlpOnly;
    // Norms: norms_per_layer for a mixer + MLP block, one for a hybrid model's single-op block.
    const std::int64_t norms = two_sublayers ? m.norms_per_layer : 1;
    for (std::int64_t i = 0; i < norms; ++i) norm(Part::kNorms, h);
    if (has_attention && m.attention.kind == AttentionKind::kMla) {
      mla_attention();
    } else if (has_attention) {
      attention(m.layer_kinds[static_cast<std::size_t>(layer)]);
    }
    if (block == BlockKind::kMamba) mamba();
    if (block == BlockKind::kLinearAttentionMlp) gated_delta_net();
    if (has_mlp && m.moe.is_moe_layer(layer)) {
      moe_mlp();
    } else if (has_mlp) {
      dense_mlp();
    }
  }

  void mla_attention() {
    const AttentionSpec& a = m.attention;
    const MlaSpec& mla = a.mla;
    const std::uint64_t qh = u64(a.num_q_heads);
    const std::uint64_t qk = add(u64(mla.qk_nope_head_dim), u64(mla.qk_rope_head_dim));
    if (mla.q_lora_rank > 0) {
      const std::uint64_t q_a = mul({h, u64(mla.q_lora_rank)});
      linear_shard(Part::kAttention, "self_attn.q_a_proj", q_a, q_a, h, 1);
      replicated(Part::kAttention, u64(mla.q_lora_rank));  // q_a_layernorm
      linear(Part::kAttention, "self_attn.q_b_proj", mul({u64(mla.q_lora_rank), qh, qk}),
             u64(mla.q_lora_rank));
    } else {
      linear(Part::kAttention, "self_attn.q_proj", mul({h, qh, qk}), h);
    }
    const std::uint64_t kv_a = mul({h, add(u64(mla.kv_lora_rank), u64(mla.qk_rope_head_dim))});
    linear_shard(Part::kAttention, "self_attn.kv_a_proj_with_mqa", kv_a, kv_a, h, 1);
    replicated(Part::kAttention, u64(mla.kv_lora_rank));  // kv_a_layernorm
    linear(Part::kAttention, "self_attn.kv_b_proj",
           mul({u64(mla.kv_lora_rank), qh, add(u64(mla.qk_nope_head_dim), u64(mla.v_head_dim))}),
           u64(mla.kv_lora_rank));
    linear(Part::kAttention, "self_attn.o_proj", mul({qh, u64(mla.v_head_dim), h}),
           ceil_div(mul({qh, u64(mla.v_head_dim)}), t));
    if (a.indexer.enabled()) sparse_indexer();
  }

  // DeepSeek Sparse Attention's lightning indexer, whole on every GPU (vLLM's replicated
  // layers): its query projection from the low-rank query (else the hidden state), its key
  // projection and LayerNorm, and the per-head weights (kept in 16 bits, unquantized).
  void sparse_indexer() {
    const SparseIndexerSpec& ix = m.attention.indexer;
    const std::uint64_t q_in =
        m.attention.mla.q_lora_rank > 0 ? u64(m.attention.mla.q_lora_rank) : h;
    const std::uint64_t wq = mul({q_in, u64(ix.heads), u64(ix.head_dim)});
    linear_shard(Part::kAttention, "self_attn.indexer.wq_b", wq, wq, q_in, 1);
    const std::uint64_t wk = mul({h, u64(ix.head_dim)});
    linear_shard(Part::kAttention, "self_attn.indexer.wk", wk, wk, h, 1);
    replicated(Part::kAttention, mul({u64(ix.head_dim), 2}));  // k_norm: weight and bias
    replicated(Part::kAttention, mul({h, u64(ix.heads)}));     // weights_proj
  }

  void attention(LayerKind kind) {
    const AttentionSpec& a = m.attention;
    const LayerKvGeometry g = layer_kv_geometry(m, kind);
    const std::int64_t kv_heads = g.kv_heads;
    const std::int64_t k_dim = g.k_dim;
    const std::int64_t v_dim = g.v_dim;
    const bool has_v = g.stores_v;
    // With an output gate q_proj also projects the gate (one value per query element).
    const std::uint64_t q_width = mul({u64(a.num_q_heads), u64(k_dim), a.output_gate ? 2U : 1U});
    const std::uint64_t o_width = mul({u64(a.num_q_heads), u64(v_dim)});
    const std::uint64_t kv_rank_heads =
        u64(kv_heads_per_rank(kv_heads, static_cast<std::int64_t>(t)));
    auto kv_tensor = [&](std::uint64_t dim, const char* module) {
      linear_shard(Part::kAttention, module, mul({h, u64(kv_heads), dim}),
                   mul({h, kv_rank_heads, dim}), h, 1);
      if (m.attention_bias) {
        emit({Part::kAttention, mul({u64(kv_heads), dim}), mul({kv_rank_heads, dim}), wd, 0});
      }
    };
    linear(Part::kAttention, "self_attn.q_proj", mul({h, q_width}), h);
    if (m.attention_bias) sharded(Part::kAttention, q_width);
    kv_tensor(u64(k_dim), "self_attn.k_proj");
    if (has_v) kv_tensor(u64(v_dim), "self_attn.v_proj");
    linear(Part::kAttention, "self_attn.o_proj", mul({o_width, h}), ceil_div(o_width, t));
    if (m.attention_bias) replicated(Part::kAttention, h);
    if (m.qk_norm && m.qk_norm_whole) {
      sharded(Part::kAttention, mul({u64(a.num_q_heads), u64(k_dim)}));
      emit({Part::kAttention, mul({u64(kv_heads), u64(k_dim)}), mul({kv_rank_heads, u64(k_dim)}),
            wd, 0});
    } else if (m.qk_norm) {
      replicated(Part::kAttention, u64(k_dim));
      replicated(Part::kAttention, u64(k_dim));
    }
  }

  void mamba() {
    const SsmSpec& s = m.ssm;
    const std::uint64_t inner = mul({u64(s.num_heads), u64(s.head_dim)});
    const std::uint64_t bc = mul({2, u64(s.num_groups), u64(s.state_size)});
    const std::uint64_t heads = u64(s.num_heads);
    linear(Part::kSsm, "mixer.in_proj", mul({h, add(add(mul({2, inner}), bc), heads)}), h);
    sharded(Part::kSsm, mul({add(inner, bc), u64(s.conv_kernel)}));  // conv1d weight
    if (s.conv_bias) sharded(Part::kSsm, add(inner, bc));            // conv1d bias
    sharded(Part::kSsm, mul({3, heads}));                            // dt_bias, A_log, D
    sharded(Part::kSsm, inner);                                      // gated norm
    linear(Part::kSsm, "mixer.out_proj", mul({inner, h}), ceil_div(inner, t));
  }

  // Gated DeltaNet (vLLM's Qwen3-Next layout): q, k, v and the output gate z from one
  // projection, the per-head b and a from another, a depthwise conv over q/k/v, per-head decay
  // parameters, a gated RMSNorm over one value head, and the output projection.
  void gated_delta_net() {
    const GatedDeltaNetSpec& g = m.gdn;
    const std::uint64_t kw = u64(g.key_width());
    const std::uint64_t vw = u64(g.value_width());
    const std::uint64_t vh = u64(g.num_value_heads);
    linear(Part::kSsm, "linear_attn.in_proj_qkvz", mul({h, add(mul({2, kw}), mul({2, vw}))}), h);
    linear(Part::kSsm, "linear_attn.in_proj_ba", mul({h, 2, vh}), h);
    sharded(Part::kSsm, mul({add(mul({2, kw}), vw), u64(g.conv_kernel)}));  // conv1d weight
    sharded(Part::kSsm, mul({2, vh}));                                      // dt_bias, A_log
    replicated(Part::kSsm, u64(g.value_head_dim));                          // gated norm
    linear(Part::kSsm, "linear_attn.out_proj", mul({vw, h}), ceil_div(vw, t));
  }

  void moe_mlp() {
    const std::uint64_t mats = m.gated_mlp ? 3 : 2;  // gate + up + down, or up + down
    const std::uint64_t up_mats = m.gated_mlp ? 2 : 1;
    const MoeSpec& e = m.moe;
    const std::uint64_t ei = u64(e.expert_intermediate_size);
    const std::uint64_t ne = u64(e.num_experts);
    // The rank's experts: whole ones under expert parallelism, else a width slice of every one,
    // over the GPUs the MoE layers are spread on (the TP group unless data parallelism widens it).
    const std::uint64_t ranks = e.shard_ranks > 0 ? u64(e.shard_ranks) : t;
    const std::uint64_t rank_ne = e.expert_parallel ? ceil_div(ne, ranks) : ne;
    const std::uint64_t width_split = e.expert_parallel ? 1 : ranks;
    // The rank's expert shapes as the kernel allocates them (padding only applies to experts
    // in their own dtype, the layout MXFP4 kernels pad).
    const std::uint64_t rank_h = round_up(h, u64(padding.hidden_align));
    const std::uint64_t rank_ei =
        round_up(ceil_div(ei, width_split), u64(padding.intermediate_align));
    const bool padded = e.has_expert_dtype && !(padding == ExpertPadding{});
    // Elements of `per_expert` each, for every expert of the model and for the rank's share.
    const auto experts_shard = [&](std::uint64_t per_expert) {
      return e.expert_parallel ? mul({rank_ne, per_expert})
                               : ceil_div(mul({ne, per_expert}), width_split);
    };
    if (e.has_expert_dtype) {
      const std::uint64_t n = mul({ne, mats, h, ei});
      const std::uint64_t per_rank =
          padded ? mul({rank_ne, mats, rank_h, rank_ei}) : experts_shard(mul({mats, h, ei}));
      emit({Part::kRoutedExperts, n, per_rank, e.expert_dtype, e.expert_scale_group_size});
    } else {
      // gate + up (h inputs) and down (expert-width inputs) of every expert.
      linear_shard(Part::kRoutedExperts, "mlp.experts", mul({ne, up_mats, h, ei}),
                   experts_shard(mul({up_mats, h, ei})), h, rank_ne * up_mats);
      linear_shard(Part::kRoutedExperts, "mlp.experts", mul({ne, h, ei}),
                   experts_shard(mul({h, ei})), ceil_div(ei, width_split), rank_ne);
    }
    if (m.mlp_bias && padded) {
      emit({Part::kRoutedExperts, mul({ne, up_mats, ei}), mul({rank_ne, up_mats, rank_ei}), wd, 0});
      emit({Part::kRoutedExperts, mul({ne, h}), mul({rank_ne, rank_h}), wd, 0});
    } else if (m.mlp_bias) {
      emit(
          {Part::kRoutedExperts, mul({ne, up_mats, ei}), experts_shard(mul({up_mats, ei})), wd, 0});
      emit({Part::kRoutedExperts, mul({ne, h}), mul({rank_ne, h}), wd, 0});
    }
    replicated(Part::kRouter, mul({h, ne}));
    if (m.mlp_bias) replicated(Part::kRouter, ne);
    if (e.num_shared_experts > 0) {
      const std::uint64_t si = u64(e.shared_expert_size());
      const std::uint64_t ns = u64(e.num_shared_experts);
      linear(Part::kSharedExperts, "mlp.shared_experts", mul({ns, up_mats, h, si}), h,
             ns * up_mats);
      linear(Part::kSharedExperts, "mlp.shared_experts", mul({ns, h, si}), ceil_div(si, t), ns);
    }
  }

  void dense_mlp() {
    const std::uint64_t up_mats = m.gated_mlp ? 2 : 1;
    const std::uint64_t inter = u64(m.intermediate_size);
    if (m.gated_mlp) linear(Part::kMlp, "mlp.gate_proj", mul({h, inter}), h);
    linear(Part::kMlp, "mlp.up_proj", mul({h, inter}), h);
    linear(Part::kMlp, "mlp.down_proj", mul({inter, h}), ceil_div(inter, t));
    if (m.mlp_bias) {
      sharded(Part::kMlp, mul({up_mats, inter}));
      replicated(Part::kMlp, h);
    }
  }

  const ModelSpec& m;
  const std::uint64_t t;
  const ExpertPadding& padding;
  const std::function<void(const Tensor&)>& emit;
  const Dtype wd;
  const std::uint64_t h;
  std::int64_t layer_ = -1;  // the decoder layer being walked
};

// Calls `emit` for every weight tensor of the model as sharded over `tp` ranks.
void for_each_tensor(const ModelSpec& m, std::int64_t tp, const ExpertPadding& padding,
                     const std::function<void(const Tensor&)>& emit) {
  TensorWalker(m, tp, padding, emit).run();
}

Bytes tensor_bytes(const Tensor& t, bool per_rank) {
  const std::uint64_t n = per_rank ? t.elements_per_rank : t.elements;
  if (t.quant) return quantized_tensor_bytes(*t.quant, n, t.in_features, t.matrices);
  Bytes bytes = bytes_for_elements(n, t.dtype);
  if (t.scale_group_size > 0) bytes = add(bytes, ceil_div(n, u64(t.scale_group_size)));  // scales
  return bytes;
}

}  // namespace

std::uint64_t ParameterCounts::active(const ModelSpec& model) const {
  std::uint64_t routed = 0;
  if (model.moe.enabled()) {
    routed = routed_experts / static_cast<std::uint64_t>(model.moe.num_experts) *
             static_cast<std::uint64_t>(model.moe.experts_per_token);
  }
  return total() - routed_experts + routed - vision;
}

ParameterCounts parameter_counts(const ModelSpec& model) {
  ParameterCounts c;
  for_each_tensor(model, 1, ExpertPadding{}, [&](const Tensor& t) {
    switch (t.part) {
      case Part::kEmbedding:
        c.embedding = add(c.embedding, t.elements);
        break;
      case Part::kAttention:
        c.attention = add(c.attention, t.elements);
        break;
      case Part::kMlp:
        c.mlp = add(c.mlp, t.elements);
        break;
      case Part::kRoutedExperts:
        c.routed_experts = add(c.routed_experts, t.elements);
        break;
      case Part::kSharedExperts:
        c.shared_experts = add(c.shared_experts, t.elements);
        break;
      case Part::kRouter:
        c.router = add(c.router, t.elements);
        break;
      case Part::kSsm:
        c.ssm = add(c.ssm, t.elements);
        break;
      case Part::kNorms:
        c.norms = add(c.norms, t.elements);
        break;
      case Part::kVision:
        c.vision = add(c.vision, t.elements);
        break;
      case Part::kLmHead:
        c.lm_head = add(c.lm_head, t.elements);
        break;
    }
  });
  return c;
}

Bytes weights_bytes(const ModelSpec& model) {
  if (model.moe.shard_ranks == 0 && !model.moe.expert_parallel) {
    return weights_bytes_per_gpu(model, 1);
  }
  ModelSpec whole = model;  // every expert, whatever the deployment spreads over its GPUs
  whole.moe.shard_ranks = 0;
  whole.moe.expert_parallel = false;
  return weights_bytes_per_gpu(whole, 1);
}

Bytes weights_bytes_per_gpu(const ModelSpec& model, std::int64_t tp, const ExpertPadding& padding) {
  KVSIM_ASSERT(padding.hidden_align >= 1 && padding.intermediate_align >= 1,
               "weights: expert padding alignment < 1");
  Bytes total = 0;
  for_each_tensor(model, tp, padding,
                  [&](const Tensor& t) { total = add(total, tensor_bytes(t, true)); });
  return total;
}

}  // namespace kvsim::model
