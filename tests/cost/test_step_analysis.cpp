// cost/step_analysis.cpp: which roof binds a step, and the decode batch where it flips.
#include <vector>

#include <catch2/catch.hpp>

#include "cost/cost_fixtures.h"
#include "cost/linear_model.h"
#include "cost/roofline_model.h"
#include "cost/step_analysis.h"

using namespace kvsim;

namespace {

cost::StepCost decode(const cost::CostModel& m, std::int64_t batch, std::int64_t context) {
  const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), context);
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = batch;
  return m.breakdown(b);
}

const cost::OpCost& op(const cost::StepCost& c, const std::string& name) {
  for (const auto& o : c.ops) {
    if (o.name == name) return o;
  }
  FAIL("no op " << name);
  return c.ops.front();
}

}  // namespace

TEST_CASE("step analysis: the split sums compute- and memory-bound ops, not the CPU overhead",
          "[cost][analysis]") {
  cost::StepCost c;
  c.ops = {{"qkv_proj", 0.25, 0, 0, true},
           {"attn_decode", 0.5, 0, 0, false},
           {"mlp", 1.0, 0, 0, true},
           {"allreduce", 0.125, 0, 0, false},
           {"step_overhead", 4.0, 0, 0, false}};
  const cost::BoundSplit s = cost::bound_split(c);
  CHECK(s.compute_s == 1.25);
  CHECK(s.memory_s == 0.625);
  CHECK(s.compute_bound());
  c.ops[2].compute_bound = false;  // now 0.25 s against 1.625 s
  CHECK_FALSE(cost::bound_split(c).compute_bound());
  CHECK_FALSE(cost::BoundSplit{}.compute_bound());  // a tie is not compute-bound
}

TEST_CASE("step analysis: the decode crossover is the first compute-bound batch",
          "[cost][analysis]") {
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  const cost::RooflineCostModel m(test::llama3_70b(), test::h100_sxm(), o);
  const cost::DecodeCrossover c = cost::decode_crossover(m, 512);
  REQUIRE(c.step_batch);
  REQUIRE(c.gemm_batch);
  CHECK(*c.step_batch > 1);
  CHECK(*c.gemm_batch > 1);
  // The batch found is the boundary: memory-bound one below, compute-bound at it.
  CHECK(cost::bound_split(decode(m, *c.step_batch, 512)).compute_bound());
  CHECK_FALSE(cost::bound_split(decode(m, *c.step_batch - 1, 512)).compute_bound());
  CHECK(op(decode(m, *c.gemm_batch, 512), "mlp").compute_bound);
  CHECK_FALSE(op(decode(m, *c.gemm_batch - 1, 512), "mlp").compute_bound);
  // Below the crossover the search gives up: nothing up to max_batch.
  const cost::DecodeCrossover none = cost::decode_crossover(m, 512, *c.gemm_batch - 1);
  CHECK_FALSE(none.gemm_batch);
  // Exactly at max_batch it is still found.
  CHECK(cost::decode_crossover(m, 512, *c.gemm_batch).gemm_batch == c.gemm_batch);
}

TEST_CASE("step analysis: a model without roofs never crosses over", "[cost][analysis]") {
  cost::LinearCostParams p;
  p.base_ns = 1000;
  p.per_decode_seq_ns = 10;
  const cost::LinearCostModel m(p);
  const cost::DecodeCrossover c = cost::decode_crossover(m, 4096, 1024);
  CHECK_FALSE(c.step_batch);
  CHECK_FALSE(c.gemm_batch);
}
