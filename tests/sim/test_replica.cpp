// sim/replica.cpp: preemption (recompute and swap), swap-in and rejection at enqueue, driven
// through the simulator on tiny fake allocators with exact times.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;
using sim::RequestState;
using sim::SchedulerKind;

namespace {

constexpr TimeNs kMs = kNsPerMs;
constexpr TimeNs kUs = kNsPerUs;

}  // namespace

TEST_CASE("A decode that cannot grow preempts the newest request (recompute)", "[sim]") {
  // 4 blocks of 4 slots. Two requests (4 prompt, 8 output) arrive together; every step 1 ms.
  //   t=0 both prefill (1 block each). t=1..4 decode: each reaches 8 tokens in 2 blocks.
  //   t=5 R0 needs a 3rd block: R1 (newest) is preempted and freed; R0 decodes alone to t=8.
  //   t=6, t=7: R1 would need 9 tokens = 3 blocks, only 1 free: it waits.
  //   t=8 R0 done; R1 recomputes 4 + 5 = 9 tokens -> its 6th token at t=9; done at t=11.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.record = true;
  FakeAllocator::Options alloc;
  alloc.num_blocks = 4;
  alloc.block_size = 4;
  const auto run = run_sim(small_options(), alloc, cost, {spec(0, 0, 4, 8), spec(1, 0, 4, 8)});
  const sim::Metrics& m = run.result.metrics;
  REQUIRE(m.completed == 2);
  CHECK(m.preemptions_recompute == 1);
  CHECK(m.preemptions_swap == 0);
  const sim::Request& r0 = run.ended.at(0);
  const sim::Request& r1 = run.ended.at(1);
  CHECK(r0.finish_ns == 8 * kMs);
  CHECK(r0.num_preemptions == 0);
  CHECK(r1.num_preemptions == 1);
  CHECK(r1.first_token_ns == 1 * kMs);
  CHECK(r1.finish_ns == 11 * kMs);
  CHECK(m.itl.max() == 4 * kMs);  // R1: 5th token at t=5, 6th at t=9
  // TPOT of R1 = (11 - 1) / 7 ms, rounded to the nearest ns.
  CHECK(m.tpot.max() == 1'428'571);
  // The recompute step: a 9-token prefill from scratch, sampling one token.
  bool saw_recompute = false;
  for (const auto& s : cost.seen) {
    if (s.prefills.size() == 1 && s.prefills[0].num_tokens == 9) {
      saw_recompute = true;
      CHECK(s.prefills[0].num_cached_tokens == 0);
      CHECK(s.num_sampling == 1);
    }
  }
  CHECK(saw_recompute);
  CHECK(run.allocators.at(0)->peak_used_blocks == 4);
  CHECK(run.allocators.at(0)->used_blocks_at_end == 0);
}

TEST_CASE("Swap preemption moves KV over PCIe and back", "[sim]") {
  // As above with --preemption swap; 8,000 bytes of KV (8 tokens × 1,000) take 0.8 ms each way.
  //   t=5    R1 swapped out: that step takes 1 + 0.8 ms -> 6.8
  //   t=6.8  R1 cannot come back (2 blocks needed, 1 free); R0 decodes to t=7.8, then t=8.8 done
  //   t=8.8  R1's blocks are taken, the copy runs 8.8 -> 9.6; nothing else to run
  //   t=9.6  R1 decodes: tokens 6, 7, 8 at 10.6, 11.6, 12.6
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.swap_ns_per_byte = 100;
  FakeAllocator::Options alloc;
  alloc.num_blocks = 4;
  alloc.block_size = 4;
  alloc.cpu_swap_bytes = 4 * kGiB;
  sim::SimOptions opts = small_options();
  opts.scheduler.preemption = sim::PreemptionMode::kSwap;
  const auto run = run_sim(opts, alloc, cost, {spec(0, 0, 4, 8), spec(1, 0, 4, 8)});
  const sim::Metrics& m = run.result.metrics;
  REQUIRE(m.completed == 2);
  CHECK(m.preemptions_swap == 1);
  CHECK(m.preemptions_recompute == 0);
  CHECK(m.swap_out_bytes == 8000);
  CHECK(m.swap_in_bytes == 8000);
  CHECK(run.ended.at(0).finish_ns == 8800 * kUs);
  CHECK(run.ended.at(1).finish_ns == 12600 * kUs);
  CHECK(m.itl.max() == 5600 * kUs);  // R1: token 5 at t=5, token 6 at t=10.6
}

