#include <catch2/catch.hpp>

#include "cost/cost_fixtures.h"  // test::llama3_70b: the DESIGN seed model
#include "model/kv_math.h"
#include "model/weights.h"

using namespace kvsim;
using namespace kvsim::model;
using kvsim::test::llama3_70b;

namespace {

KvFormat fmt(Dtype d, std::int64_t group = 0) {
  KvFormat f;
  f.dtype = d;
  f.scale_group_size = group;
  return f;
}

// A small hybrid: 4 layers, window 8 on even layers, full on odd ones, 2 KV heads of 4 dims.
ModelSpec tiny_hybrid() {
  ModelSpec m;
  m.num_layers = 4;
  m.hidden_size = 16;
  m.intermediate_size = 32;
  m.vocab_size = 100;
  m.max_context = 64;
  m.attention.num_q_heads = 4;
  m.attention.num_kv_heads = 2;
  m.attention.head_dim = 4;
  m.attention.sliding_window = 8;
  m.layer_kinds = {LayerKind::kSlidingWindow, LayerKind::kFullAttention, LayerKind::kSlidingWindow,
                   LayerKind::kFullAttention};
  return m;
}

ModelSpec deepseek_v2_lite_attention() {
  ModelSpec m = llama3_70b();
  m.num_layers = 27;
  m.hidden_size = 2048;
  m.attention.kind = AttentionKind::kMla;
  m.attention.num_q_heads = 16;
  m.attention.num_kv_heads = 16;
  m.attention.head_dim = 192;
  m.attention.mla.kv_lora_rank = 512;
  m.attention.mla.qk_rope_head_dim = 64;
  m.attention.mla.qk_nope_head_dim = 128;
  m.attention.mla.v_head_dim = 128;
  m.layer_kinds.assign(27, LayerKind::kFullAttention);
  return m;
}

HardwareSpec gpu(Bytes memory) {
  HardwareSpec hw;
  hw.name = "test-gpu";
  hw.memory_bytes = memory;
  return hw;
}

}  // namespace

TEST_CASE("DESIGN seed: Llama-3-70B at 16 bits is 327,680 bytes per token, 4,096 per layer",
          "[model][kv]") {
  const ModelSpec m = llama3_70b();
  const auto per_layer = kv_bytes_per_token_per_layer(m, fmt(Dtype::kFp16));
  REQUIRE(per_layer.size() == 80);
  for (Bytes b : per_layer) CHECK(b == 4096);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kFp16)) == 327'680);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16)) == 327'680);
  // 16 sequences × 8,192 tokens.
  CHECK(16 * kv_bytes_for_sequence(m, fmt(Dtype::kBf16), 8192) == 42'949'672'960ULL);
}

TEST_CASE("DESIGN seed: the same model as MHA and MQA, with compression factors", "[model][kv]") {
  const ModelSpec m = llama3_70b();
  const ModelSpec mha = with_kv_heads(m, 64);
  const ModelSpec mqa = with_kv_heads(m, 1);
  CHECK(mha.attention.kind == AttentionKind::kMha);
  CHECK(mqa.attention.kind == AttentionKind::kMqa);
  CHECK(kv_bytes_per_token(mha, fmt(Dtype::kFp16)) == 2'621'440);
  CHECK(kv_bytes_per_token(mqa, fmt(Dtype::kFp16)) == 40'960);
  CHECK(kv_bytes_per_token(mha, fmt(Dtype::kFp16)) / kv_bytes_per_token(mqa, fmt(Dtype::kFp16)) ==
        64);
  CHECK(kv_bytes_per_token(mha, fmt(Dtype::kFp16)) / kv_bytes_per_token(m, fmt(Dtype::kFp16)) == 8);
}

TEST_CASE("KV bytes scale with the element size, int4 exactly half a byte", "[model][kv]") {
  const ModelSpec m = llama3_70b();
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kFp32)) == 655'360);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kFp8)) == 163'840);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kInt8)) == 163'840);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kInt4)) == 81'920);
}

