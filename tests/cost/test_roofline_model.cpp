#include <cmath>
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/rng.h"
#include "cost/cost_fixtures.h"
#include "cost/ops.h"
#include "cost/roofline_model.h"
#include "model/expert_parallel.h"
#include "model/kv_math.h"

using namespace kvsim;
using cost::PrefillChunk;
using cost::StepBatch;

namespace {

std::map<std::string, cost::OpCost> by_name(const cost::StepCost& c) {
  std::map<std::string, cost::OpCost> out;
  for (const auto& op : c.ops) out[op.name] = op;
  return out;
}

cost::StepCost prefill(const cost::CostModel& m, std::int64_t tokens, std::int64_t cached = 0) {
  const PrefillChunk chunk{tokens, cached};
  StepBatch b;
  b.prefills = {&chunk, 1};
  b.num_sampling = 1;
  return m.breakdown(b);
}

cost::StepCost decode(const cost::CostModel& m, std::int64_t batch, std::int64_t context) {
  const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), context);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = batch;
  return m.breakdown(b);
}

// The step the overhead tests price: one chunk of 100 new tokens after 20 cached, an empty
// chunk (no sequence), and decodes of contexts 10, 200 and 3000; 4 rows sampled.
const std::vector<PrefillChunk> kMixedChunks = {{100, 20}, {0, 5}};
const std::vector<std::int64_t> kMixedContexts = {10, 200, 3000};

StepBatch mixed_step() {
  StepBatch b;
  b.prefills = kMixedChunks;
  b.decode_context_tokens = kMixedContexts;
  b.num_sampling = 4;
  return b;
}

cost::RooflineCostModel llama70_tp4() {
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  return cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), o);
}

}  // namespace

// Llama-3-70B at TP 4: 16 query heads and 2 KV heads of 128 per GPU, hidden 8192, MLP 7168 per
// GPU; bf16 everywhere. Every value below is per GPU, summed over the 80 layers.
TEST_CASE("Llama-3-70B TP4 prefill of 2,048 tokens: FLOPs and bytes per op", "[cost]") {
  const auto model = llama70_tp4();
  const auto ops = by_name(prefill(model, 2048));
  // QKV: m 2048, k 8192, n 16·128 + 2·2·128 = 2560.
  CHECK(ops.at("qkv_proj").flops == 80.0 * 2 * 2048 * 2560 * 8192);  // 6,871,947,673,600
  CHECK(ops.at("qkv_proj").bytes == 80.0 * 2 * (2048.0 * 8192 + 8192.0 * 2560 + 2048.0 * 2560));
  // Causal attention: 2048·2049/2 = 2,098,176 pairs; 2 FLOPs × (QK 128 + PV 128) × 16 heads.
  CHECK(ops.at("attn_prefill").flops == 80.0 * 2 * 2098176 * 16 * 256);  // 1,375,060,623,360
  // Q and O rows (2048 × 16 × 256 × 2 B) + K/V read (2048 × 2 heads × 256 × 2 B) + K/V written.
  CHECK(ops.at("attn_prefill").bytes == 80.0 * (16777216 + 2097152 + 2097152));
  // O: m 2048, k 2048, n 8192.
  CHECK(ops.at("o_proj").flops == 80.0 * 2 * 2048 * 8192 * 2048);
  // Gated MLP: gate+up n 2·7168, k 8192; down n 8192, k 7168.
  CHECK(ops.at("mlp").flops == 80.0 * 2 * 2048 * 8192 * (14336 + 7168));  // 57,724,360,458,240
  CHECK(ops.at("mlp").bytes == 80.0 * 2 *
                                   ((2048.0 * 8192 + 8192.0 * 14336 + 2048.0 * 14336) +
                                    (2048.0 * 7168 + 7168.0 * 8192 + 2048.0 * 8192)));
  // Two ring all-reduces per layer of 2048 × 8192 × 2 B: 2·3/4 of that over the link.
  CHECK(ops.at("allreduce").bytes == 160.0 * 1.5 * 2048 * 8192 * 2);
  CHECK(ops.at("allreduce").flops == 0);
  // LM head for the one sampled row: vocab 128256 / 4 = 32064 columns.
  CHECK(ops.at("lm_head").flops == 2.0 * 1 * 32064 * 8192);
  CHECK(ops.count("attn_decode") == 0);
  // Prefill is compute-bound: its GEMMs and attention are.
  CHECK(ops.at("qkv_proj").compute_bound);
  CHECK(ops.at("mlp").compute_bound);
  CHECK(ops.at("attn_prefill").compute_bound);
  CHECK_FALSE(ops.at("allreduce").compute_bound);
}

TEST_CASE("Llama-3-70B TP4 decode of 64 sequences at context 4,096: FLOPs and bytes", "[cost]") {
  const auto model = llama70_tp4();
  const auto ops = by_name(decode(model, 64, 4096));
  // Each sequence attends its 4,096 cached tokens plus its new one: 64 × 4097 keys.
  // KV read per key per layer per GPU: 2 heads × (K 128 + V 128) × 2 B = 1,024 B.
  const double keys = 64.0 * 4097;
  CHECK(ops.at("attn_decode").bytes == 80.0 * (64.0 * 16 * 256 * 2 + keys * 1024 + 64.0 * 1024));
  CHECK(ops.at("attn_decode").flops == 80.0 * 2 * keys * 16 * 256);
  // The KV read alone is 64 × 4097 × 81,920 B (= 327,680 B per token / 4 GPUs).
  CHECK(model::kv_bytes_per_token(test::llama3_70b(), model::KvFormat{}, 4) == 80 * 1024);
  // Weights dominate the GEMM bytes: QKV reads 8192 × 2560 × 2 B per layer.
  CHECK(ops.at("qkv_proj").bytes == 80.0 * 2 * (64.0 * 8192 + 8192.0 * 2560 + 64.0 * 2560));
  CHECK(ops.at("lm_head").flops == 2.0 * 64 * 32064 * 8192);
  // Decode is memory-bound op by op.
  for (const char* name : {"qkv_proj", "attn_decode", "o_proj", "mlp", "lm_head"}) {
    INFO(name);
    CHECK_FALSE(ops.at(name).compute_bound);
  }
}

