#pragma once
// Parameter counts and weight bytes from a model's architecture, whole and per tensor-parallel
// rank. Counts are exact for the architecture as described by ModelSpec; the tests check them
// against published parameter counts (Llama-2-7B 6,738,415,616; Llama-3-70B ≈ 70.55 B; ...).
//
// What is counted: token embeddings (vocab × hidden), learned position embeddings
// (max_context × hidden), per layer the attention projections (Q, K, V, O, or MLA's q/kv
// down- and up-projections and latent norm, with biases when attention_bias), Q/K norms, the MLP
// (gate+up+down when gated, up+down otherwise, biases when mlp_bias) or the MoE (routed experts,
// shared experts, router), Mamba-2 mixers, the layer norms (norms_per_layer, ×2 with
// layernorm_bias), the final norm, and the LM head unless tied to the embeddings.
//
// Tensor-parallel sharding (vLLM's layout): column/row-parallel matrices (Q, K, V, O, MLP,
// experts, MLA up-projections, Mamba in/out projections) and the vocabulary (embeddings, LM head)
// are split over the ranks, each shard rounded up; K/V projections keep a whole head per rank
// when tp > kv_heads (replicated); norms, routers, MLA down-projections, learned positions and
// row-parallel biases are replicated on every rank.

#include <cstdint>

#include "common/checked_math.h"
#include "common/units.h"
#include "model/model_spec.h"

namespace kvsim::model {

// Parameter counts by part (whole model).
struct ParameterCounts {
  std::uint64_t embedding = 0;       // token (and learned position) embeddings
  std::uint64_t attention = 0;       // projections, biases, Q/K norms, MLA latent norms
  std::uint64_t mlp = 0;             // dense MLPs (incl. the dense layers of MoE models)
  std::uint64_t routed_experts = 0;  // all routed experts of all MoE layers
  std::uint64_t shared_experts = 0;
  std::uint64_t router = 0;
  std::uint64_t ssm = 0;      // Mamba-2 and gated DeltaNet mixers
  std::uint64_t norms = 0;    // layer norms and the final norm
  std::uint64_t lm_head = 0;  // 0 when tied
  std::uint64_t vision = 0;   // a multimodal model's vision encoder and projector

  // Throws kvsim::Error when the sum exceeds 2^64.
  std::uint64_t total() const {
    std::uint64_t sum = 0;
    for (std::uint64_t part : {embedding, attention, mlp, routed_experts, shared_experts, router,
                               ssm, norms, lm_head, vision}) {
      sum = checked_add(sum, part, "the model's parameter count");
    }
    return sum;
  }
  // Parameters one token touches: routed experts counted experts_per_token / num_experts; the
  // vision encoder not at all.
  std::uint64_t active(const ModelSpec& model) const;
};

ParameterCounts parameter_counts(const ModelSpec& model);

// Bytes of all weights: every parameter in weight_dtype, except routed experts in
// moe.expert_dtype (plus its scales) when moe.has_expert_dtype. Each tensor rounded up to a byte.
Bytes weights_bytes(const ModelSpec& model);

// How an engine's MoE kernel lays out routed experts stored in moe.expert_dtype: each rank's
// expert tensors are allocated with the hidden size rounded up to hidden_align and the rank's
// share of the expert intermediate size rounded up to intermediate_align (vLLM's MXFP4 MoE
// kernels pad so; see model::vllm_expert_padding). 1 and 1 = the checkpoint's shapes.
struct ExpertPadding {
  std::int64_t hidden_align = 1;
  std::int64_t intermediate_align = 1;
  bool operator==(const ExpertPadding&) const = default;
};

// Bytes of the weights one tensor-parallel rank holds (see the sharding rule above), with routed
// experts in moe.expert_dtype padded as `padding` says. Requires tp >= 1; tp == 1 and no padding
// gives weights_bytes(model).
Bytes weights_bytes_per_gpu(const ModelSpec& model, std::int64_t tp,
                            const ExpertPadding& padding = {});

}  // namespace kvsim::model
