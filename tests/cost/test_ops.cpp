// cost/ops.cpp: the attention arithmetic every op template uses.
#include <cmath>

#include <catch2/catch.hpp>

#include "cost/ops.h"

using namespace kvsim;

TEST_CASE("causal pairs and keys read, full and windowed", "[cost]") {
  CHECK(cost::causal_pairs(4, 0, 0) == 1 + 2 + 3 + 4);
  CHECK(cost::causal_pairs(3, 10, 0) == 11 + 12 + 13);
  CHECK(cost::causal_pairs(4, 0, 2) == 1 + 2 + 2 + 2);
  CHECK(cost::causal_pairs(3, 10, 4) == 12);
  CHECK(cost::causal_pairs(4, 1, 3) == 2 + 3 + 3 + 3);
  CHECK(cost::keys_read(4, 10, 0) == 14);
  CHECK(cost::keys_read(1000, 5000, 4096) == 4096 + 999);
  CHECK(cost::keys_read(10, 5, 4096) == 15);
}

TEST_CASE("A 4-bit kernel without its own entry takes the 8-bit one of its kind", "[cost]") {
  model::CostProfile p;
  model::OpClassProfile plain, fp8, fp4;
  plain.launch_latency_s = 1e-6;
  fp8.launch_latency_s = 8e-6;
  fp4.launch_latency_s = 4e-6;
  p.op_classes["gemm"] = plain;
  p.op_classes["gemm.fp8"] = fp8;
  using model::Dtype;
  bool defaulted = true;
  CHECK(cost::op_class_profile(p, cost::OpClass::kGemm, Dtype::kFp4, &defaulted).launch_latency_s ==
        8e-6);
  CHECK_FALSE(defaulted);
  // int4 has no int8 entry to take: the 16-bit one.
  CHECK(cost::op_class_profile(p, cost::OpClass::kGemm, Dtype::kInt4).launch_latency_s == 1e-6);
  CHECK(cost::op_class_profile(p, cost::OpClass::kGemm, Dtype::kBf16).launch_latency_s == 1e-6);
  p.op_classes["gemm.fp4"] = fp4;  // its own entry wins
  CHECK(cost::op_class_profile(p, cost::OpClass::kGemm, Dtype::kFp4).launch_latency_s == 4e-6);
  // No GEMM entry at all: the default profile, flagged.
  model::CostProfile empty;
  (void)cost::op_class_profile(empty, cost::OpClass::kGemm, Dtype::kFp4, &defaulted);
  CHECK(defaulted);
}

TEST_CASE("Fused-MoE work: touched experts' weights, routed rows in and out", "[cost]") {
  cost::MoeGeometry g;
  g.experts = g.local_experts = 4;
  g.top_k = 2;
  g.hidden = 8;
  g.width = 3;
  g.w = 1;  // fp8 weights
  g.a = 2;
  // One token touches its 2 experts: 1 - (1 - 2/4)^1 = 1/2 of the 4.
  cost::MoeWork w = cost::moe_work(g, 1);
  CHECK(w.assignments == 2);
  CHECK(w.touched_experts == 2);
  CHECK(w.up.flops == 2.0 * 2 * (2 * 8 * 3));           // 2 rows × gate+up 8 → 6
  CHECK(w.up.bytes == 2 * 48 * 1 + 2 * (8 + 6) * 2);    // 2 experts' 48 weights, rows in/out
  CHECK(w.down.flops == 2.0 * 2 * (8 * 3));             // 2 rows × 3 → 8
  CHECK(w.down.bytes == 2 * 24 * 1 + 2 * (3 + 8) * 2);  // 2 experts' 24 weights
  // Three tokens: 1 - (1/2)^3 = 7/8 of the experts touched.
  w = cost::moe_work(g, 3);
  CHECK(w.touched_experts == Approx(3.5));
  // Expert parallelism over 2 GPUs: half the experts, half the rows here.
  g.local_experts = 2;
  g.assignment_share = 0.5;
  w = cost::moe_work(g, 1);
  CHECK(w.assignments == 1);
  CHECK(w.touched_experts == 1);
  // A measured moe row's work is both GEMMs' (fp8 activations for fp8 weights).
  cost::KernelShape s;
  s.op = cost::OpClass::kMoe;
  s.dtype = model::Dtype::kFp8;
  s.m = 1, s.n = 3, s.k = 8, s.experts = 4, s.top_k = 2;
  const cost::Work k = cost::kernel_work(s);
  CHECK(k.flops == 2.0 * 2 * 48 + 2.0 * 2 * 24);
  CHECK(k.bytes == 2 * 48 + 2 * 14 * 1 + 2 * 24 + 2 * 11 * 1);
  const auto c = cost::table_coordinates(s);
  REQUIRE(c);
  CHECK(c->x1 == 1);
  CHECK(cost::table_key("moe", "fp8", c->shape) == "moe|fp8|n=3,k=8,experts=4,top_k=2");
}

