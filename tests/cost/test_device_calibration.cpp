#include <algorithm>

#include <catch2/catch.hpp>

#include "cost/cost_fixtures.h"
#include "cost/device_calibration.h"
#include "kernels/device.h"

using namespace kvsim;
using cost::OpClass;

TEST_CASE("Device plan: the model's GEMM and attention shapes at each TP degree", "[cost]") {
  cost::DevicePlanOptions o;
  o.quick = true;
  o.fp8 = false;
  const auto plan = cost::device_plan(test::llama3_70b(), o);
  auto has = [&](auto pred) { return std::any_of(plan.begin(), plan.end(), pred); };
  // TP 4 QKV shard: n = 16·128 + 2·2·128 = 2560, k = 8192; TP 1 down projection: n 8192, k 28672.
  CHECK(has([](const cost::Measurement& m) {
    return m.shape.op == OpClass::kGemm && m.shape.n == 2560 && m.shape.k == 8192 &&
           m.shape.m == 4096;
  }));
  CHECK(has([](const cost::Measurement& m) {
    return m.shape.op == OpClass::kGemm && m.shape.n == 8192 && m.shape.k == 28672;
  }));
  // TP 8 decode attention: 8 query heads, 1 KV head.
  CHECK(has([](const cost::Measurement& m) {
    return m.shape.op == OpClass::kAttnDecode && m.shape.q_heads == 8 && m.shape.kv_heads == 1;
  }));
  CHECK(has([](const cost::Measurement& m) { return m.shape.op == OpClass::kMemcpy; }));
  // One GPU, no NCCL: no all-reduce rows.
  CHECK_FALSE(has([](const cost::Measurement& m) { return m.shape.op == OpClass::kAllreduce; }));
  for (const auto& m : plan) CHECK(m.time_s == 0);
  // MLA attention is not timed by our GQA kernels.
  const auto mla = cost::device_plan(test::deepseek_v2_lite(), o);
  CHECK(std::none_of(mla.begin(), mla.end(), [](const cost::Measurement& m) {
    return m.shape.op == OpClass::kAttnDecode || m.shape.op == OpClass::kAttnPrefill;
  }));
  if (kernels::device_count() == 0) {
    CHECK_THROWS(cost::run_device_plan(0, plan, true, nullptr));
  }
}
