// cost/roofline_plan.cpp: what the roofline model precomputes from a deployment: the
// tensor-parallel check, dtypes and their roofs, layer groups (hybrid blocks) and expert widths,
// seen through the breakdown of a step.
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/cost_fixtures.h"
#include "cost/ops.h"
#include "cost/roofline_model.h"
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

cost::StepCost decode(const cost::CostModel& m, std::int64_t batch, std::int64_t context) {
  const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), context);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = batch;
  return m.breakdown(b);
}

}  // namespace

TEST_CASE("Dtypes: fp8 KV halves the decode KV bytes, fp8 weights use the fp8 peak", "[cost]") {
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  const auto bf16 =
      by_name(decode(cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), o), 64, 4096));
  o.kv_dtype = model::Dtype::kFp8;
  const cost::RooflineCostModel fp8kv(test::llama3_70b(), test::h100_sxm(), o);
  CHECK(fp8kv.dtypes().kv == model::Dtype::kFp8);
  CHECK(fp8kv.dtypes().activation == model::Dtype::kBf16);
  const auto f = by_name(decode(fp8kv, 64, 4096));
  CHECK(f.at("attn_decode").bytes == 80.0 * (64.0 * 16 * 256 * 2 + 64.0 * 4097 * 512 + 64.0 * 512));
  CHECK(f.at("attn_decode").bytes < bf16.at("attn_decode").bytes);
  o = {};
  o.tensor_parallel_size = 4;
  o.weight_dtype = model::Dtype::kFp8;
  const cost::RooflineCostModel w8a8(test::llama3_70b(), test::h100_sxm(), o);
  CHECK(w8a8.dtypes().gemm_compute == model::Dtype::kFp8);
  CHECK(w8a8.dtypes().kv == model::Dtype::kBf16);
  o.weight_dtype = model::Dtype::kInt4;
  const cost::RooflineCostModel w4a16(test::llama3_70b(), test::h100_sxm(), o);
  CHECK(w4a16.dtypes().gemm_compute == model::Dtype::kBf16);
  const auto q = by_name(decode(w4a16, 1, 10));
  // Weights at 0.5 B: QKV bytes = 80 × (1·8192·2 + 8192·2560·0.5 + 1·2560·2).
  CHECK(q.at("qkv_proj").bytes == 80.0 * (8192.0 * 2 + 8192.0 * 2560 * 0.5 + 2560.0 * 2));
}

TEST_CASE("An fp8 cache's attention takes its own entry (attn_decode.fp8) where there is one",
          "[cost]") {
  auto hw = test::h100_sxm();
  model::OpClassProfile plain, fp8;
  plain.compute.value = fp8.compute.value = 0.5;
  plain.memory.value = 0.8;
  fp8.memory.value = 0.4;  // half the bytes at half the rate: no faster than the 16-bit kernel
  plain.launch_latency_s = fp8.launch_latency_s = 0;
  hw.cost.op_classes["attn_decode"] = plain;
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  o.kv_dtype = model::Dtype::kFp8;
  const auto without =
      by_name(decode(cost::RooflineCostModel(test::llama3_70b(), hw, o), 64, 4096));
  hw.cost.op_classes["attn_decode.fp8"] = fp8;
  const auto with = by_name(decode(cost::RooflineCostModel(test::llama3_70b(), hw, o), 64, 4096));
  // Same work either way; memory-bound, so 80 layers × bytes / (3.35 TB/s × efficiency).
  const cost::OpCost& a = with.at("attn_decode");
  CHECK(a.bytes == without.at("attn_decode").bytes);
  CHECK_FALSE(a.compute_bound);
  CHECK(without.at("attn_decode").time_s == Approx(a.bytes / (3.35e12 * 0.8)).epsilon(1e-12));
  CHECK(a.time_s == Approx(a.bytes / (3.35e12 * 0.4)).epsilon(1e-12));
  // A 16-bit cache keeps the plain entry.
  o.kv_dtype = model::Dtype::kBf16;
  const auto bf16 = by_name(decode(cost::RooflineCostModel(test::llama3_70b(), hw, o), 64, 4096));
  CHECK(bf16.at("attn_decode").time_s ==
        Approx(bf16.at("attn_decode").bytes / (3.35e12 * 0.8)).epsilon(1e-12));
}

TEST_CASE("Bad deployments are rejected with a clear error", "[cost]") {
  cost::CostOptions o;
  o.tensor_parallel_size = 3;
  CHECK_THROWS_WITH(cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), o),
                    Catch::Contains("tensor_parallel_size") && Catch::Contains("64 query heads"));
  o.tensor_parallel_size = 0;
  CHECK_THROWS_AS(cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), o), Error);
  auto hw = test::h100_sxm();
  hw.interconnect_bandwidth = 0;
  o.tensor_parallel_size = 2;
  CHECK_THROWS_WITH(cost::RooflineCostModel(test::llama3_70b(), hw, o),
                    Catch::Contains("interconnect"));
  o.tensor_parallel_size = 16;  // more GPUs than KV heads: KV heads are replicated
  // ... and more than an 8-GPU node: priced on the inter-node link, an error without one.
  CHECK_THROWS_WITH(cost::RooflineCostModel(test::llama3_70b(), test::h100_sxm(), o),
                    Catch::Contains("internode_bandwidth"));
  hw = test::h100_sxm();
  hw.internode_bandwidth = 50e9;
  CHECK_NOTHROW(cost::RooflineCostModel(test::llama3_70b(), hw, o));
}

