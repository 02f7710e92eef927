// Pipeline step times and the inter-node all-reduce, worked by hand.
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/cost_fixtures.h"
#include "cost/ops.h"
#include "cost/pipeline_model.h"
#include "cost/roofline_model.h"
#include "sim/fakes.h"
#include "test_util.h"

using namespace kvsim;

namespace {

constexpr TimeNs kUs = kNsPerUs;

// A stage costing 1 ms + 100 us per decode row.
std::unique_ptr<cost::CostModel> stage_1ms_100us() {
  auto c = std::make_unique<test::FixedCostModel>();
  c->per_step_ns = 1000 * kUs;
  c->per_decode_ns = 100 * kUs;
  return c;
}

// Two such stages joined by a 1 GB/s link with 10 us latency, 64 bytes per token.
cost::PipelineCostModel two_stages() {
  std::vector<std::unique_ptr<cost::CostModel>> stages;
  stages.push_back(stage_1ms_100us());
  stages.push_back(stage_1ms_100us());
  model::Link link{1e9, 10e-6, true};
  return cost::PipelineCostModel(std::move(stages), {cost::StageTransfer{64, link}});
}

cost::StepCost allreduce_of(const model::HardwareSpec& hw, std::int64_t tp) {
  cost::CostOptions o;
  o.tensor_parallel_size = tp;
  const cost::RooflineCostModel m(test::llama3_70b(), hw, o);
  const std::vector<std::int64_t> ctx(8, 1000);
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 8;
  return m.breakdown(b);
}

double op_time(const cost::StepCost& c, const std::string& name) {
  for (const auto& op : c.ops) {
    if (op.name == name) return op.time_s;
  }
  return -1;
}

}  // namespace

TEST_CASE("One pipelined step: stage times plus the activation transfer", "[cost][pp]") {
  const cost::PipelineCostModel p = two_stages();
  const std::vector<std::int64_t> ctx(4, 100);
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 4;
  // Each stage 1 + 4 × 0.1 = 1.4 ms; transfer 10 us + 4 × 64 B / 1 GB/s = 10.256 us.
  std::vector<TimeNs> t(3);
  p.stage_times(b, t);
  CHECK(t == std::vector<TimeNs>{1400 * kUs, 10256, 1400 * kUs});
  CHECK(p.step_time(b) == 2810256);
  const cost::StepCost c = p.breakdown(b);
  CHECK(seconds_to_ns(c.time_s) == 2810256);
  REQUIRE(c.ops.size() == 1);  // the fixed stages have no ops; the transfer is one
  CHECK(c.ops[0].name == "pp_transfer");
  CHECK(c.ops[0].bytes == 256);
  CHECK(p.step_time(cost::StepBatch{}) == 2000 * kUs);  // FixedCostModel's per-step cost
}

TEST_CASE("A TP all-reduce over more GPUs than a node holds is priced on the inter-node link",
          "[cost][pp]") {
  model::HardwareSpec hw = test::h100_sxm();
  hw.gpus_per_node = 8;
  hw.internode_bandwidth = 50e9;
  hw.internode_latency_s = 5e-6;
  const cost::Roof in_node = cost::roof_for(hw, cost::OpClass::kAllreduce, model::Dtype::kBf16, 8);
  CHECK(in_node.bandwidth == 450e9);
  CHECK(in_node.extra_latency_s == Approx(2e-6));  // vLLM's one-shot custom all-reduce: 1 hop
  const cost::Roof across = cost::roof_for(hw, cost::OpClass::kAllreduce, model::Dtype::kBf16, 16);
  CHECK(across.bandwidth == 50e9);
  CHECK(across.extra_latency_s == Approx(2 * 15 * 5e-6));
  // In the step: the same 160 all-reduces of 8 tokens × 8192 × 2 B, mostly latency at this size
  // (2 × 15 hops × 5 us against 2 us), over a 9× slower link.
  const cost::StepCost c16 = allreduce_of(hw, 16);
  model::HardwareSpec one_big_node = hw;
  one_big_node.gpus_per_node = 16;
  const cost::StepCost nvlink16 = allreduce_of(one_big_node, 16);
  CHECK(op_time(c16, "allreduce") > 2 * op_time(nvlink16, "allreduce"));
  // No inter-node bandwidth: a loud error, never an NVLink price.
  hw.internode_bandwidth = 0;
  const std::string e = test::error_of([&] { (void)allreduce_of(hw, 16); });
  CHECK(e.find("internode_bandwidth") != std::string::npos);
  CHECK(e.find("16-GPU all-reduce across 8-GPU nodes") != std::string::npos);
}

TEST_CASE("The roofline pipeline: stage sums, cross-node transfers, and loud errors",
          "[cost][pp]") {
  model::HardwareSpec hw = test::a100_sxm();
  hw.gpus_per_node = 4;
  hw.internode_bandwidth = 25e9;
  hw.internode_latency_s = 5e-6;
  cost::CostModelConfig cfg;
  cfg.roofline.tensor_parallel_size = 4;
  const auto p = cost::make_pipeline_cost_model(test::llama3_70b(), hw, cfg, 2);
  REQUIRE(p->num_stages() == 2);
  const std::vector<std::int64_t> ctx(16, 500);
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 16;
  std::vector<TimeNs> t(3);
  p->stage_times(b, t);
  // 16 tokens × 2 × 8192 × 2 B / 4 ranks = 131,072 B per GPU over 25 GB/s, + 5 us.
  CHECK(t[1] == seconds_to_ns(5e-6 + 131072.0 / 25e9));
  CHECK(t[0] + t[1] + t[2] == p->step_time(b));
  // The last stage also runs the LM head: it is the slower of two equal halves.
  CHECK(t[2] > t[0]);
  hw.internode_bandwidth = 0;
  CHECK(test::error_of([&] {
          (void)cost::make_pipeline_cost_model(test::llama3_70b(), hw, cfg, 2);
        }).find("between pipeline stages 0 and 1") != std::string::npos);
  cfg.kind = cost::CostModelKind::kLinear;
  CHECK(test::error_of([&] {
          (void)cost::make_pipeline_cost_model(test::llama3_70b(), hw, cfg, 2);
        }).find("needs the roofline cost model") != std::string::npos);
}
