// cost/cost_model.cpp: make_cost_model builds the model the config names.
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/cost_fixtures.h"
#include "cost/linear_model.h"

using namespace kvsim;

TEST_CASE("Linear model: negative coefficients are rejected, the factory selects it", "[cost]") {
  cost::LinearCostParams p;
  p.per_decode_seq_ns = -1;
  CHECK_THROWS_WITH(cost::LinearCostModel(p), Catch::Contains("per_decode_seq_ns"));
  cost::CostModelConfig config;
  config.kind = cost::CostModelKind::kLinear;
  config.linear.base_ns = 5000;
  const auto model = cost::make_cost_model(test::llama3_70b(), test::h100_sxm(), config);
  const std::vector<std::int64_t> ctx = {1};
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  CHECK(model->step_time(b) == 5000);
  config.kind = cost::CostModelKind::kRoofline;
  CHECK(cost::make_cost_model(test::llama3_70b(), test::h100_sxm(), config)->step_time(b) > 5000);
}