TEST_CASE("CUDA-graph padding rows go through the token-wise layers, not attention or the head",
          "[cost][v1]") {
  const auto model = llama70_tp4();
  const std::vector<std::int64_t> ctx(3, 4096);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 3;
  b.num_padding_tokens = 5;  // 3 decodes run the graph of 8
  const auto padded = by_name(model.breakdown(b));
  const auto eight = by_name(decode(model, 8, 4096));
  const auto three = by_name(decode(model, 3, 4096));
  for (const char* name : {"qkv_proj", "o_proj", "mlp", "norms", "allreduce"}) {
    INFO(name);
    CHECK(padded.at(name).flops == eight.at(name).flops);
    CHECK(padded.at(name).bytes == eight.at(name).bytes);
  }
  for (const char* name : {"attn_decode", "lm_head"}) {
    INFO(name);
    CHECK(padded.at(name).flops == three.at(name).flops);
    CHECK(padded.at(name).bytes == three.at(name).bytes);
  }
  // An empty batch is not padded into a step.
  StepBatch empty;
  empty.num_padding_tokens = 4;
  CHECK(model.step_time(empty) == 0);
}

TEST_CASE("Sliding-window layers cap the keys attended and read", "[cost]") {
  const cost::RooflineCostModel model(test::mistral_7b_window(), test::h100_sxm(), {});
  // Decode at context 8,000: 4,096 keys per sequence, not 8,001.
  const auto long_ctx = by_name(decode(model, 4, 8000));
  const auto at_window = by_name(decode(model, 4, 4095));
  // Per GPU (TP 1): 8 KV heads × 256 × 2 B = 4,096 B per key; 32 heads × 256 dims.
  const double expected_bytes = 32.0 * (4.0 * 32 * 256 * 2 + 4.0 * 4096 * 4096 + 4.0 * 4096);
  CHECK(long_ctx.at("attn_decode").bytes == expected_bytes);
  CHECK(at_window.at("attn_decode").bytes == expected_bytes);
  CHECK(long_ctx.at("attn_decode").flops == 32.0 * 2 * 4 * 4096 * 32 * 256);
  // Prefill of 1,000 tokens after 5,000 cached: every query sees 4,096 keys; 4,096 + 999 keys
  // are read.
  const auto pre = by_name(prefill(model, 1000, 5000));
  CHECK(pre.at("attn_prefill").flops == 32.0 * 2 * (1000.0 * 4096) * 32 * 256);
  CHECK(pre.at("attn_prefill").bytes ==
        32.0 * (1000.0 * 32 * 256 * 2 + 5095.0 * 4096 + 1000.0 * 4096));
}

TEST_CASE("Hybrid models cost window and full layers separately", "[cost]") {
  auto m = test::mistral_7b_window();
  for (std::size_t i = 0; i < m.layer_kinds.size(); i += 2) {
    m.layer_kinds[i] = model::LayerKind::kFullAttention;  // 16 full, 16 window layers
  }
  const cost::RooflineCostModel model(m, test::h100_sxm(), {});
  const auto ops = by_name(decode(model, 2, 10000));
  const double q_o = 2.0 * 32 * 256 * 2;
  const double full = q_o + 2.0 * 10001 * 4096 + 2.0 * 4096;
  const double window = q_o + 2.0 * 4096 * 4096 + 2.0 * 4096;
  CHECK(ops.at("attn_decode").bytes == 16.0 * full + 16.0 * window);
}

TEST_CASE("Decode reads exactly the KV bytes the cache holds, per layer kind (K = V)", "[cost]") {
  // Gemma 4's layout on Mistral's shape: full layers with their own geometry and K = V (one
  // tensor), window layers with K and V. Below the window every layer reads every key, so one
  // more key of context costs what one token occupies in the cache, V included where stored.
  auto m = test::mistral_7b_window();
  for (std::size_t i = 0; i < m.layer_kinds.size(); i += 2) {
    m.layer_kinds[i] = model::LayerKind::kFullAttention;
  }
  m.attention.full_layer_num_kv_heads = 2;
  m.attention.full_layer_head_dim = 256;
  m.attention.k_eq_v = true;
  const cost::RooflineCostModel model(m, test::h100_sxm(), {});
  const double bytes_per_token = static_cast<double>(model::kv_bytes_per_token(m, {}));
  CHECK(bytes_per_token == 16.0 * (2 * 256 * 2) + 16.0 * (2 * 8 * 128 * 2));
  const double at_1000 = by_name(decode(model, 1, 1000)).at("attn_decode").bytes;
  const double at_2000 = by_name(decode(model, 1, 2000)).at("attn_decode").bytes;
  CHECK(at_2000 - at_1000 == 1000.0 * bytes_per_token);
}

// DeepSeek-V2-Lite, TP 1: the cache holds one latent of 512 + 64 elements per token per layer,
// read once and shared by all 16 heads; absorbed decode attention works in the latent space.
TEST_CASE("MLA decode reads the latent once for all heads, MoE touches top-k experts", "[cost]") {
  const cost::RooflineCostModel model(test::deepseek_v2_lite(), test::h100_sxm(), {});
  const auto ops = by_name(decode(model, 8, 1000));
  const double keys = 8.0 * 1001;
  // Q (latent + rope: 576) and O (latent: 512) rows of 16 heads, 576-element latents read and
  // one written per sequence, 2 B each.
  CHECK(ops.at("attn_decode").bytes ==
        27.0 * (8.0 * 16 * (576 + 512) * 2 + keys * 576 * 2 + 8.0 * 576 * 2) +
            // absorbed per-head projections: q_nope (128) → latent (512), latent → v (128)
            27.0 * 2 *
                (16.0 * (8 * 128 + 128 * 512 + 8 * 512) + 16.0 * (8 * 512 + 512 * 128 + 8 * 128)));
  CHECK(ops.at("attn_decode").flops ==
        27.0 * 2 * keys * 16 * (576 + 512) + 27.0 * 2 * 16 * (8.0 * 128 * 512 + 8.0 * 512 * 128));
  // One decode token: routed experts touched = 64 · (1 − (1 − 6/64)^1) = 6 per MoE layer (26).
  const auto one = by_name(decode(model, 1, 100));
  const double expert_weights = 6.0 * 3 * 2048 * 1408 * 2;
  const double token_rows = 6.0 * ((2048 + 2 * 1408) + (1408 + 2048)) * 2;
  const double router = 2.0 * (1 * 2048 + 2048 * 64 + 1 * 64);
  const double shared =
      2.0 * (1 * 2048 + 2048 * 5632 + 1 * 5632) + 2.0 * (1 * 2816 + 2816 * 2048 + 1 * 2048);
  CHECK(one.at("moe").bytes == Approx(26.0 * (expert_weights + token_rows + router + shared)));
  // The first layer is dense: MLP 10944 gated.
  CHECK(one.at("mlp").flops == 2.0 * 2048 * (2 * 10944 + 10944));
  // Many tokens touch (almost) every expert: 4,096 tokens → 64 experts.
  const auto many = by_name(prefill(model, 4096));
  const double all_weights = 64.0 * 3 * 2048 * 1408 * 2;
  CHECK(many.at("moe").bytes > 26.0 * all_weights * 0.999);
}

