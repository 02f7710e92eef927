// cost/ops.cpp: the attention arithmetic every op template uses.
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
