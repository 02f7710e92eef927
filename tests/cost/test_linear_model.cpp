#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/cost_fixtures.h"
#include "cost/linear_model.h"

using namespace kvsim;

TEST_CASE("Linear model: hand-checkable step times", "[cost]") {
  cost::LinearCostParams p;
  p.base_ns = 1'000'000;         // 1 ms
  p.per_prefill_token_ns = 100;  // 0.1 us per prompt token
  p.per_decode_seq_ns = 20'000;  // 20 us per decoding sequence
  p.per_context_token_ns = 0.5;  // 0.5 ns per cached token read
  p.swap_bytes_per_s = 10e9;
  const cost::LinearCostModel m(p);
  const cost::PrefillChunk chunks[] = {{512, 0}, {256, 1024}};
  const std::vector<std::int64_t> ctx = {100, 301};
  cost::StepBatch b;
  b.prefills = chunks;
  b.decode_context_tokens = ctx;
  b.num_sampling = 3;
  // 1e6 + 100·768 + 20000·2 + 0.5·(401 + 1024) = 1,116,800 + 712.5 → 1,117,512.5 → 1,117,513 ns
  CHECK(m.step_time(b) == 1'117'513);
  const auto br = m.breakdown(b);
  CHECK(seconds_to_ns(br.time_s) == 1'117'513);
  REQUIRE(br.ops.size() == 5);
  CHECK(br.ops[0].name == "base");
  CHECK(br.ops[1].time_s == Approx(76'800e-9));
  CHECK(br.ops[4].name == "step_overhead");
  CHECK(m.step_time(cost::StepBatch{}) == 0);
  CHECK(m.swap_time(10'000'000'000ull) == kNsPerSecond);
}

TEST_CASE("Linear model: decode totals give the same step time as the list", "[cost]") {
  cost::LinearCostParams p;
  p.base_ns = 1000;
  p.per_decode_seq_ns = 7.5;
  p.per_context_token_ns = 0.3;
  p.per_prefill_token_ns = 2;
  const cost::LinearCostModel m(p);
  REQUIRE(m.prices_decode_totals());
  const std::vector<std::int64_t> ctx = {100, 2000, 35};
  const cost::PrefillChunk chunk{64, 16};
  cost::StepBatch listed;
  listed.decode_context_tokens = ctx;
  listed.prefills = {&chunk, 1};
  cost::StepBatch totals;
  totals.decode_totals = {3, 2135};
  totals.prefills = {&chunk, 1};
  CHECK(m.step_time(totals) == m.step_time(listed));
  totals.prefills = {};
  listed.prefills = {};
  CHECK(m.step_time(totals) == m.step_time(listed));
  CHECK(m.step_time(totals) == std::llround(1000 + 3 * 7.5 + 0.3 * 2135));
}