TEST_CASE("Sparse MLA attends its top-k keys and its indexer scores every key", "[cost]") {
  cost::CostOptions o;
  o.kv_dtype = model::Dtype::kFp8;  // vLLM's fp8_ds_mla: 512 + 4 × 4 + 64 × 2 = 656 B a row
  const cost::RooflineCostModel model(test::deepseek_v2_lite_sparse(), test::h100_sxm(), o);
  const auto ops = by_name(decode(model, 8, 1000));
  // Each of the 8 queries reads min(1001, 256) latents of 656 B and writes its own; Q (576) and
  // O (512) rows of 16 heads in bf16. No absorbed projection is an attention op here.
  const double topk = 8.0 * 256;
  CHECK(ops.at("attn_decode").bytes ==
        27.0 * (8.0 * 16 * (576 + 512) * 2 + topk * 656 + 8.0 * 656));
  CHECK(ops.at("attn_decode").flops == 27.0 * 2 * topk * 16 * (576 + 512));
  // The indexer: 8 heads × 128 over all 1,001 keys of each sequence (132 B each, fp8 + scale),
  // fp8 queries, one key written per sequence, a 4 B logit written and read per pair.
  const double keys = 8.0 * 1001;
  CHECK(ops.at("attn_index").flops == 27.0 * 2 * keys * 8 * 128);
  CHECK(ops.at("attn_index").bytes ==
        27.0 * (8.0 * 8 * 128 * 1 + keys * 132 + 8.0 * 132 + 8.0 * keys));
  // Below the top-k the attention reads every key, as dense MLA would.
  const auto short_ctx = by_name(decode(model, 8, 100));
  CHECK(short_ctx.at("attn_decode").flops == 27.0 * 2 * (8.0 * 101) * 16 * (576 + 512));
  // A prefill of 1,024 tokens: causal pairs capped at 256 keys a query for the attention, all
  // of them for the indexer; no key is decompressed (kv_b_proj absorbed for every token).
  const auto pre = by_name(prefill(model, 1024));
  const double capped = 256.0 * 257 / 2 + 256.0 * (1024 - 256);
  const double full = 1024.0 * 1025 / 2;
  CHECK(pre.at("attn_prefill").flops == 27.0 * 2 * capped * 16 * (576 + 512));
  CHECK(pre.at("attn_index").flops == 27.0 * 2 * full * 8 * 128);
  // The dense model decompresses every key for its prefill: more attention work at 1,024.
  const cost::RooflineCostModel dense(test::deepseek_v2_lite(), test::h100_sxm(), o);
  CHECK(by_name(prefill(dense, 1024)).at("attn_prefill").flops >
        pre.at("attn_prefill").flops + pre.at("attn_index").flops);
  // Contexts matter per sequence until every one is past the top-k (decode totals from 255).
  CHECK(model.decode_totals_min_context() == 255);
  // The indexer's keys are fp8 whatever the cache's type: the same price over a bf16 cache, at
  // the fp8 cache's attention entry.
  model::HardwareSpec hw = test::h100_sxm();
  model::OpClassProfile slow = cost::default_op_class_profile(cost::OpClass::kAttnDecode);
  slow.compute.value = slow.memory.value = 0.01;
  hw.cost.op_classes["attn_decode.fp8"] = slow;
  cost::CostOptions bf16 = o;
  bf16.kv_dtype = model::Dtype::kBf16;
  const auto on_fp8 =
      by_name(decode(cost::RooflineCostModel(test::deepseek_v2_lite_sparse(), hw, o), 8, 1000));
  const auto on_bf16 =
      by_name(decode(cost::RooflineCostModel(test::deepseek_v2_lite_sparse(), hw, bf16), 8, 1000));
  CHECK(on_bf16.at("attn_index").time_s == on_fp8.at("attn_index").time_s);
  CHECK(on_bf16.at("attn_index").time_s > 2 * ops.at("attn_index").time_s);  // the fp8 entry
  CHECK(on_bf16.at("attn_decode").time_s < on_fp8.at("attn_decode").time_s);
}

// A profile with a fused-MoE curve prices DeepSeek-V2-Lite's routed experts as one moe kernel
// per layer (its activation and token permutation inside it) instead of two GEMMs and an
// elementwise op; the router and the shared experts stay GEMMs.
TEST_CASE("A fitted fused-MoE class prices the routed experts as one kernel", "[cost]") {
  const model::ModelSpec m = test::deepseek_v2_lite();
  model::HardwareSpec hw = test::h100_sxm();
  const cost::RooflineCostModel plain(m, hw, {});
  model::OpClassProfile moe;
  moe.compute.value = 0.5;
  moe.memory.value = 0.4;
  moe.launch_latency_s = 20e-6;
  hw.cost.op_classes["moe"] = moe;
  const cost::RooflineCostModel fused(m, hw, {});
  for (const std::int64_t tokens : {1, 64}) {
    INFO(tokens);
    const auto a = by_name(decode(plain, tokens, 100));
    const auto b = by_name(decode(fused, tokens, 100));
    cost::MoeGeometry g;
    g.experts = g.local_experts = 64;
    g.top_k = 6;
    g.hidden = 2048;
    g.width = 1408;
    const cost::MoeWork w = cost::moe_work(g, static_cast<double>(tokens));
    const auto time = [&](const model::OpClassProfile& p, cost::OpClass op, const cost::Work& k) {
      const cost::Roof r = cost::roof_for(hw, op, model::Dtype::kBf16, 1);
      return cost::roofline_time(p, r.peak_flops, r.bandwidth, 0, k).time_s;
    };
    const model::OpClassProfile gemm = cost::op_class_profile(hw.cost, cost::OpClass::kGemm);
    const cost::Work both{w.up.flops + w.down.flops, w.up.bytes + w.down.bytes};
    CHECK(b.at("moe").time_s - a.at("moe").time_s ==
          Approx(26.0 *
                 (time(moe, cost::OpClass::kMoe, both) - time(gemm, cost::OpClass::kGemm, w.up) -
                  time(gemm, cost::OpClass::kGemm, w.down))));
    CHECK(b.at("moe").bytes == Approx(a.at("moe").bytes));  // the same work
    CHECK(b.at("moe").flops == Approx(a.at("moe").flops));
    // The experts' activation and permutation bytes left the elementwise ops.
    CHECK(a.at("norms").bytes - b.at("norms").bytes ==
          Approx(26.0 * tokens * 6 * (3.0 * 1408 + 4.0 * 2048) * 2));
  }
  // A dense model never reads the moe entry.
  const cost::RooflineCostModel dense(test::llama3_70b(), hw, {});
  CHECK(dense.step_time(mixed_step()) ==
        cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), {}).step_time(mixed_step()));
}

