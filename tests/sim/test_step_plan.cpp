// sim/step_plan.cpp: the items of one engine step, their token count, and cancellation.
#include <catch2/catch.hpp>

#include "sim/step_plan.h"

using namespace kvsim::sim;

TEST_CASE("step plan: tokens count prefill and decode items, not padding", "[sim][step_plan]") {
  StepPlan plan;
  plan.add(0, StepItemKind::kPrefill, 512, 0);
  plan.add(1, StepItemKind::kDecode, 1, 300);
  plan.add(2, StepItemKind::kPadding, 1, 40);
  CHECK(plan.num_items() == 3);
  CHECK(plan.num_tokens() == 513);
  REQUIRE(plan.items().size() == 3);
  CHECK(plan.items()[0].request == 0);
  CHECK(plan.items()[0].num_tokens == 512);
  CHECK(plan.items()[1].context_tokens == 300);
  CHECK(plan.items()[2].kind == StepItemKind::kPadding);
}

TEST_CASE("step plan: cancel gives back a request's tokens once, padding gives back none",
          "[sim][step_plan]") {
  StepPlan plan;
  plan.add(0, StepItemKind::kPrefill, 100, 0);
  plan.add(1, StepItemKind::kDecode, 1, 50);
  plan.add(0, StepItemKind::kPrefill, 28, 100);
  plan.add(2, StepItemKind::kPadding, 1, 10);
  CHECK(plan.cancel(0) == 128);
  CHECK(plan.num_items() == 2);
  CHECK(plan.num_tokens() == 1);
  CHECK(plan.items()[0].canceled);
  CHECK(plan.items()[2].canceled);
  CHECK_FALSE(plan.items()[1].canceled);
  CHECK(plan.cancel(0) == 0);  // already canceled
  CHECK(plan.cancel(9) == 0);  // not in the plan
  CHECK(plan.cancel(2) == 0);  // padding uses no budget
  CHECK(plan.num_items() == 1);
  CHECK(plan.num_tokens() == 1);
}

TEST_CASE("step plan: the cost model's batch holds the live items, sampling per finished prefill",
          "[sim][step_plan]") {
  StepPlan plan;
  plan.add(0, StepItemKind::kPrefill, 64, 0);   // finishes its prefill: samples
  plan.add(1, StepItemKind::kPrefill, 32, 16);  // a middle chunk: no sample
  plan.add(2, StepItemKind::kDecode, 1, 200);
  plan.add(3, StepItemKind::kDecode, 1, 300);  // canceled below
  plan.add(4, StepItemKind::kPadding, 1, 70);  // a row of the batch: counted like a decode
  plan.cancel(3);
  const auto& batch = plan.build_batch([](const StepItem& item) { return item.request == 0; });
  REQUIRE(batch.prefills.size() == 2);
  CHECK(batch.prefills[0].num_tokens == 64);
  CHECK(batch.prefills[1].num_tokens == 32);
  CHECK(batch.prefills[1].num_cached_tokens == 16);
  REQUIRE(batch.decode_context_tokens.size() == 2);
  CHECK(batch.decode_context_tokens[0] == 200);
  CHECK(batch.decode_context_tokens[1] == 70);
  CHECK(batch.num_sampling == 3);
}

TEST_CASE("step plan: clear empties the plan and its swap bytes", "[sim][step_plan]") {
  StepPlan plan;
  plan.add(0, StepItemKind::kDecode, 1, 5);
  plan.swap_out_bytes = 4096;
  plan.clear();
  CHECK(plan.items().empty());
  CHECK(plan.num_items() == 0);
  CHECK(plan.num_tokens() == 0);
  CHECK(plan.swap_out_bytes == 0);
}
