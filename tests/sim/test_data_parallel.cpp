// Data parallelism in the simulator (SimSetup::DataParallel): a replica's ranks as engines of
// their own, routed by vLLM's load-balancing score, and an MoE model's ranks stepping in
// lockstep. Worked by hand.
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;

namespace {

constexpr TimeNs kUs = kNsPerUs;

// 1 ms per step + 10 us per prefill token + 100 us per decode + 1 us per token every rank feeds
// the MoE layers together (StepBatch::moe_group_tokens; 0 unless the ranks step in lockstep).
FixedCostModel dp_cost() {
  FixedCostModel c;
  c.per_step_ns = 1000 * kUs;
  c.per_prefill_token_ns = 10 * kUs;
  c.per_decode_ns = 100 * kUs;
  c.per_padding_token_ns = 1 * kUs;
  c.per_moe_group_token_ns = 1 * kUs;
  return c;
}

SimRun run_dp(const FixedCostModel& c, sim::SimOptions options, bool lockstep,
              std::vector<trace::RequestSpec> specs) {
  SimRun run;
  sim::SimSetup setup;
  setup.options = options;
  setup.cost_model = &c;
  setup.data_parallel = {.size = 2, .lockstep = lockstep};
  setup.make_allocator = fake_allocators(run);
  simulate_into(run, std::move(setup), std::move(specs));
  return run;
}

// One prefill replica in front of one decode replica, each priced by its cost model, either of
// them two data-parallel ranks in lockstep (`prefill_ranks`, `decode_ranks`: 1 or 2); KV: 1,000 B
// per token over 1 MB/s, 0.5 ms latency.
SimRun run_disaggregated(const FixedCostModel& prefill_cost, std::int64_t prefill_ranks,
                         const FixedCostModel& decode_cost, std::int64_t decode_ranks,
                         std::vector<trace::RequestSpec> specs) {
  SimRun run;
  sim::SimSetup setup;
  setup.options = small_options();
  setup.cost_model = &decode_cost;
  setup.data_parallel = {.size = decode_ranks, .lockstep = decode_ranks > 1};
  setup.make_allocator = fake_allocators(run);
  setup.prefill.num_replicas = 1;
  setup.prefill.data_parallel = {.size = prefill_ranks, .lockstep = prefill_ranks > 1};
  setup.prefill.cost_model = &prefill_cost;
  setup.prefill.make_allocator = fake_allocators(run);
  setup.prefill.bytes_per_token = 1000;
  setup.prefill.bandwidth = 1e6;
  setup.prefill.latency_s = 0.5e-3;
  simulate_into(run, std::move(setup), std::move(specs));
  return run;
}

FixedCostModel one_ms_steps() {
  FixedCostModel c;
  c.per_step_ns = 1000 * kUs;
  return c;
}

}  // namespace

TEST_CASE("Data-parallel ranks of a dense model step on their own", "[sim][dp]") {
  // R0 (100-token prompt, 2 out) and R1 (50, 3) arrive at 0: R0 -> rank 0 (both score 0), then
  // rank 0 scores 4 × 1 waiting and R1 -> rank 1. Each rank alone: R0 prefill 2 ms, decode
  // 1.1 ms; R1 prefill 1.5 ms, two decodes.
  const FixedCostModel c = dp_cost();
  const SimRun run = run_dp(c, small_options(), false, {spec(0, 0, 100, 2), spec(1, 0, 50, 3)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.allocators.size() == 2);  // a KV cache per rank
  CHECK(run.ended.at(0).replica == 0);
  CHECK(run.ended.at(1).replica == 1);
  CHECK(run.ended.at(0).first_token_ns == 2000 * kUs);
  CHECK(run.ended.at(0).finish_ns == 3100 * kUs);
  CHECK(run.ended.at(1).first_token_ns == 1500 * kUs);
  CHECK(run.ended.at(1).finish_ns == 3700 * kUs);
  CHECK(run.result.num_replicas == 1);
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{2});
}