namespace {

// DeepSeek-V2-Lite with gpt-oss-style MXFP4 routed experts (FP4, one scale per 32).
model::ModelSpec mxfp4_experts_model() {
  model::ModelSpec m = test::deepseek_v2_lite();
  m.moe.has_expert_dtype = true;
  m.moe.expert_dtype = model::Dtype::kFp4;
  m.moe.expert_scale_group_size = 32;
  return m;
}

// Its routed experts on one GPU: 64, top-6, 2048 -> 1408, 4.25-bit weights.
cost::MoeGeometry mxfp4_experts_geometry() {
  cost::MoeGeometry g;
  g.experts = g.local_experts = 64;
  g.top_k = 6;
  g.hidden = 2048;
  g.width = 1408;
  g.w = 0.5 + 1.0 / 32;
  return g;
}

// A profile entry with one efficiency for both roofs.
model::OpClassProfile entry(double eff, double launch_s) {
  model::OpClassProfile p;
  p.compute.value = eff;
  p.memory.value = eff;
  p.launch_latency_s = launch_s;
  return p;
}

}  // namespace

// MXFP4 experts (gpt-oss) hold FP4 elements: a profile's moe.fp4 entry prices them, fitted to
// the 4-bit fused-MoE kernels, not the 16-bit moe entry (nor the 8-bit one while a 4-bit exists).
TEST_CASE("MXFP4 routed experts are priced by the fused-MoE fp4 entry", "[cost]") {
  const model::ModelSpec m = mxfp4_experts_model();
  model::HardwareSpec hw = test::h100_sxm();
  hw.cost.op_classes["moe"] = entry(0.8, 10e-6);
  hw.cost.op_classes["moe.fp8"] = entry(0.6, 20e-6);
  hw.cost.op_classes["moe.fp4"] = entry(0.3, 40e-6);
  const auto moe_time = [&](const model::HardwareSpec& h) {
    return by_name(decode(cost::RooflineCostModel(m, h, {}), 64, 100)).at("moe");
  };
  model::HardwareSpec no_fp4 = hw;
  no_fp4.cost.op_classes.erase("moe.fp4");
  const auto fp4 = moe_time(hw);
  const auto fp8 = moe_time(no_fp4);  // without a 4-bit entry, the 8-bit one
  CHECK(fp4.bytes == Approx(fp8.bytes));
  CHECK(fp4.flops == Approx(fp8.flops));
  // The routed experts of one layer at 64 tokens, 4.25-bit weights; H100 has no fp4 peak, so
  // the roof is its fp8 one (model::HardwareSpec::peak_flops_for). The router and the shared
  // experts are GEMMs either way: the difference is 26 layers' routed-expert kernel.
  const cost::MoeGeometry g = mxfp4_experts_geometry();
  const cost::MoeWork w = cost::moe_work(g, 64.0);
  const cost::Work both{w.up.flops + w.down.flops, w.up.bytes + w.down.bytes};
  const cost::Roof r = cost::roof_for(hw, cost::OpClass::kMoe, model::Dtype::kFp4, 1);
  CHECK(r.peak_flops == *hw.peak_flops_for(model::Dtype::kFp8));
  const auto kernel = [&](const char* key) {
    return cost::roofline_time(hw.cost.op_classes.at(key), r.peak_flops, r.bandwidth, 0, both)
        .time_s;
  };
  CHECK(fp4.time_s - fp8.time_s == Approx(26.0 * (kernel("moe.fp4") - kernel("moe.fp8"))));
  CHECK(kernel("moe.fp4") > 1.9 * kernel("moe.fp8"));  // the entries differ enough to tell
}

