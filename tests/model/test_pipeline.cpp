// Pipeline stages of a small model, worked by hand: vLLM's layer split, each stage's weights and
// KV bytes, the transfer size, and the inter-node link rules.
#include <catch2/catch.hpp>

#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/pipeline.h"
#include "model/weights.h"

using namespace kvsim;
using model::PipelineStage;

namespace {

// 5 layers, hidden 16, gated MLP 32, vocab 100, 4 query heads and 2 KV heads of 4, bf16, RMSNorm.
// Parameters: embedding 100·16 = 1,600; per layer Q 16·16 = 256, K and V 16·8 = 128 each,
// O 256 (attention 768), MLP 3·16·32 = 1,536, two norms 32: 2,336; final norm 16; LM head 1,600.
model::ModelSpec tiny(bool tied = false) {
  model::ModelSpec m;
  m.name = "tiny";
  m.num_layers = 5;
  m.hidden_size = 16;
  m.intermediate_size = 32;
  m.vocab_size = 100;
  m.max_context = 1024;
  m.attention.num_q_heads = 4;
  m.attention.num_kv_heads = 2;
  m.attention.head_dim = 4;
  m.layer_kinds.assign(5, model::LayerKind::kFullAttention);
  m.tie_word_embeddings = tied;
  return m;
}

std::vector<std::int64_t> sizes(std::int64_t layers, std::int64_t pp) {
  std::vector<std::int64_t> out;
  for (const PipelineStage& s : model::pipeline_stages(layers, pp)) out.push_back(s.num_layers());
  return out;
}

}  // namespace

TEST_CASE("vLLM's layer split: contiguous, even, remainder before the last stage", "[model][pp]") {
  CHECK(sizes(80, 2) == std::vector<std::int64_t>{40, 40});
  CHECK(sizes(5, 2) == std::vector<std::int64_t>{3, 2});
  CHECK(sizes(10, 4) == std::vector<std::int64_t>{2, 3, 3, 2});
  CHECK(sizes(7, 3) == std::vector<std::int64_t>{2, 3, 2});
  CHECK(sizes(61, 4) == std::vector<std::int64_t>{15, 15, 16, 15});
  const auto st = model::pipeline_stages(10, 4);
  CHECK(st[2].first_layer == 5);
  CHECK(st[2].end_layer == 8);
  CHECK(model::pipeline_parallel_problem(tiny(), 5).empty());
  CHECK(model::pipeline_parallel_problem(tiny(), 6).find("at most one stage per decoder layer") !=
        std::string::npos);
}

TEST_CASE("Stage weights: embeddings on the first stage, norm and LM head on the last",
          "[model][pp]") {
  const model::ModelSpec m = tiny();
  REQUIRE(model::weights_bytes(m) == 2 * (1600 + 5 * 2336 + 16 + 1600));  // 29,792
  const auto st = model::pipeline_stages(5, 2);
  const model::ModelSpec s0 = model::stage_model(m, st[0], 2);
  const model::ModelSpec s1 = model::stage_model(m, st[1], 2);
  CHECK(model::weights_bytes(s0) == 2 * (1600 + 3 * 2336));       // 17,216
  CHECK(model::weights_bytes(s1) == 2 * (2 * 2336 + 16 + 1600));  // 12,576
  CHECK(model::weights_bytes(s0) + model::weights_bytes(s1) == model::weights_bytes(m));
  // TP 2: embedding, projections and MLP halved; the norms replicated.
  // Stage 0: 800 + 3 × (384 + 768 + 32) = 4,352 parameters.
  CHECK(model::weights_bytes_per_gpu(s0, 2) == 2 * 4352);
  // Tied embeddings: the last stage keeps its own copy of the head (vLLM), one more matrix in all.
  const model::ModelSpec t = tiny(true);
  CHECK(model::weights_bytes(t) == 2 * (1600 + 5 * 2336 + 16));
  CHECK(model::weights_bytes(model::stage_model(t, st[1], 2)) == 2 * (2 * 2336 + 16 + 1600));
  // One stage: the model itself.
  CHECK(model::weights_bytes(model::stage_model(m, model::pipeline_stages(5, 1)[0], 1)) ==
        model::weights_bytes(m));
}