TEST_CASE("An MoE model's data-parallel ranks step in lockstep", "[sim][dp]") {
  const FixedCostModel c = dp_cost();
  SECTION("the slowest rank sets the step; an idle rank runs a dummy batch") {
    // Step 1 at 0: rank 0 prefills 100 tokens, rank 1 50; the MoE layers see 150.
    //   rank 0: 1 + 1.0 + 0.15 = 2.15 ms, rank 1: 1 + 0.5 + 0.15 = 1.65 ms -> ends at 2.15 ms.
    // Step 2: one decode each, 2 MoE tokens: 1.102 ms -> 3.252 ms; R0 is done.
    // Step 3: rank 1 decodes, rank 0 runs its one-token dummy: 1.102 ms -> 4.354 ms.
    const SimRun run = run_dp(c, small_options(), true, {spec(0, 0, 100, 2), spec(1, 0, 50, 3)});
    REQUIRE(run.result.metrics.completed == 2);
    CHECK(run.ended.at(0).first_token_ns == 2150 * kUs);
    CHECK(run.ended.at(1).first_token_ns == 2150 * kUs);
    CHECK(run.ended.at(0).finish_ns == 3252 * kUs);
    CHECK(run.ended.at(1).finish_ns == 4354 * kUs);
    CHECK(run.result.metrics.num_steps == 5);  // dummy batches are not engine steps
  }
  SECTION("with CUDA graphs every rank is padded to the most tokens any rank runs") {
    // Rank 1's 50 prefill tokens are padded to rank 0's 100 (1 us per padding row): step 1 is
    // rank 0: 1 + 1.0 + 0.2 = 2.2 ms (200 MoE tokens), rank 1: 1 + 0.5 + 0.05 + 0.2 = 1.75 ms.
    // Then two steps of 1 + 0.1 + 0.002 ms (single rows are graph size 1: no padding).
    sim::SimOptions o = small_options();
    o.scheduler.cuda_graph_max_size = 8;
    const SimRun run = run_dp(c, o, true, {spec(0, 0, 100, 2), spec(1, 0, 50, 3)});
    REQUIRE(run.result.metrics.completed == 2);
    CHECK(run.ended.at(0).first_token_ns == 2200 * kUs);
    CHECK(run.ended.at(0).finish_ns == 3302 * kUs);
    CHECK(run.ended.at(1).finish_ns == 4404 * kUs);
  }
  SECTION("a request arriving during a step waits for the group's next one") {
    // Step 1 at 0: rank 0 prefills 100 tokens, idle rank 1 runs its dummy token; 101 MoE
    // tokens: rank 0 1 + 1.0 + 0.101 = 2.101 ms (the dummy: 1.201 ms). R1 arrives at 1 ms on
    // rank 1 (score 0 against rank 0's 1 running) and waits for the group's next step.
    const SimRun run =
        run_dp(c, small_options(), true, {spec(0, 0, 100, 2), spec(1, 1000 * kUs, 50, 1)});
    REQUIRE(run.result.metrics.completed == 2);
    CHECK(run.ended.at(0).first_token_ns == 2101 * kUs);
    CHECK(run.ended.at(1).replica == 1);
    // Step 2 at 2.101 ms: rank 0 decodes (1.1 ms), rank 1 prefills 50 (1.5 ms), 51 MoE tokens.
    CHECK(run.ended.at(1).first_token_ns == (2101 + 1551) * kUs);
    CHECK(run.ended.at(0).finish_ns == (2101 + 1551) * kUs);
  }
}

TEST_CASE("Disaggregated serving in front of an MoE model's lockstep data-parallel ranks",
          "[sim][dp][disagg]") {
  // Engine 0 is the prefill replica (1 ms a step); engines 1 and 2 are the two ranks of the one
  // decode replica, priced by dp_cost().
  // R0 (10 prompt tokens, 20 out) and R1 (10, 2) prefill together in [0, 1 ms] on engine 0 and
  // are sent one after the other: 0.5 + 10 ms each, arriving at 11.5 and 22 ms.
  // R0 joins rank 0 (both score 0). From 11.5 ms the group steps: rank 0 computes R0's token-1
  // KV (1 token, 10 cached: 1 + 0.01 ms) or decodes it (1 + 0.1 ms), while idle rank 1 runs its
  // dummy decode (1 + 0.1 ms), both with 2 MoE tokens: every step is 1.102 ms, and R0's token 20
  // comes at the end of the 19th, 11.5 + 19 × 1.102 = 32.438 ms.
  // R1 arrives during the 10th step (21.418-22.52 ms) and joins rank 1 (score 0 against rank
  // 0's 1 running); it computes its token-1 KV in the group's 11th step: token 2 at 23.622 ms.
  const SimRun run =
      run_disaggregated(one_ms_steps(), 1, dp_cost(), 2, {spec(0, 0, 10, 20), spec(1, 0, 10, 2)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.allocators.size() == 3);  // the prefill replica's KV cache, then one per rank
  CHECK(run.ended.at(0).first_token_ns == 1000 * kUs);
  CHECK(run.ended.at(1).first_token_ns == 1000 * kUs);
  CHECK(run.ended.at(0).replica == 1);
  CHECK(run.ended.at(1).replica == 2);
  CHECK(run.ended.at(0).finish_ns == 32438 * kUs);
  CHECK(run.ended.at(1).finish_ns == 23622 * kUs);
  CHECK(run.result.metrics.kv_transfer.max() == 21000 * kUs);  // R1: token 1 at 1 ms -> 22 ms
  // Completions: the prefill replica's (none), then the decode replica's two ranks' together.
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{0, 2});
}

TEST_CASE("Disaggregated serving with an MoE model's lockstep prefill ranks", "[sim][dp][disagg]") {
  // Engines 0 and 1 are the two ranks of the one prefill replica, priced by dp_cost(); engine 2
  // is the decode replica (1 ms a step).
  // R0 (100 prompt tokens, 3 out) joins rank 0; R1 (50, 2), at the same instant, rank 1 (score
  // 0 against rank 0's 4 × 1 waiting). One lockstep step: rank 0 1 + 1.0 + 0.15 ms, rank 1
  // 1 + 0.5 + 0.15 ms (150 MoE tokens): both first tokens at 2.15 ms. Each rank sends on its own
  // link, at once: R0 0.5 + 100 ms -> 102.65 ms, R1 0.5 + 50 ms -> 52.65 ms. The decode replica
  // computes each one's token-1 KV (1 ms) and decodes: R1 ends at 53.65 ms, R0 at 104.65 ms.
  const SimRun run =
      run_disaggregated(dp_cost(), 2, one_ms_steps(), 1, {spec(0, 0, 100, 3), spec(1, 0, 50, 2)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.allocators.size() == 3);  // a KV cache per prefill rank, then the decode replica's
  CHECK(run.ended.at(0).first_token_ns == 2150 * kUs);
  CHECK(run.ended.at(1).first_token_ns == 2150 * kUs);
  CHECK(run.ended.at(0).replica == 2);
  CHECK(run.ended.at(1).replica == 2);
  CHECK(run.ended.at(1).finish_ns == 53650 * kUs);
  CHECK(run.ended.at(0).finish_ns == 104650 * kUs);
  CHECK(run.result.metrics.kv_transfer.max() == 100500 * kUs);
  // Completions: the prefill replica's two ranks together (none), then the decode replica's.
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{0, 2});
}