// vLLM multiplies MXFP4 experts in bf16 by default (FlashInfer's MXFP4 x BF16 kernel, Triton,
// Marlin) and in fp8 with MXFP8 activations: the fitted "moe.fp4.a16" / "moe.fp4.a8" entries price
// them at the bf16 / fp8 peak, not NVFP4's W4A4 "moe.fp4" at the fp4 one.
TEST_CASE("MXFP4 experts are priced by their kernel's activation entry and peak", "[cost]") {
  const model::ModelSpec m = mxfp4_experts_model();
  model::HardwareSpec hw = test::h100_sxm();
  hw.peak_flops[model::Dtype::kFp4] = 4 * *hw.peak_flops_for(model::Dtype::kBf16);  // a roof apart
  hw.cost.op_classes["moe"] = entry(0.8, 10e-6);
  hw.cost.op_classes["moe.fp4"] = entry(0.3, 40e-6);
  hw.cost.op_classes["moe.fp4.a16"] = entry(0.5, 30e-6);
  hw.cost.op_classes["moe.fp4.a8"] = entry(0.4, 25e-6);
  model::HardwareSpec only_fp4 = hw;  // a profile fitted before the activation entries
  only_fp4.cost.op_classes.erase("moe.fp4.a16");
  only_fp4.cost.op_classes.erase("moe.fp4.a8");
  const auto moe_time = [&](const model::ModelSpec& spec, const model::HardwareSpec& h) {
    return by_name(decode(cost::RooflineCostModel(spec, h, {}), 512, 100)).at("moe");
  };
  cost::MoeGeometry g = mxfp4_experts_geometry();
  const auto kernel = [&](const char* key, model::Dtype roof, double a_bytes) {
    g.a = a_bytes;
    const cost::MoeWork w = cost::moe_work(g, 512.0);
    const cost::Roof r = cost::roof_for(hw, cost::OpClass::kMoe, roof, 1);
    return cost::roofline_time(hw.cost.op_classes.at(key), r.peak_flops, r.bandwidth, 0,
                               {w.up.flops + w.down.flops, w.up.bytes + w.down.bytes})
        .time_s;
  };
  using model::Dtype;
  // bf16 activations (the default): moe.fp4.a16 at the bf16 peak; without it, moe.fp4.
  CHECK(
      moe_time(m, hw).time_s - moe_time(m, only_fp4).time_s ==
      Approx(26.0 * (kernel("moe.fp4.a16", Dtype::kBf16, 2) - kernel("moe.fp4", Dtype::kFp4, 2))));
  // MXFP8 activations: moe.fp4.a8 at the fp8 peak, its rows in and out 8-bit.
  model::ModelSpec mxfp8 = m;
  mxfp8.moe.mxfp4_activation_bits = 8;
  const auto a8 = moe_time(mxfp8, hw);
  CHECK(a8.time_s - moe_time(mxfp8, only_fp4).time_s ==
        Approx(26.0 * (kernel("moe.fp4.a8", Dtype::kFp8, 1) - kernel("moe.fp4", Dtype::kFp4, 1))));
  CHECK(moe_time(m, hw).bytes - a8.bytes ==
        Approx(26.0 * 512 * 6 * (2048 + 2 * 1408 + 1408 + 2048) * (2 - 1)));
  // Each pair of entries differs enough to tell.
  const double fp4_a16 = kernel("moe.fp4", Dtype::kFp4, 2),
               fp4_a8 = kernel("moe.fp4", Dtype::kFp4, 1);
  CHECK(std::abs(kernel("moe.fp4.a16", Dtype::kBf16, 2) - fp4_a16) > 0.2 * fp4_a16);
  CHECK(std::abs(kernel("moe.fp4.a8", Dtype::kFp8, 1) - fp4_a8) > 0.2 * fp4_a8);
}

// vLLM runs fp8 experts with 128 x 128 block scales (DeepSeek-style checkpoints) through its
// block-fp8 fused MoE (Triton, DeepGEMM) and per-tensor fp8 ones through another kernel (H200's
// tables: FlashInfer's CUTLASS, 3-7x slower at decode sizes): "moe.fp8.block" prices the first,
// "moe.fp8" the second and, in a profile fitted before the block entry, both.
TEST_CASE("Block-scaled fp8 experts are priced by the fused-MoE fp8 block entry", "[cost]") {
  model::ModelSpec per_tensor = test::deepseek_v2_lite();
  per_tensor.quantization = model::default_quantization(model::QuantMethod::kFp8);
  model::ModelSpec block = per_tensor;
  block.quantization.scales = model::ScaleLayout::kBlock;
  block.quantization.block_n = block.quantization.block_k = 128;
  model::HardwareSpec hw = test::h100_sxm();
  hw.cost.op_classes["moe"] = entry(0.8, 10e-6);
  hw.cost.op_classes["moe.fp8"] = entry(0.2, 40e-6);
  hw.cost.op_classes["moe.fp8.block"] = entry(0.6, 20e-6);
  model::HardwareSpec no_block = hw;  // a profile fitted before the block entry
  no_block.cost.op_classes.erase("moe.fp8.block");
  const auto moe = [&](const model::ModelSpec& spec, const model::HardwareSpec& h) {
    return by_name(decode(cost::RooflineCostModel(spec, h, {}), 64, 100)).at("moe");
  };
  const auto blocked = moe(block, hw);
  const auto tensor = moe(per_tensor, hw);
  // The same work (block scales add 4 B per 16,384 weights to the bytes), another entry.
  CHECK(blocked.flops == Approx(tensor.flops));
  CHECK(blocked.time_s < 0.5 * tensor.time_s);
  CHECK(moe(per_tensor, no_block).time_s == Approx(tensor.time_s));
  CHECK(moe(block, no_block).time_s == Approx(tensor.time_s).epsilon(0.01));
  // The entry's key and its table family are their own.
  cost::KernelShape shape;
  shape.op = cost::OpClass::kMoe;
  shape.dtype = model::Dtype::kFp8;
  shape.block_scales = true;
  CHECK(cost::entry_key(shape) == "moe.fp8.block");
  CHECK(cost::is_op_class_key("moe.fp8.block"));
  CHECK_FALSE(cost::is_op_class_key("gemm.fp8.block"));
  CHECK_FALSE(cost::is_op_class_key("moe.bf16.block"));
  shape.op = cost::OpClass::kGemm;
  CHECK(cost::entry_key(shape) == "gemm.fp8");  // GEMMs keep one fp8 entry
}

TEST_CASE("Step time: deterministic, monotone, and equal to the breakdown sum", "[cost]") {
  const auto model = llama70_tp4();
  TimeNs prev = 0;
  for (std::int64_t batch = 1; batch <= 512; batch *= 2) {
    const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), 2048);
    StepBatch b;
    b.decode_context_tokens = ctx;
    b.num_sampling = batch;
    const TimeNs t = model.step_time(b);
    CHECK(t == model.step_time(b));
    CHECK(t > prev);
    prev = t;
    const auto br = model.breakdown(b);
    double sum = 0;
    for (const auto& op : br.ops) sum += op.time_s;
    CHECK(seconds_to_ns(br.time_s) == t);
    CHECK(sum == Approx(br.time_s).epsilon(1e-12));
    CHECK(br.ops.back().name == "step_overhead");
  }
  // Longer contexts cost more; an empty batch costs nothing.
  CHECK(model.step_time(StepBatch{}) == 0);
  const std::vector<std::int64_t> short_ctx(8, 100), long_ctx(8, 100000);
  StepBatch a, b;
  a.decode_context_tokens = short_ctx;
  b.decode_context_tokens = long_ctx;
  CHECK(model.step_time(b) > model.step_time(a));
}

