// Data and expert parallelism of an MoE model, worked by hand on a tiny one: what each GPU
// holds, and which deployments are refused.
#include <catch2/catch.hpp>

#include "model/expert_parallel.h"
#include "model/weights.h"

using namespace kvsim;

namespace {

// 2 layers, hidden 16, 6 routed experts (top 2) of gated width 32, vocab 100, 4 query heads and
// 2 KV heads of 4, bf16. Elements: embedding 1,600; per layer attention 768 (Q 256, K 128, V
// 128, O 256), routed experts 6 · 3 · 16 · 32 = 9,216, router 16 · 6 = 96, two norms 32; final
// norm 16; LM head 1,600. Whole: 1,600 + 2 · 10,112 + 1,616 = 23,440 (46,880 bytes).
model::ModelSpec tiny_moe() {
  model::ModelSpec m;
  m.name = "tiny-moe";
  m.num_layers = 2;
  m.hidden_size = 16;
  m.intermediate_size = 32;
  m.vocab_size = 100;
  m.max_context = 1024;
  m.attention.num_q_heads = 4;
  m.attention.num_kv_heads = 2;
  m.attention.head_dim = 4;
  m.layer_kinds.assign(2, model::LayerKind::kFullAttention);
  m.moe.num_experts = 6;
  m.moe.experts_per_token = 2;
  m.moe.expert_intermediate_size = 32;
  return m;
}

}  // namespace

TEST_CASE("Each GPU holds its share of the routed experts and everything else of its rank",
          "[model][ep]") {
  const model::ModelSpec m = tiny_moe();
  REQUIRE(model::weights_bytes(m) == 46880);
  // DP 2 × TP 1: 3 whole experts per GPU (EP), or half of every expert's width: 4,608 each way.
  // 1,600 + 2 · (768 + 4,608 + 96 + 32) + 1,616 = 14,224 elements.
  CHECK(model::weights_bytes_per_gpu(model::shard_experts(m, 1, 2, true), 1) == 2 * 14224);
  CHECK(model::weights_bytes_per_gpu(model::shard_experts(m, 1, 2, false), 1) == 2 * 14224);
  // DP 2 × TP 2 = 4 GPUs: attention, embedding and head split over TP 2 (Q 128, K and V one KV
  // head each 64, O 128: 384; vocabulary 800 each); EP gives ceil(6 / 4) = 2 whole experts
  // (3,072), the width split a quarter of every one (2,304).
  const std::uint64_t rest = 800 + 2 * (384 + 96 + 32) + 16 + 800;
  CHECK(model::weights_bytes_per_gpu(model::shard_experts(m, 2, 2, true), 2) ==
        2 * (rest + 2 * 3072));
  CHECK(model::weights_bytes_per_gpu(model::shard_experts(m, 2, 2, false), 2) ==
        2 * (rest + 2 * 2304));
  // Expert parallelism inside one TP group (DP 1): 3 whole experts per GPU of TP 2.
  CHECK(model::weights_bytes_per_gpu(model::shard_experts(m, 2, 1, true), 2) ==
        2 * (rest + 2 * 4608));
  // The whole model is still the whole model.
  CHECK(model::weights_bytes(model::shard_experts(m, 2, 2, true)) == 46880);
  CHECK(model::parameter_counts(model::shard_experts(m, 2, 2, true)).total() == 23440);
  // Data parallelism alone over one TP group changes nothing.
  CHECK(model::shard_experts(m, 2, 1, false).moe.shard_ranks == 0);
}

TEST_CASE("Data and expert parallel deployments a model cannot take are refused", "[model][ep]") {
  const model::ModelSpec m = tiny_moe();
  CHECK(model::expert_parallel_problem(m, 1, 2, true).empty());
  CHECK(model::expert_parallel_problem(m, 2, 3, true).empty());  // 6 experts on 6 GPUs
  CHECK_THAT(model::expert_parallel_problem(m, 2, 4, true),
             Catch::Contains("leaves GPUs without an expert") && Catch::Contains("6 routed"));
  CHECK_THAT(model::expert_parallel_problem(m, 1, 0, false),
             Catch::Contains("positive data parallel size"));
  model::ModelSpec dense = m;
  dense.moe = {};
  CHECK(model::expert_parallel_problem(dense, 1, 4, false).empty());
  CHECK_THAT(model::expert_parallel_problem(dense, 1, 2, true),
             Catch::Contains("needs a mixture-of-experts model"));
  CHECK(model::data_parallel_lockstep(m, 2));
  CHECK_FALSE(model::data_parallel_lockstep(m, 1));
  CHECK_FALSE(model::data_parallel_lockstep(dense, 4));
}