TEST_CASE("quantization scales add one scale per group of a head's elements", "[model][kv]") {
  const ModelSpec m = llama3_70b();
  // int4, one fp16 scale per 64 elements: a K row is 8 heads × 128 = 1,024 elements = 512 B,
  // plus 8 heads × 2 groups × 2 B = 32 B of scales; K and V: 1,088 B per layer.
  CHECK(kv_bytes_per_token_layer(m, 0, fmt(Dtype::kInt4, 64)) == 1088);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kInt4, 64)) == 87'040);
  // A group larger than head_dim still needs one scale per head (groups never straddle heads).
  CHECK(kv_bytes_per_token_layer(m, 0, fmt(Dtype::kInt8, 1000)) == 2 * (1024 + 8 * 2));
}

TEST_CASE("sub-byte rows round up per stored row, never on sums", "[model][kv]") {
  ModelSpec m = tiny_hybrid();
  m.attention.num_kv_heads = 1;
  m.attention.num_q_heads = 1;
  m.attention.head_dim = 3;  // 3 × 4 bits = 12 bits per row → 2 bytes
  m.attention.sliding_window = 0;
  m.layer_kinds.assign(4, LayerKind::kFullAttention);
  CHECK(kv_bytes_per_token_layer(m, 0, fmt(Dtype::kInt4)) == 4);  // K 2 B + V 2 B
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kInt4)) == 16);
  CHECK(kv_bytes_for_sequence(m, fmt(Dtype::kInt4), 10) == 160);
}

TEST_CASE("tensor parallelism splits KV heads and replicates them past kv_heads",
          "[model][kv][tp]") {
  const ModelSpec m = llama3_70b();
  CHECK(kv_heads_per_rank(8, 1) == 8);
  CHECK(kv_heads_per_rank(8, 4) == 2);
  CHECK(kv_heads_per_rank(8, 8) == 1);
  CHECK(kv_heads_per_rank(8, 16) == 1);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16), 4) == 81'920);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16), 8) == 40'960);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16), 16) == 40'960);  // replicated, not halved
  CHECK(tensor_parallel_problem(m, 4).empty());
  CHECK(tensor_parallel_problem(m, 16).empty());
  CHECK(tensor_parallel_problem(m, 3).find("64 query heads") != std::string::npos);
  CHECK(tensor_parallel_problem(m, 0).find("positive") != std::string::npos);
  ModelSpec odd = m;
  odd.attention.num_q_heads = 96;
  odd.attention.num_kv_heads = 6;  // tp 4: 4 does not divide 6, 6 does not divide 4
  CHECK(tensor_parallel_problem(odd, 4).find("KV heads") != std::string::npos);
  CHECK(tensor_parallel_problem(odd, 12).empty());  // 12 = 2 × 6: each head on two ranks
}

TEST_CASE("MLA caches one latent per token per layer, whole on every rank", "[model][kv][mla]") {
  const ModelSpec m = deepseek_v2_lite_attention();
  CHECK(kv_bytes_per_token_layer(m, 0, fmt(Dtype::kBf16)) == (512 + 64) * 2);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16)) == 31'104);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16), 4) == 31'104);
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kFp8)) == 15'552);
  // Its MHA form: 16 heads × (192 K + 128 V) × 27 layers × 2 B.
  CHECK(kv_bytes_per_token(with_kv_heads(m, 16), fmt(Dtype::kBf16)) == 16ULL * 320 * 27 * 2);
}

TEST_CASE("window layers hold at most `window` tokens of a sequence", "[model][kv][window]") {
  const ModelSpec m = tiny_hybrid();
  // 2 KV heads × 4 dims × 2 (K, V) × 2 B = 32 B per token per layer.
  CHECK(kv_bytes_per_token(m, fmt(Dtype::kBf16)) == 128);
  CHECK(cached_tokens(LayerKind::kSlidingWindow, 8, 5) == 5);
  CHECK(cached_tokens(LayerKind::kSlidingWindow, 8, 20) == 8);
  CHECK(cached_tokens(LayerKind::kFullAttention, 8, 20) == 20);
  CHECK(cached_tokens(LayerKind::kNoKvCache, 8, 20) == 0);
  CHECK(kv_bytes_for_sequence(m, fmt(Dtype::kBf16), 5) == 4 * 32 * 5);
  CHECK(kv_bytes_for_sequence(m, fmt(Dtype::kBf16), 20) == 2 * 32 * 20 + 2 * 32 * 8);
}