TEST_CASE("Roofline time uses the profile's efficiencies and launch latency", "[cost]") {
  auto hw = test::h100_sxm();
  model::OpClassProfile gemm;
  gemm.compute.value = 0.5;
  gemm.memory.value = 0.5;
  gemm.launch_latency_s = 10e-6;
  hw.cost.op_classes["gemm"] = gemm;
  hw.cost.step_overhead_s = 0.003;
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  const cost::RooflineCostModel model(test::llama3_70b(), hw, o);
  const auto ops = by_name(prefill(model, 2048));
  // qkv: 80 kernels, compute-bound: flops / (989.4e12 × 0.5) + 10 us each.
  CHECK(ops.at("qkv_proj").time_s ==
        Approx(80.0 * (2.0 * 2048 * 2560 * 8192 / (989.4e12 * 0.5) + 10e-6)).epsilon(1e-12));
  CHECK(ops.at("step_overhead").time_s == 0.003);
  CHECK(model.step_overhead_s() == 0.003);
  const auto& defaulted = model.defaulted_classes();
  CHECK(std::find(defaulted.begin(), defaulted.end(), "gemm") == defaulted.end());
  CHECK(std::find(defaulted.begin(), defaulted.end(), "attn_decode") != defaulted.end());
  o.step_overhead_s = 0.0;
  const cost::RooflineCostModel no_overhead(test::llama3_70b(), hw, o);
  CHECK(by_name(prefill(no_overhead, 2048)).at("step_overhead").time_s == 0);
}