TEST_CASE("Swap falls back to recompute when the swap space is full", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  FakeAllocator::Options alloc;
  alloc.num_blocks = 4;
  alloc.block_size = 4;
  sim::SimOptions opts = small_options();
  opts.scheduler.preemption = sim::PreemptionMode::kSwap;
  alloc.cpu_swap_bytes = 7000;  // 7 slots: R1's 2 blocks of 4 do not fit
  const auto run = run_sim(opts, alloc, cost, {spec(0, 0, 4, 8), spec(1, 0, 4, 8)});
  CHECK(run.result.metrics.preemptions_swap == 0);
  CHECK(run.result.metrics.preemptions_recompute == 1);
  CHECK(run.ended.at(1).finish_ns == 11 * kMs);
}

TEST_CASE("Requests that can never be served are rejected and counted", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  FakeAllocator::Options alloc;  // 1,600 slots
  alloc.watermark_blocks = 10;   // admission leaves 160 slots free
  sim::SimOptions opts = small_options();
  opts.scheduler.max_model_len = 2000;
  const auto run = run_sim(opts, alloc, cost,
                           {spec(0, 0, 2001, 5),     // prompt beyond max_model_len
                            spec(1, 0, 1990, 20),    // prompt + output beyond it
                            spec(2, 0, 1000, 1000),  // 1,999 tokens of KV > 1,600 slots
                            spec(3, 0, 1500, 10),    // 94 blocks + 10 watermark > 100
                            spec(4, 0, 10, 2)});     // fine
  const sim::Metrics& m = run.result.metrics;
  CHECK(m.completed == 1);
  CHECK(m.rejected_prompt_too_long == 1);
  CHECK(m.rejected_too_long == 1);
  CHECK(m.rejected_never_fits == 2);
  CHECK(m.rejected() == 4);
  CHECK(run.num_end_calls == 5);
  CHECK(run.ended.at(0).reject_reason == sim::RejectReason::kPromptTooLong);
  CHECK(run.ended.at(1).reject_reason == sim::RejectReason::kTooLong);
  CHECK(run.ended.at(2).reject_reason == sim::RejectReason::kNeverFits);
  CHECK(run.ended.at(3).reject_reason == sim::RejectReason::kNeverFits);
  CHECK(run.ended.at(3).state == RequestState::kRejected);
  CHECK(run.ended.at(4).state == RequestState::kFinished);
}

TEST_CASE("A swapped request that can never be swapped back in recomputes instead", "[sim]") {
  // The swap preemption scenario with an allocator that refuses every swap-in: once R0 is done
  // and the GPU is empty, R1 goes back to the waiting queue and recomputes (as in the recompute
  // scenario, from t=8.8 instead of t=8): 4 + 5 = 9 tokens, then 3 more tokens.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.swap_ns_per_byte = 100;
  FakeAllocator::Options alloc;
  alloc.num_blocks = 4;
  alloc.block_size = 4;
  alloc.cpu_swap_bytes = 4 * kGiB;
  alloc.refuse_swap_in = true;
  sim::SimOptions opts = small_options();
  opts.scheduler.preemption = sim::PreemptionMode::kSwap;
  const auto run = run_sim(opts, alloc, cost, {spec(0, 0, 4, 8), spec(1, 0, 4, 8)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.result.metrics.preemptions_swap == 1);
  CHECK(run.ended.at(0).finish_ns == 8800 * kUs);
  CHECK(run.ended.at(1).finish_ns == 11800 * kUs);
  CHECK(run.allocators.at(0)->used_blocks_at_end == 0);
}