TEST_CASE("Balanced routing touches min(experts, assignments); a measured row is balanced",
          "[cost]") {
  cost::MoeGeometry g;
  g.experts = g.local_experts = 128;
  g.top_k = 4;
  g.hidden = 2880;
  g.width = 2880;
  g.w = 0.5;
  // 32 tokens: 128 assignments. Balanced routing spreads them over all 128 experts; uniformly
  // random routing misses (1 - 4/128)^32 of them.
  g.balanced = true;
  CHECK(cost::moe_work(g, 32).touched_experts == 128);
  CHECK(cost::moe_work(g, 4).touched_experts == 16);
  CHECK(cost::moe_work(g, 1000).touched_experts == 128);
  g.balanced = false;
  CHECK(cost::moe_work(g, 32).touched_experts == Approx(128 * (1 - std::pow(124.0 / 128, 32))));
  // aiconfigurator's rows are balanced: 8 tokens × top 2 of 4 experts touch all 4 (random
  // routing: 4 × (1 - 2^-8)).
  cost::KernelShape s;
  s.op = cost::OpClass::kMoe;
  s.dtype = model::Dtype::kFp8;
  s.m = 8, s.n = 3, s.k = 8, s.experts = 4, s.top_k = 2;
  const cost::Work k = cost::kernel_work(s);
  CHECK(k.bytes == 4 * 48 + 16 * 14 * 1 + 4 * 24 + 16 * 11 * 1);
}

TEST_CASE("Kernels with wider activations than weights have their own entries and roofs",
          "[cost]") {
  using cost::OpClass;
  using model::Dtype;
  CHECK(cost::activation_key(OpClass::kMoe, Dtype::kFp4, 16) == "moe.fp4.a16");
  CHECK(cost::activation_key(OpClass::kMoe, Dtype::kFp4, 8) == "moe.fp4.a8");
  CHECK(cost::activation_key(OpClass::kMoe, Dtype::kInt4, 16) == "moe.int4.a16");
  CHECK_FALSE(cost::activation_key(OpClass::kMoe, Dtype::kFp8, 8));    // W8A8: "moe.fp8"
  CHECK_FALSE(cost::activation_key(OpClass::kMoe, Dtype::kBf16, 16));  // 16-bit: "moe"
  CHECK_FALSE(cost::activation_key(OpClass::kMoe, Dtype::kFp4, 0));
  CHECK_FALSE(cost::activation_key(OpClass::kMoe, Dtype::kFp4, 4));
  for (const char* key : {"moe.fp4.a16", "moe.fp4.a8", "gemm.int4.a16", "moe", "gemm.fp8"})
    CHECK(cost::is_op_class_key(key));
  for (const char* key : {"moe.fp8.a8", "moe.bf16.a16", "moe.fp4.a4", "moe.a16", "moe.fp4.a16.a8"})
    CHECK_FALSE(cost::is_op_class_key(key));
  cost::KernelShape s;
  s.op = OpClass::kMoe;
  s.dtype = Dtype::kFp4;
  CHECK(cost::entry_key(s) == "moe.fp4");  // NVFP4's W4A4
  s.activation_bits = 16;
  CHECK(cost::entry_key(s) == "moe.fp4.a16");
  s.n = 3, s.k = 8, s.experts = 4, s.top_k = 2;
  CHECK(cost::table_key("moe", "fp4", cost::table_coordinates(s)->shape) ==
        "moe|fp4|n=3,k=8,experts=4,top_k=2,a=16");
  CHECK(cost::roof_dtype(Dtype::kFp4, 16) == Dtype::kBf16);
  CHECK(cost::roof_dtype(Dtype::kFp4, 8) == Dtype::kFp8);
  CHECK(cost::roof_dtype(Dtype::kFp4, 0) == Dtype::kFp4);
  CHECK(cost::roof_dtype(Dtype::kFp8, 8) == Dtype::kFp8);
  // The entry: its own against its activations' peak, else the weights' chain at theirs.
  model::CostProfile p;
  model::OpClassProfile fp4, a16;
  fp4.launch_latency_s = 4e-6;
  a16.launch_latency_s = 16e-6;
  p.op_classes["moe.fp4"] = fp4;
  cost::ResolvedEntry e = cost::resolve_entry(p, OpClass::kMoe, Dtype::kFp4, 16);
  CHECK(e.profile.launch_latency_s == 4e-6);
  CHECK(e.roof_dtype == Dtype::kFp4);
  CHECK_FALSE(e.defaulted);
  p.op_classes["moe.fp4.a16"] = a16;
  e = cost::resolve_entry(p, OpClass::kMoe, Dtype::kFp4, 16);
  CHECK(e.profile.launch_latency_s == 16e-6);
  CHECK(e.roof_dtype == Dtype::kBf16);
  CHECK(cost::resolve_entry(p, OpClass::kMoe, Dtype::kFp4, 0).profile.launch_latency_s == 4e-6);
  CHECK(cost::resolve_entry(model::CostProfile{}, OpClass::kMoe, Dtype::kFp4, 16).defaulted);
}