TEST_CASE("Swap time is bytes over PCIe bandwidth", "[cost]") {
  const auto model = llama70_tp4();
  CHECK(model.swap_time(64'000'000'000ull) == kNsPerSecond);
  CHECK(model.swap_time(0) == 0);
}

TEST_CASE("The step overhead adds per step, per sequence and per prompt token, exactly",
          "[cost][overhead]") {
  model::HardwareSpec base = test::h100_sxm();
  base.cost.step_overhead_s = 0;
  model::HardwareSpec with = base;
  with.cost.step_overhead_s = 0.002;          // 2 ms per step
  with.cost.seq_overhead_s = 40e-6;           // 40 µs per sequence
  with.cost.prefill_token_overhead_s = 3e-6;  // 3 µs per prompt token
  const cost::RooflineCostModel plain(test::llama3_70b(), base, {});
  const cost::RooflineCostModel over(test::llama3_70b(), with, {});
  // One chunk of 100 new tokens (and an empty chunk, which is no sequence) plus 3 decodes:
  // 4 sequences, 100 prompt tokens: 2 ms + 4 × 40 µs + 100 × 3 µs = 2.46 ms.
  cost::StepBatch batch = mixed_step();
  CHECK(over.step_time(batch) - plain.step_time(batch) == 2'460'000);
  const cost::StepCost c = over.breakdown(batch);
  REQUIRE(c.ops.back().name == "step_overhead");
  CHECK(c.ops.back().time_s == Approx(0.00246).epsilon(1e-12));
  CHECK(over.seq_overhead_s() == 40e-6);
  CHECK(over.prefill_token_overhead_s() == 3e-6);
  // The engine's per-sequence host time adds to the profile's (vLLM V0: 50 µs).
  cost::CostOptions v0;
  v0.engine_seq_overhead_s = cost::kVllmV0SeqOverheadS;
  CHECK(cost::RooflineCostModel(test::llama3_70b(), with, v0).seq_overhead_s() == Approx(90e-6));
  // Decode only: 2 ms + 3 × 40 µs.
  batch.prefills = {};
  batch.num_sampling = 3;
  CHECK(over.step_time(batch) - plain.step_time(batch) == 2'120'000);
  // An empty step still costs nothing.
  batch.decode_context_tokens = {};
  batch.num_sampling = 0;
  CHECK(over.step_time(batch) == 0);
}

TEST_CASE("The context-token overhead counts every token of the step's sequences after it",
          "[cost][overhead]") {
  model::HardwareSpec base = test::h100_sxm();
  base.cost.step_overhead_s = 0;
  model::HardwareSpec with = base;
  with.cost.context_token_overhead_s = 0.1e-6;  // DistServe's Ray workers: 0.1 µs per token
  const cost::RooflineCostModel plain(test::llama3_70b(), base, {});
  const cost::RooflineCostModel over(test::llama3_70b(), with, {});
  CHECK(over.context_token_overhead_s() == 0.1e-6);
  // The chunk's 100 new tokens after 20 cached (120), the empty chunk (none), and the decodes
  // of contexts 10, 200 and 3000, each with its new token (3,213): 3,333 tokens, 333.3 µs.
  cost::StepBatch batch = mixed_step();
  CHECK(std::llabs(over.step_time(batch) - plain.step_time(batch) - 333'300) <= 1);
  CHECK(over.breakdown(batch).ops.back().time_s == Approx(333.3e-6).epsilon(1e-9));
  // The same decodes as totals: the same tokens.
  cost::StepBatch totals;
  totals.decode_totals = {3, 3210};
  totals.num_sampling = 3;
  batch.prefills = {};
  batch.num_sampling = 3;
  CHECK(over.step_time(totals) == over.step_time(batch));
  CHECK(std::llabs(over.step_time(totals) - plain.step_time(totals) - 321'300) <= 1);
  // A CostOptions value replaces the profile's.
  cost::CostOptions none;
  none.context_token_overhead_s = 0.0;
  CHECK(cost::RooflineCostModel(test::llama3_70b(), with, none).step_time(batch) ==
        plain.step_time(batch));
}

TEST_CASE("Async scheduling hides the host overhead behind the GPU's step", "[cost][overhead]") {
  model::HardwareSpec base = test::h100_sxm();
  base.cost.step_overhead_s = 0;
  model::HardwareSpec slow_host = base;
  slow_host.cost.step_overhead_s = 0.002;  // 2 ms per step
  slow_host.cost.seq_overhead_s = 40e-6;   // 40 µs per sequence
  cost::CostOptions async;
  async.async_scheduling = true;
  const cost::RooflineCostModel gpu_only(test::llama3_70b(), base, {});
  const cost::RooflineCostModel serial(test::llama3_70b(), slow_host, {});
  const cost::RooflineCostModel overlapped(test::llama3_70b(), slow_host, async);
  cost::StepBatch decode;  // 3 decodes of a 70B model on one GPU outlast 2.12 ms of host time
  decode.decode_context_tokens = kMixedContexts;
  decode.num_sampling = 3;
  const double gpu_s = gpu_only.breakdown(decode).time_s;
  REQUIRE(gpu_s > 0.00212);
  CHECK(serial.breakdown(decode).time_s == Approx(gpu_s + 0.00212).epsilon(1e-12));
  const cost::StepCost hidden = overlapped.breakdown(decode);
  CHECK(hidden.time_s == Approx(gpu_s).epsilon(1e-12));
  CHECK(hidden.ops.back().name == "step_overhead");
  CHECK(hidden.ops.back().time_s == 0);  // none of it exposed
  CHECK(overlapped.step_time(decode) == gpu_only.step_time(decode));
  // A host slower than the GPU: the step lasts the host's time, and the breakdown shows the
  // exposed remainder, so its ops still sum to the step.
  model::HardwareSpec slower_host = slow_host;
  slower_host.cost.step_overhead_s = 0.2;  // 200 ms
  const cost::RooflineCostModel host_bound(test::llama3_70b(), slower_host, async);
  const cost::StepCost c = host_bound.breakdown(decode);
  CHECK(c.time_s == Approx(0.20012).epsilon(1e-12));
  CHECK(c.ops.back().time_s == Approx(0.20012 - gpu_s).epsilon(1e-9));
  CHECK(std::llabs(host_bound.step_time(decode) - seconds_to_ns(0.20012)) <= 1);
}

TEST_CASE("Decode totals price a batch bit for bit as the sequences listed one by one", "[cost]") {
  // Every decode sum in the roofline adds integer-valued doubles below 2^53: exact, so the
  // count and summed context give the same step time, prefills and CUDA-graph padding alongside.
  cost::CostOptions tp4;
  tp4.tensor_parallel_size = 4;
  const cost::RooflineCostModel models[] = {
      cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), {}),
      cost::RooflineCostModel(test::llama3_70b(), test::a100_sxm(), tp4),
      cost::RooflineCostModel(test::deepseek_v2_lite(), test::h100_sxm(), {})};
  Rng rng(5);
  for (const auto& model : models) {
    REQUIRE(model.prices_decode_totals());
    for (int i = 0; i < 200; ++i) {
      std::vector<std::int64_t> ctx(static_cast<std::size_t>(rng.uniform_int(1, 300)));
      std::int64_t sum = 0;
      for (auto& c : ctx) sum += c = rng.uniform_int(0, 100'000);
      const PrefillChunk chunk{rng.uniform_int(1, 500), rng.uniform_int(0, 2000)};
      StepBatch listed;
      listed.decode_context_tokens = ctx;
      listed.num_padding_tokens = rng.uniform_int(0, 7);
      if (i % 2 == 1) listed.prefills = {&chunk, 1};
      listed.num_sampling = static_cast<std::int64_t>(ctx.size()) + (i % 2);
      StepBatch totals = listed;
      totals.decode_context_tokens = {};
      totals.decode_totals = {static_cast<std::int64_t>(ctx.size()), sum};
      CHECK(model.step_time(totals) == model.step_time(listed));
    }
  }
  // A sliding window caps each sequence's keys on its own: totals are not enough.
  CHECK_FALSE(cost::RooflineCostModel(test::mistral_7b_window(), test::h100_sxm(), {})
                  .prices_decode_totals());
  // A sparse attention's top-k (256) caps them too, but past it every sequence reads 256 keys:
  // totals price contexts from 255 on, bit for bit.
  const cost::RooflineCostModel sparse(test::deepseek_v2_lite_sparse(), test::h100_sxm(), {});
  REQUIRE(sparse.prices_decode_totals());
  CHECK(sparse.decode_totals_min_context() == 255);
  CHECK(models[0].decode_totals_min_context() == 0);
  for (int i = 0; i < 200; ++i) {
    std::vector<std::int64_t> ctx(static_cast<std::size_t>(rng.uniform_int(1, 300)));
    std::int64_t sum = 0;
    for (auto& c : ctx) sum += c = rng.uniform_int(255, 100'000);
    StepBatch listed;
    listed.decode_context_tokens = ctx;
    listed.num_sampling = static_cast<std::int64_t>(ctx.size());
    StepBatch totals = listed;
    totals.decode_context_tokens = {};
    totals.decode_totals = {static_cast<std::int64_t>(ctx.size()), sum};
    CHECK(sparse.step_time(totals) == sparse.step_time(listed));
  }
}

TEST_CASE(
    "Expert parallelism over data-parallel ranks: each GPU's experts take its share of the "
    "ranks' tokens, and the ranks exchange hidden states per MoE layer",
    "[cost][ep]") {
  // DeepSeek-V2-Lite, 64 experts (top 6) per MoE layer (26), spread whole over DP 2 × TP 1: 32
  // experts per GPU. Rank 0 decodes 8 sequences while the two ranks feed 16 tokens to the MoE.
  const model::ModelSpec sharded = model::shard_experts(test::deepseek_v2_lite(), 1, 2, true);
  cost::CostOptions o;
  o.data_parallel_size = 2;
  const cost::RooflineCostModel ep(sharded, test::h100_sxm(), o);
  const cost::RooflineCostModel whole(test::deepseek_v2_lite(), test::h100_sxm(), {});
  const std::vector<std::int64_t> ctx(8, 1000);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 8;
  const auto alone = by_name(whole.breakdown(b));
  b.moe_group_tokens = 16;
  const auto ops = by_name(ep.breakdown(b));
  // 16 tokens × 6 assignments, half of them here: as many expert FLOPs as one GPU computing all
  // 64 experts for its own 8 tokens (router and shared experts run on the rank's own tokens).
  CHECK(ops.at("moe").flops == alone.at("moe").flops);
  // Weights: the GPU's 32 experts, each touched by 16 tokens with probability 1 − (1 − 6/64)^16;
  // alone: 64 experts, 8 tokens.
  const double expert_bytes = 3.0 * 2048 * 1408 * 2;
  const double touched_ep = 32.0 * (1.0 - std::pow(1.0 - 6.0 / 64, 16));
  const double touched_alone = 64.0 * (1.0 - std::pow(1.0 - 6.0 / 64, 8));
  CHECK(ops.at("moe").bytes - alone.at("moe").bytes ==
        Approx(26.0 * (touched_ep - touched_alone) * expert_bytes));  // same activation bytes
  // The exchange: all-gather of the other rank's 8 rows and reduce-scatter back, 2 B per element,
  // per MoE layer, over the node's interconnect.
  const model::Link link = model::intranode_link(test::h100_sxm());
  CHECK(ops.at("moe_dispatch").bytes == 26.0 * 2 * 8 * 2048 * 2);
  CHECK(ops.at("moe_dispatch").time_s ==
        Approx(26.0 * (2 * link.latency_s + 2.0 * 8 * 2048 * 2 / link.bandwidth)));
  CHECK_FALSE(alone.contains("moe_dispatch"));
  // Its own tokens only (one rank): no exchange.
  b.moe_group_tokens = 0;
  CHECK_FALSE(by_name(ep.breakdown(b)).contains("moe_dispatch"));
}

TEST_CASE("Memoized step times equal the whole computation, bit for bit, model by model",
          "[cost]") {
  // step_time() keeps the token-shaped ops' times per thread under the step's counts;
  // breakdown() computes every op. Steps with equal counts but different attention work, several
  // models interleaved on one thread (same counts, different hardware), a per-sequence op (a
  // Mamba state), a data-parallel MoE, MLA (not memoized) and sparse MLA (memoized, its
  // indexer an attention op) must all agree exactly.
  cost::CostOptions tp4, dp2;
  tp4.tensor_parallel_size = 4;
  dp2.data_parallel_size = 2;
  const cost::RooflineCostModel models[] = {
      cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), tp4),
      cost::RooflineCostModel(test::llama3_70b(), test::a100_sxm(), tp4),
      cost::RooflineCostModel(test::mistral_7b_window(), test::h100_sxm(), {}),
      cost::RooflineCostModel(test::hybrid_mamba_attention_mlp(), test::h100_sxm(), {}),
      cost::RooflineCostModel(model::shard_experts(test::deepseek_v2_lite(), 1, 2, true),
                              test::h100_sxm(), dp2),
      cost::RooflineCostModel(test::deepseek_v2_lite(), test::h100_sxm(), {}),
      cost::RooflineCostModel(test::deepseek_v2_lite_sparse(), test::h100_sxm(), {})};
  Rng rng(11);
  for (int i = 0; i < 3000; ++i) {
    const std::size_t which = static_cast<std::size_t>(rng.uniform_int(0, 6));
    const auto& model = models[which];
    // Few distinct counts (so the memo hits), contexts free (so attention differs per hit).
    std::vector<std::int64_t> ctx(static_cast<std::size_t>(rng.uniform_int(0, 6)));
    for (auto& c : ctx) c = rng.uniform_int(0, 50'000);
    const PrefillChunk chunks[2] = {{rng.uniform_int(1, 3), rng.uniform_int(0, 9000)},
                                    {rng.uniform_int(1, 3), rng.uniform_int(0, 9000)}};
    StepBatch b;
    b.decode_context_tokens = ctx;
    b.prefills = {chunks, static_cast<std::size_t>(rng.uniform_int(0, 2))};
    b.num_sampling = static_cast<std::int64_t>(ctx.size() + b.prefills.size());
    if (which == 4) b.moe_group_tokens = rng.uniform_int(0, 12);
    const TimeNs t = model.step_time(b);
    CHECK(t == seconds_to_ns(model.breakdown(b).time_s));
    CHECK(t == model.step_time(b));
  }
  // Same counts on two GPUs, one after the other, and then other contexts: each its own price.
  const std::vector<std::int64_t> short_ctx(4, 10), long_ctx(4, 40'000);
  StepBatch a, b;
  a.decode_context_tokens = short_ctx;
  b.decode_context_tokens = long_ctx;
  a.num_sampling = b.num_sampling = 4;
  const TimeNs h100 = models[0].step_time(a), a100 = models[1].step_time(a);
  CHECK(h100 < a100);
  CHECK(models[0].step_time(a) == h100);
  CHECK(models[0].step_time(b) > h100);
  CHECK(models[0].step_time(b) == seconds_to_ns(models[0].breakdown(b).time_s));
}

TEST_CASE("A step without a CUDA graph lasts at least its layers' host issue time",
          "[cost][overhead]") {
  model::HardwareSpec base = test::h100_sxm();
  base.cost.step_overhead_s = 0;
  model::HardwareSpec eager_host = base;
  eager_host.cost.eager_layer_host_s = 1e-3;  // 1 ms per layer: 80 ms for Llama-3-70B's 80
  const cost::RooflineCostModel plain(test::llama3_70b(), base, {});
  const cost::RooflineCostModel host(test::llama3_70b(), eager_host, {});
  cost::StepBatch decode;
  decode.decode_context_tokens = kMixedContexts;
  decode.num_sampling = 3;
  const double gpu_s = plain.breakdown(decode).time_s;
  REQUIRE(gpu_s < 0.08);
  // Under a graph the host cost is not there; eager, the step waits for the host's 80 ms.
  CHECK(host.step_time(decode) == plain.step_time(decode));
  decode.eager = true;
  CHECK(std::llabs(host.step_time(decode) - seconds_to_ns(0.08)) <= 1);
  const cost::StepCost c = host.breakdown(decode);
  CHECK(c.time_s == Approx(0.08).epsilon(1e-12));
  REQUIRE(c.ops.size() >= 2);
  CHECK(c.ops[c.ops.size() - 2].name == "eager_launch_wait");
  CHECK(c.ops[c.ops.size() - 2].time_s == Approx(0.08 - gpu_s).epsilon(1e-9));
  // Without the profile's term, eager costs nothing more (the default: not modelled).
  CHECK(plain.step_time(decode) == seconds_to_ns(gpu_s));
  // A step whose GPU time outlasts the host's: its own time (a 16,384-token prefill on one GPU).
  const std::vector<PrefillChunk> chunk = {{16384, 0}};
  cost::StepBatch big;
  big.prefills = chunk;
  big.num_sampling = 1;
  const TimeNs graph_ns = host.step_time(big);
  REQUIRE(graph_ns > seconds_to_ns(0.08));
  big.eager = true;
  CHECK(host.step_time(big) == graph_ns);
  // The per-step host overhead comes on top of it, as for any step.
  model::HardwareSpec both = eager_host;
  both.cost.step_overhead_s = 0.002;
  CHECK(std::llabs(cost::RooflineCostModel(test::llama3_70b(), both, {}).step_time(decode) -
                   seconds_to_ns(0.082)) <= 1);
}