TEST_CASE("kv_groups split layers by kind and geometry, per GPU", "[model][kv][groups]") {
  const ModelSpec m = tiny_hybrid();
  const auto groups = kv_groups(m, fmt(Dtype::kBf16));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].kind == LayerKind::kSlidingWindow);
  CHECK(groups[0].num_layers == 2);
  CHECK(groups[0].window_tokens == 8);
  CHECK(groups[0].bytes_per_token_per_layer == 32);
  CHECK(groups[0].bytes_per_token == 64);
  CHECK(groups[0].layers == std::vector<std::int64_t>{0, 2});
  CHECK(groups[1].kind == LayerKind::kFullAttention);
  CHECK(groups[1].window_tokens == 0);
  CHECK(groups[1].layers == std::vector<std::int64_t>{1, 3});
  // tp 2: one head per rank.
  const auto per_gpu = kv_groups(m, fmt(Dtype::kBf16), 2);
  CHECK(per_gpu[0].bytes_per_token == 32);
  // A plain model has one group holding every layer.
  const auto one = kv_groups(llama3_70b(), fmt(Dtype::kBf16));
  REQUIRE(one.size() == 1);
  CHECK(one[0].num_layers == 80);
  CHECK(one[0].bytes_per_token == 327'680);
}

TEST_CASE("hybrid global layers with their own geometry and K = V (Gemma 4)",
          "[model][kv][groups]") {
  ModelSpec m;
  m.num_layers = 6;
  m.hidden_size = 2816;
  m.attention.num_q_heads = 16;
  m.attention.num_kv_heads = 8;
  m.attention.head_dim = 256;
  m.attention.full_layer_num_kv_heads = 2;
  m.attention.full_layer_head_dim = 512;
  m.attention.k_eq_v = true;
  m.attention.sliding_window = 1024;
  m.layer_kinds.assign(6, LayerKind::kSlidingWindow);
  m.layer_kinds[5] = LayerKind::kFullAttention;
  CHECK(kv_bytes_per_token_layer(m, 0, fmt(Dtype::kBf16)) == 8192);  // 2 × 8 × 256 × 2
  CHECK(kv_bytes_per_token_layer(m, 5, fmt(Dtype::kBf16)) == 2048);  // 1 × 2 × 512 × 2
  const auto groups = kv_groups(m, fmt(Dtype::kBf16));
  REQUIRE(groups.size() == 2);
  CHECK(groups[1].bytes_per_token == 2048);
  CHECK(tensor_parallel_problem(m, 4).empty());
  m.attention.full_layer_num_kv_heads = 3;
  m.attention.num_q_heads = 24;
  CHECK(tensor_parallel_problem(m, 4).find("full-attention KV heads") != std::string::npos);
  m.attention.full_layer_num_kv_heads = 2;
  m.attention.num_q_heads = 16;
  CHECK(kv_bytes_per_token_layer(m, 5, fmt(Dtype::kBf16), 4) == 1024);  // replicated head
}

TEST_CASE("blocks a paged sequence holds, window blocks freed behind the window",
          "[model][kv][blocks]") {
  KvGroup full;
  full.kind = LayerKind::kFullAttention;
  full.bytes_per_token = 10;
  KvGroup window = full;
  window.kind = LayerKind::kSlidingWindow;
  window.window_tokens = 8;
  CHECK(blocks_for_sequence(full, 0, 4) == 0);
  CHECK(blocks_for_sequence(full, 1, 4) == 1);
  CHECK(blocks_for_sequence(full, 8, 4) == 2);
  CHECK(blocks_for_sequence(full, 9, 4) == 3);
  CHECK(blocks_for_sequence(window, 8, 4) == 2);   // positions 0..7
  CHECK(blocks_for_sequence(window, 9, 4) == 3);   // positions 1..8 span blocks 0, 1, 2
  CHECK(blocks_for_sequence(window, 12, 4) == 2);  // positions 4..11: blocks 1, 2
  CHECK(blocks_for_sequence(window, 100, 4) == 2);
  CHECK(blocks_for_sequence(window, 101, 4) == 3);
  CHECK(paged_bytes_for_sequence({full, window}, 9, 4) == (3 + 3) * 4 * 10);
}

