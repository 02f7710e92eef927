#include <catch2/catch.hpp>

#include "model/weights.h"

using namespace kvsim;
using namespace kvsim::model;

namespace {

// Llama-2-7B: the parameter count is published exactly (6,738,415,616).
ModelSpec llama2_7b() {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.intermediate_size = 11008;
  m.vocab_size = 32000;
  m.max_context = 4096;
  m.weight_dtype = Dtype::kFp16;
  m.attention.kind = AttentionKind::kMha;
  m.attention.num_q_heads = 32;
  m.attention.num_kv_heads = 32;
  m.attention.head_dim = 128;
  m.layer_kinds.assign(32, LayerKind::kFullAttention);
  return m;
}

}  // namespace

TEST_CASE("Llama-2-7B parameters by part, hand-computed", "[model][weights]") {
  const ParameterCounts c = parameter_counts(llama2_7b());
  CHECK(c.embedding == 32000ULL * 4096);
  CHECK(c.lm_head == 32000ULL * 4096);
  CHECK(c.attention == 32ULL * 4 * 4096 * 4096);
  CHECK(c.mlp == 32ULL * 3 * 4096 * 11008);
  CHECK(c.norms == (2ULL * 32 + 1) * 4096);
  CHECK(c.routed_experts == 0);
  CHECK(c.total() == 6'738'415'616ULL);
  CHECK(weights_bytes(llama2_7b()) == 2 * 6'738'415'616ULL);
}

TEST_CASE("tied embeddings drop the LM head, learned positions and biases add theirs",
          "[model][weights]") {
  ModelSpec m = llama2_7b();
  m.tie_word_embeddings = true;
  CHECK(parameter_counts(m).lm_head == 0);
  m.learned_positions = true;
  CHECK(parameter_counts(m).embedding == 32000ULL * 4096 + 4096ULL * 4096);
  ModelSpec b = llama2_7b();
  b.attention_bias = true;
  b.mlp_bias = true;
  b.layernorm_bias = true;
  b.gated_mlp = false;
  const ParameterCounts c = parameter_counts(b);
  CHECK(c.attention == 32ULL * (4 * 4096 * 4096 + 4 * 4096));
  CHECK(c.mlp == 32ULL * (2 * 4096 * 11008 + 11008 + 4096));
  CHECK(c.norms == (2ULL * 32 + 1) * 2 * 4096);
}

TEST_CASE("MoE: routed experts, shared experts and router, active parameters", "[model][weights]") {
  ModelSpec m = llama2_7b();
  m.moe.num_experts = 8;
  m.moe.experts_per_token = 2;
  m.moe.expert_intermediate_size = 1000;
  m.moe.num_shared_experts = 1;
  m.moe.shared_expert_intermediate_size = 500;
  m.moe.first_dense_layers = 2;
  const ParameterCounts c = parameter_counts(m);
  CHECK(c.mlp == 2ULL * 3 * 4096 * 11008);  // the two dense layers
  CHECK(c.routed_experts == 30ULL * 8 * 3 * 4096 * 1000);
  CHECK(c.shared_experts == 30ULL * 3 * 4096 * 500);
  CHECK(c.router == 30ULL * 4096 * 8);
  CHECK(c.active(m) == c.total() - c.routed_experts + c.routed_experts / 4);
}

TEST_CASE("expert weights in a 4-bit type with 8-bit group scales", "[model][weights]") {
  ModelSpec m = llama2_7b();
  m.moe.num_experts = 4;
  m.moe.experts_per_token = 1;
  m.moe.expert_intermediate_size = 64;
  const Bytes bf16 = weights_bytes(m);
  m.moe.has_expert_dtype = true;
  m.moe.expert_dtype = Dtype::kFp4;
  m.moe.expert_scale_group_size = 32;
  const std::uint64_t expert_elems = 4ULL * 3 * 4096 * 64;  // per layer
  // Per layer: 2 B per element becomes 0.5 B + 1 B per 32 elements.
  CHECK(bf16 - weights_bytes(m) ==
        32 * (expert_elems * 2 - (expert_elems / 2 + expert_elems / 32)));
}

TEST_CASE("tensor-parallel shards: tp 1 is the whole model, replicated parts stay whole",
          "[model][weights][tp]") {
  const ModelSpec m = llama2_7b();
  CHECK(weights_bytes_per_gpu(m, 1) == weights_bytes(m));
  const Bytes norms = 2 * (2ULL * 32 + 1) * 4096;
  CHECK(weights_bytes_per_gpu(m, 4) == (weights_bytes(m) - norms) / 4 + norms);
  // GQA with more ranks than KV heads: K and V projections keep one whole head per rank.
  ModelSpec g = m;
  g.attention.kind = AttentionKind::kGqa;
  g.attention.num_kv_heads = 2;
  const Bytes kv_proj_total = 32ULL * 2 * 4096 * 2 * 128 * 2;  // layers × (K,V) × h × heads × d × B
  const Bytes rest = weights_bytes(g) - kv_proj_total - norms;
  CHECK(weights_bytes_per_gpu(g, 8) == rest / 8 + norms + 32ULL * 2 * 4096 * 1 * 128 * 2);
}

TEST_CASE("MLA projections: low-rank KV down-projection replicated, up-projections split",
          "[model][weights][mla]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 1;
  m.layer_kinds.assign(1, LayerKind::kFullAttention);
  m.hidden_size = 2048;
  m.attention.kind = AttentionKind::kMla;
  m.attention.num_q_heads = 16;
  m.attention.num_kv_heads = 16;
  m.attention.mla = {512, 64, 128, 128, 0};
  // q 2048×16×192, kv_a 2048×576, kv_a norm 512, kv_b 512×16×256, o 16×128×2048.
  CHECK(parameter_counts(m).attention ==
        2048ULL * 16 * 192 + 2048ULL * 576 + 512 + 512ULL * 16 * 256 + 16ULL * 128 * 2048);
  m.attention.mla.q_lora_rank = 1536;
  CHECK(parameter_counts(m).attention == 2048ULL * 1536 + 1536 + 1536ULL * 16 * 192 +
                                             2048ULL * 576 + 512 + 512ULL * 16 * 256 +
                                             16ULL * 128 * 2048);
}

TEST_CASE("hybrid blocks: Mamba mixers, attention-only and MLP-only layers",
          "[model][weights][ssm]") {
  ModelSpec m = llama2_7b();
  m.num_layers = 3;
  m.hidden_size = 64;
  m.intermediate_size = 256;
  m.vocab_size = 10;
  m.gated_mlp = false;
  m.attention.num_q_heads = 4;
  m.attention.num_kv_heads = 4;
  m.attention.head_dim = 16;
  m.block_kinds = {BlockKind::kMamba, BlockKind::kAttentionOnly, BlockKind::kMlpOnly};
  m.layer_kinds = {LayerKind::kNoKvCache, LayerKind::kFullAttention, LayerKind::kNoKvCache};
  m.ssm = {8, 16, 32, 2, 4, true};
  const ParameterCounts c = parameter_counts(m);
  const std::uint64_t inner = 8 * 16, bc = 2 * 2 * 32;
  CHECK(c.ssm ==
        64 * (2 * inner + bc + 8) + (inner + bc) * 4 + (inner + bc) + 3 * 8 + inner + inner * 64);
  CHECK(c.attention == 4ULL * 64 * 64);
  CHECK(c.mlp == 2ULL * 64 * 256);
  CHECK(c.norms == 3 * 64 + 64);  // one norm per single-op block, plus the final norm
}