TEST_CASE("Stage KV: each stage caches only its own layers", "[model][pp]") {
  const model::ModelSpec m = tiny();
  const model::KvFormat bf16;
  // Per layer per token: K + V × 2 heads × 4 dims × 2 B = 32 B (tp 2: one head, 16 B).
  CHECK(model::kv_bytes_per_token(m, bf16) == 5 * 32);
  const auto st = model::pipeline_stages(5, 2);
  CHECK(model::kv_bytes_per_token(model::stage_model(m, st[0], 2), bf16) == 3 * 32);
  CHECK(model::kv_bytes_per_token(model::stage_model(m, st[1], 2), bf16) == 2 * 32);
  CHECK(model::kv_bytes_per_token(model::stage_model(m, st[0], 2), bf16, 2) == 3 * 16);
  // Only the last stage samples: no sampler peak in the others' activation reserve (256 rows ×
  // 100 logits × 38 B: bf16 logits, fp32 copy, sorted values and indices, the sort's scratch).
  const Bytes logits = 256ULL * 100 * 38;
  CHECK(model::default_activation_reserve_bytes(model::stage_model(m, st[1], 2), 1) -
            model::default_activation_reserve_bytes(model::stage_model(m, st[0], 2), 1) ==
        logits);
}

TEST_CASE("A stage keeps the MoE layer pattern at its original indices", "[model][pp]") {
  model::ModelSpec m = tiny();
  m.num_layers = 10;
  m.layer_kinds.assign(10, model::LayerKind::kFullAttention);
  m.moe.num_experts = 4;
  m.moe.experts_per_token = 2;
  m.moe.expert_intermediate_size = 8;
  m.moe.first_dense_layers = 1;
  m.moe.moe_layer_interval = 2;                                    // MoE layers 1, 3, 5, 7, 9
  for (const PipelineStage& st : model::pipeline_stages(10, 4)) {  // 2, 3, 3, 2 layers
    const model::ModelSpec s = model::stage_model(m, st, 4);
    for (std::int64_t l = 0; l < s.num_layers; ++l) {
      INFO("stage " << st.index << " layer " << l);
      CHECK(s.moe.is_moe_layer(l) == m.moe.is_moe_layer(st.first_layer + l));
    }
  }
}

TEST_CASE("Links: a TP group or a stage boundary across nodes uses the inter-node link",
          "[model][pp]") {
  model::HardwareSpec hw;
  hw.interconnect_bandwidth = 300e9;
  hw.interconnect_latency_s = 3e-6;
  hw.internode_bandwidth = 25e9;
  hw.internode_latency_s = 5e-6;
  hw.gpus_per_node = 8;
  CHECK_FALSE(model::allreduce_link(hw, 8).internode);
  CHECK(model::allreduce_link(hw, 16).internode);
  CHECK(model::allreduce_link(hw, 16).bandwidth == 25e9);
  // TP 4 × PP 2: both stages on one node (GPUs 0-7); TP 4 × PP 4: stages 1|2 cross nodes.
  CHECK_FALSE(model::stage_link(hw, 4, 0).internode);
  CHECK(model::stage_link(hw, 4, 1).internode);
  CHECK_FALSE(model::stage_link(hw, 4, 2).internode);
  // TP 8 × PP 2: one node per stage.
  CHECK(model::stage_link(hw, 8, 0).internode);
  CHECK(model::stage_link(hw, 8, 0).latency_s == 5e-6);
  // Two nodes of four GPUs (the llm-k8s TP4 × PP2 runs as a 4-GPU-node layout would see them).
  hw.gpus_per_node = 4;
  CHECK(model::stage_link(hw, 4, 0).internode);
  // hidden_states + residual in bf16, each TP rank sending its 1/tp.
  CHECK(model::stage_transfer_bytes_per_token(tiny(), 1) == 2 * 16 * 2);
  CHECK(model::stage_transfer_bytes_per_token(tiny(), 2) == 2 * 16 * 2 / 2);
}