TEST_CASE("KV budget: usable memory minus weights, activations and runtime", "[model][budget]") {
  const ModelSpec m = llama3_70b();
  const HardwareSpec h100 = gpu(85'520'809'984);  // 81,559 MiB
  const KvBudget b = kv_budget_per_gpu(m, h100, 4);
  CHECK(b.usable_bytes == 76'968'728'985);  // floor(85,520,809,984 × 0.9)
  // Everything is split 4 ways except the 161 RMSNorm vectors (1,318,912 bf16 parameters).
  CHECK(b.weights_bytes == (141'107'412'992ULL - 2'637'824) / 4 + 2'637'824);
  // 8,192 tokens × 2 B × (4 × 8,192 + 3 × 28,672 / 4) + 256 × 128,256 × 38 B (the sort
  // sampler: 2 + 4 + 12 + 20 B per logit).
  CHECK(sort_sampler_bytes_per_logit(m) == 38);
  CHECK(b.activation_reserve_bytes == 889'192'448ULL + 1'247'674'368ULL);
  CHECK(b.runtime_overhead_bytes == 2 * kGiB);
  REQUIRE(b.fits);
  CHECK(b.kv_budget_bytes == 37'405'546'905ULL);
  CHECK(b.shortfall_bytes == 0);

  const KvCapacity c = kv_capacity(m, fmt(Dtype::kBf16), 4, b.kv_budget_bytes, 16, 8192);
  CHECK(c.bytes_per_token == 81'920);
  CHECK(c.max_cached_tokens == 456'610);
  CHECK(c.block_bytes == 1'310'720);
  CHECK(c.num_blocks == 28'538);
  CHECK(c.bytes_per_sequence == 512ULL * 1'310'720);
  CHECK(c.max_concurrent_sequences == 55);  // 28,538 blocks / 512 blocks per sequence
}

TEST_CASE("V0's sampler peak is over the rows its profile run samples (--max-num-seqs)",
          "[model][budget]") {
  const ModelSpec m = llama3_70b();
  const HardwareSpec h100 = gpu(85'520'809'984);
  MemoryBudgetOptions o;
  o.max_num_seqs = 1024;
  const KvBudget b = kv_budget_per_gpu(m, h100, 4, o);
  // 8,192 tokens of forward pass, then 1,024 rows × 128,256 logits × 38 B.
  CHECK(b.activation_reserve_bytes == 889'192'448ULL + 1024ULL * 128'256 * 38);
  CHECK(kv_budget_per_gpu(m, h100, 4).activation_reserve_bytes ==
        889'192'448ULL + 256ULL * 128'256 * 38);  // 0: the V0 scheduler's 256
}

TEST_CASE("a model that does not fit gets a zero budget and a shortfall, never a negative one",
          "[model][budget]") {
  ModelSpec m = llama3_70b();
  MemoryBudgetOptions o;
  o.activation_reserve_bytes = 1'000;
  o.runtime_overhead_bytes = 0;
  const Bytes weights = weights_bytes(m);
  const KvBudget b = kv_budget_per_gpu(m, gpu(100 * kGB), 1, o);  // 90 GB usable < 141 GB
  CHECK_FALSE(b.fits);
  CHECK(b.kv_budget_bytes == 0);
  CHECK(b.shortfall_bytes == weights + 1'000 - 90 * kGB);
  const KvCapacity c = kv_capacity(m, fmt(Dtype::kBf16), 1, b.kv_budget_bytes, 16, 8192);
  CHECK(c.max_cached_tokens == 0);
  CHECK(c.num_blocks == 0);
  CHECK(c.max_concurrent_sequences == 0);
  // Exactly filling the usable memory still leaves no KV: it does not fit either.
  o.activation_reserve_bytes = 90 * kGB - weights_bytes_per_gpu(m, 2);
  const KvBudget edge = kv_budget_per_gpu(m, gpu(100 * kGB), 2, o);
  CHECK_FALSE(edge.fits);
  CHECK(edge.shortfall_bytes == 0);
  // The smallest tensor-parallel degree that fits 141 GB of weights on 90 GB-usable GPUs.
  o.activation_reserve_bytes = 1'000;
  CHECK(min_tensor_parallel_to_fit(m, gpu(100 * kGB), o) == std::optional<std::int64_t>(2));
  CHECK(min_tensor_parallel_to_fit(m, gpu(1 * kGB), o, 8) == std::nullopt);
}

TEST_CASE("capacity of a window model counts only the window's blocks", "[model][budget][window]") {
  const ModelSpec m = tiny_hybrid();
  // Per GPU (tp 1): 128 B per token; at 20 tokens with blocks of 4: full layers 5 blocks,
  // window layers the blocks over positions 12..19 = 2 blocks: (5 × 64 + 2 × 64) × 4 = 1,792 B.
  const KvCapacity c = kv_capacity(m, fmt(Dtype::kBf16), 1, 10'000, 4, 20);
  CHECK(c.bytes_per_sequence == 1'792);
  CHECK(c.max_concurrent_sequences == 5);
  CHECK(c.max_cached_tokens == 78);  // 10,000 / 128
  CHECK(c.num_blocks == 19);         // 10,000 / 512
}

TEST_CASE("SSM state is a fixed per-sequence cost split over tensor-parallel ranks",
          "[model][kv][ssm]") {
  ModelSpec m = tiny_hybrid();
  m.ssm.num_heads = 8;
  m.ssm.head_dim = 4;
  m.ssm.state_size = 16;
  m.ssm.num_groups = 2;
  m.ssm.conv_kernel = 4;
  m.block_kinds = {BlockKind::kMamba, BlockKind::kAttentionOnly, BlockKind::kMamba,
                   BlockKind::kAttentionOnly};
  m.layer_kinds = {LayerKind::kNoKvCache, LayerKind::kFullAttention, LayerKind::kNoKvCache,
                   LayerKind::kFullAttention};
  m.attention.sliding_window = 0;
  // Per Mamba layer: conv 3 × (32 + 2 × 2 × 16) = 288, SSM 8 × 4 × 16 = 512 elements, bf16.
  CHECK(ssm_state_bytes_per_sequence(m, 1) == 2 * (288 + 512) * 2);
  // tp 2: 4 heads and 1 group per rank: conv 3 × (16 + 32) = 144, SSM 256.
  CHECK(ssm_state_bytes_per_sequence(m, 2) == 2 * (144 + 256) * 2);
  const KvCapacity c = kv_capacity(m, fmt(Dtype::kBf16), 1, 100'000, 4, 8);
  CHECK(c.bytes_per_sequence == 2 * 8 * 32 + 3'200);
}

TEST_CASE("kv_format_from_name: auto follows the model, names and scales as given", "[model][kv]") {
  ModelSpec m = llama3_70b();
  CHECK(kv_format_from_name(m, "auto")->dtype == Dtype::kBf16);
  m.weight_dtype = Dtype::kFp16;
  CHECK(kv_format_from_name(m, "auto")->dtype == Dtype::kFp16);
  m.weight_dtype = Dtype::kFp32;
  CHECK(kv_format_from_name(m, "auto")->dtype == Dtype::kFp16);
  m.weight_dtype = Dtype::kInt4;
  CHECK(kv_format_from_name(m, "AUTO")->dtype == Dtype::kBf16);
  CHECK(kv_format_from_name(m, "fp8")->dtype == Dtype::kFp8);
  CHECK(kv_format_from_name(m, "int4", 32)->scale_group_size == 32);
  CHECK_FALSE(kv_format_from_name(m, "fp6").has_value());
  CHECK(kv_format_name(*kv_format_from_name(m, "int4", 64)) == "int4+fp16/64");
}

TEST_CASE("analyze_kv ties the pieces together, without a GPU no budget", "[model][kv]") {
  const ModelSpec m = llama3_70b();
  KvQuery q;
  q.tensor_parallel_size = 4;
  q.batch = 16;
  q.context = 8192;
  q.format = fmt(Dtype::kBf16);
  const KvAnalysis a = analyze_kv(m, nullptr, q);
  CHECK(a.bytes_per_token == 327'680);
  CHECK(a.total_bytes == 42'949'672'960ULL);
  CHECK(a.bytes_per_token_per_gpu == 81'920);
  CHECK(a.total_bytes_per_gpu == 42'949'672'960ULL / 4);
  CHECK(a.num_parameters == 70'553'706'496ULL);
  CHECK_FALSE(a.budget.has_value());
  CHECK_FALSE(a.capacity.has_value());
  q.context = 0;
  CHECK(analyze_kv(m, nullptr, q).query.context == 8192);  // the model's max context
  const HardwareSpec h100 = gpu(85'520'809'984);
  const KvAnalysis with_gpu = analyze_kv(m, &h100, q);
  REQUIRE(with_gpu.capacity.has_value());
  CHECK(with_gpu.capacity->max_concurrent_sequences == 55);
}