TEST_CASE("Hybrid blocks: Mamba mixers, attention-only and MLP-only blocks", "[cost]") {
  const model::ModelSpec m = test::hybrid_mamba_attention_mlp();
  cost::CostOptions o;
  o.tensor_parallel_size = 2;
  const cost::RooflineCostModel model(m, test::h100_sxm(), o);
  const auto ops = by_name(decode(model, 4, 100));
  // Mamba in_proj per GPU: 2·(64 heads·64) + 2·4 groups·128 state + 64 heads = 9,280 columns;
  // out_proj: 4,096 → 8,192.
  const double in_proj = 2.0 * 4 * 9280 * 8192;
  const double out_proj = 2.0 * 4 * 8192 * 4096;
  CHECK(ops.at("ssm").flops == in_proj + out_proj);
  // One attention layer, one MLP layer; one all-reduce per block (3) of 4 × 8192 × 2 B.
  CHECK(ops.at("attn_decode").flops == 2.0 * 4 * 101 * 32 * 256);
  CHECK(ops.at("mlp").flops == 2.0 * 4 * 8192 * (2 * 14336 + 14336));
  CHECK(ops.at("allreduce").bytes == 3.0 * 0.5 * 2 * 4 * 8192 * 2);
}

TEST_CASE("Hybrid blocks: a gated DeltaNet mixer and gated full attention", "[cost]") {
  const model::ModelSpec m = test::hybrid_gated_delta_net();
  cost::CostOptions o;
  o.tensor_parallel_size = 2;
  const cost::RooflineCostModel model(m, test::h100_sxm(), o);
  const auto four = by_name(decode(model, 4, 100));
  // Per GPU: 8 key heads (1,024 wide) and 16 value heads (2,048 wide). in_proj_qkvz 8,192 →
  // 2·1,024 + 2·2,048 = 6,144; in_proj_ba 8,192 → 2·16; out_proj 2,048 → 8,192.
  CHECK(four.at("ssm").flops == 2.0 * 4 * (6144.0 * 8192 + 32.0 * 8192 + 8192.0 * 2048));
  // Gated attention: q_proj yields 32 heads × 128 of queries and as many gates, + 4 KV heads.
  CHECK(four.at("qkv_proj").flops == 2.0 * 4 * (2 * 32 * 128 + 4 * 256) * 8192);
  // Both blocks have the MLP, and two all-reduces each.
  CHECK(four.at("mlp").flops == 2.0 * 2 * 4 * 8192 * (2 * 14336 + 14336));
  CHECK(four.at("allreduce").bytes == 4.0 * 0.5 * 2 * 4 * 8192 * 2);
  // Each decoded sequence reads and writes its state once: conv 3 × (2·1,024 + 2,048) and
  // recurrent 16 × 128 × 128 elements of 2 B per GPU.
  const double state = 3.0 * 4096 * 2 + 16.0 * 128 * 128 * 2;
  CHECK(model::ssm_state_bytes_per_sequence(m, 2) == static_cast<Bytes>(state));
  const auto eight = by_name(decode(model, 8, 100));
  const double extra = eight.at("ssm").bytes - four.at("ssm").bytes;
  // Four more sequences: their states, plus ~124 KB of activations per token (the projections'
  // inputs and outputs, the conv, the kernel's q/k/v/output and the chunk states).
  CHECK(extra > 4 * 2 * state);
  CHECK(extra < 4 * (2 * state + 130e3));
}

TEST_CASE("Routed experts in their own dtype are read at that width plus scales", "[cost]") {
  auto m = test::deepseek_v2_lite();
  m.moe.has_expert_dtype = true;
  m.moe.expert_dtype = model::Dtype::kFp4;
  m.moe.expert_scale_group_size = 32;
  const cost::RooflineCostModel quantized(m, test::h100_sxm(), {});
  const cost::RooflineCostModel plain(test::deepseek_v2_lite(), test::h100_sxm(), {});
  const auto q = by_name(decode(quantized, 1, 100));
  const auto p = by_name(decode(plain, 1, 100));
  // 26 MoE layers × 6 experts × 3 matrices of 2048 × 1408: 2 B → 0.5 + 1/32 B per weight.
  const double weights = 26.0 * 6 * 3 * 2048 * 1408;
  CHECK(p.at("moe").bytes - q.at("moe").bytes == Approx(weights * (2.0 - 0.5 - 1.0 / 32)));
}
