// Pipeline parallelism in the simulator: virtual engines sharing the stages (and data-parallel
// ranks each with stages of their own), worked by hand.
#include <memory>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/pipeline_clock.h"
#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;

namespace {

constexpr TimeNs kUs = kNsPerUs;

// Stages of 1 ms + 10 us per prefill token + 100 us per decode row; 64 B per token over a
// 1 GB/s link without latency (a 100-token prefill moves in 6.4 us, one decode row in 64 ns).
cost::PipelineCostModel pipeline(int stages) {
  std::vector<std::unique_ptr<cost::CostModel>> models;
  std::vector<cost::StageTransfer> links;
  for (int s = 0; s < stages; ++s) {
    auto c = std::make_unique<FixedCostModel>();
    c->per_step_ns = 1000 * kUs;
    c->per_prefill_token_ns = 10 * kUs;
    c->per_decode_ns = 100 * kUs;
    models.push_back(std::move(c));
    if (s + 1 < stages) links.push_back({64, model::Link{1e9, 0, true}});
  }
  return cost::PipelineCostModel(std::move(models), std::move(links));
}

// One replica of `p`'s stages, or `ranks` data-parallel ranks (a dense model's: not in lockstep)
// of them; vLLM V0's virtual engines unless `options` says otherwise.
SimRun run_pp(const cost::PipelineCostModel& p, std::vector<trace::RequestSpec> specs,
              std::int64_t ranks = 1, const sim::SimOptions& options = small_options(),
              FakeAllocator::Options alloc = {}) {
  SimRun run;
  sim::SimSetup setup;
  setup.options = options;
  setup.cost_model = &p;
  setup.pipeline = &p;
  setup.data_parallel = {.size = ranks, .lockstep = false};
  setup.make_allocator = fake_allocators(run, alloc);
  simulate_into(run, std::move(setup), std::move(specs));
  return run;
}

// vLLM V1 (one scheduler, a batch queue of one step per stage) without CUDA graphs, with a
// token budget of `budget` per step.
sim::SimOptions v1_options(std::int64_t budget) {
  sim::SimOptions o = small_options(sim::SchedulerKind::kVllmV1);
  o.scheduler.max_num_batched_tokens = budget;
  o.scheduler.cuda_graph_max_size = 0;
  return o;
}

}  // namespace

TEST_CASE("The pipeline clock books each stage first-in first-out", "[sim][pp]") {
  const cost::PipelineCostModel p = pipeline(2);
  sim::PipelineClock clock(p);
  const std::vector<std::int64_t> ctx(4, 100);
  cost::StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = 4;
  // Batch A at 0: stage 0 [0, 1.4 ms], 256 ns transfer, stage 1 [1.400256, 2.800256].
  CHECK(clock.run(0, b) == 2800256);
  // Batch B at 0.5 ms waits for stage 0 until 1.4 ms: [1.4, 2.8], then stage 1 is free at
  // 2.800256 when B's activations arrive: [2.800256, 4.200256]. The bubble: A's stage 1 ran
  // while stage 0 did B; a lone batch pays the sum of its stages.
  CHECK(clock.run(500 * kUs, b) == 4200256);
  CHECK(clock.stage_free() == std::vector<TimeNs>{2800 * kUs, 4200256});
}

TEST_CASE("Two virtual engines overlap their batches on the stages", "[sim][pp]") {
  // R0 and R1 (100-token prompts, 2 tokens out) arrive at 0: R0 -> engine 0, R1 -> engine 1
  // (fewest unfinished, lowest first). Prefill on a stage: 1 + 1.0 = 2 ms; decode: 1.1 ms.
  //   engine 0 prefill: s0 [0, 2], transfer 6.4 us, s1 [2.0064, 4.0064]      -> R0 token 1
  //   engine 1 prefill: s0 [2, 4],                  s1 [4.0064, 6.0064]      -> R1 token 1
  //   engine 0 decode at 4.0064: s0 [4.0064, 5.1064], s1 waits to [6.0064, 7.1064] -> R0 done
  //   engine 1 decode at 6.0064: s0 [6.0064, 7.1064], 64 ns, s1 [7.106464, 8.206464]
  const cost::PipelineCostModel p = pipeline(2);
  const SimRun run = run_pp(p, {spec(0, 0, 100, 2), spec(1, 0, 100, 2)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.allocators.size() == 2);  // one KV cache share per engine
  CHECK(run.ended.at(0).first_token_ns == 4006400);
  CHECK(run.ended.at(1).first_token_ns == 6006400);
  CHECK(run.ended.at(0).finish_ns == 7106400);
  CHECK(run.ended.at(1).finish_ns == 8206464);
  CHECK(run.result.num_replicas == 1);
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{2});
}

TEST_CASE("Pipelining raises throughput; one request alone pays every stage", "[sim][pp]") {
  // 8 requests at once, 20 tokens each: with 4 engines over 4 stages the stages overlap; the same
  // four stages as one engine (the sum of stage times per step) take longer.
  std::vector<trace::RequestSpec> specs;
  for (std::uint64_t i = 0; i < 8; ++i) specs.push_back(spec(i, 0, 50, 20));
  const cost::PipelineCostModel p4 = pipeline(4);
  const SimRun piped = run_pp(p4, specs);
  // A single engine whose step is the four stages in a row (what one batch's latency is).
  struct SumOfStages final : cost::CostModel {
    const cost::PipelineCostModel* p;
    TimeNs step_time(const cost::StepBatch& b) const override { return p->step_time(b); }
    cost::StepCost breakdown(const cost::StepBatch& b) const override { return p->breakdown(b); }
    TimeNs swap_time(Bytes) const override { return 0; }
  } sum;
  sum.p = &p4;
  sim::SimSetup setup;
  setup.options = small_options();
  setup.cost_model = &sum;
  setup.make_allocator = [] {
    return std::make_unique<FakeAllocator>(FakeAllocator::Options{},
                                           std::make_shared<AllocStats>());
  };
  VectorReader reader(specs);
  const sim::SimResult one = sim::simulate(setup, reader, nullptr);
  REQUIRE(piped.result.metrics.completed == 8);
  REQUIRE(one.metrics.completed == 8);
  // Steady state per token: piped, each stage serves the 4 engines' 2-row batches, 4 × 1.2 ms;
  // one engine, 4 stages × (1 + 8 × 0.1) = 7.2 ms. Measured: 105.2 ms against 156.9 ms.
  CHECK(piped.result.duration_ns * 4 < one.duration_ns * 3);

  // One request alone: every step is its stages in a row (no other batch to overlap).
  const SimRun lone = run_pp(p4, {spec(0, 0, 50, 2)});
  // Prefill: 4 × 1.5 ms + 3 × 3.2 us; decode: 4 × 1.1 ms + 3 × 64 ns.
  CHECK(lone.ended.at(0).first_token_ns == 6000 * kUs + 3 * 3200);
  CHECK(lone.ended.at(0).finish_ns == 6000 * kUs + 3 * 3200 + 4400 * kUs + 3 * 64);
}

TEST_CASE("Data-parallel ranks each run their own stages and virtual engines", "[sim][pp][dp]") {
  // DP 2 × PP 2: engines 0, 1 are rank 0's virtual engines, 2, 3 rank 1's. R0, R1, R2 (100-token
  // prompts, 2 tokens out) arrive at 0:
  //   R0 -> rank 0 (both ranks score 0), its engine 0;
  //   R1 -> rank 1 (rank 0 scores 4 × 1 waiting), engine 2;
  //   R2 -> rank 0 (4 against 4: the lowest), its engine with the fewest unfinished: engine 1.
  // Rank 0 runs R0 and R2 as "Two virtual engines overlap their batches" does R0 and R1. Rank 1's
  // stages are its own: R1 alone pays its stages in a row, never waiting for rank 0's batches.
  const cost::PipelineCostModel p = pipeline(2);
  const SimRun run = run_pp(p, {spec(0, 0, 100, 2), spec(1, 0, 100, 2), spec(2, 0, 100, 2)}, 2);
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.allocators.size() == 4);  // a KV cache share per virtual engine of each rank
  CHECK(run.ended.at(0).replica == 0);
  CHECK(run.ended.at(1).replica == 2);
  CHECK(run.ended.at(2).replica == 1);
  CHECK(run.ended.at(0).first_token_ns == 4006400);
  CHECK(run.ended.at(2).first_token_ns == 6006400);
  CHECK(run.ended.at(0).finish_ns == 7106400);
  CHECK(run.ended.at(2).finish_ns == 8206464);
  // R1: prefill 2 × 2 ms + 6.4 us; decode 2 × 1.1 ms + 64 ns.
  CHECK(run.ended.at(1).first_token_ns == 4006400);
  CHECK(run.ended.at(1).finish_ns == 4006400 + 2200 * kUs + 64);
  CHECK(run.result.num_replicas == 1);
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{3});
  // The replica's peak batch: a rank's virtual engines summed (rank 0: 1 + 1), the largest rank.
  CHECK(run.result.max_running == 2);
}

TEST_CASE("Data-parallel ranks with stages lose no request and free every block", "[sim][pp][dp]") {
  const cost::PipelineCostModel p = pipeline(3);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto specs = random_workload(seed, 60, 400, 300, 100);
    const SimRun run = run_pp(p, specs, 2);
    INFO("seed " << seed);
    REQUIRE(run.ended.size() == specs.size());
    CHECK(run.num_end_calls == static_cast<int>(specs.size()));
    CHECK(run.result.metrics.completed + run.result.metrics.rejected() ==
          static_cast<std::int64_t>(specs.size()));
    REQUIRE(run.allocators.size() == 6);  // 2 ranks × 3 virtual engines
    // 60 requests in ~0.15 s: the balancer spreads them over every engine of both ranks.
    std::set<std::uint32_t> engines;
    for (const auto& [id, r] : run.ended) engines.insert(r.replica);
    CHECK(engines == std::set<std::uint32_t>{0, 1, 2, 3, 4, 5});
    for (const auto& a : run.allocators) CHECK(a->used_blocks_at_end == 0);
  }
}

TEST_CASE("vLLM V1 runs one scheduler over the stages: one batch, then the engine waits",
          "[sim][pp][v1]") {
  // R0 and R1 (100-token prompts, 2 tokens out) at 0, budget 512: V1's one scheduler puts both
  // prompts in one batch (stage 1 + 200 × 0.01 = 3 ms; 200 × 64 B = 12.8 us between stages):
  //   batch 1: s0 [0, 3], s1 [3.0128, 6.0128]                  -> first tokens at 6.0128 ms
  // Its next pass finds both in flight: the engine waits for batch 1 (no second batch).
  //   batch 2 (both decode, 1.2 ms a stage, 128 ns): s0 [6.0128, 7.2128], s1 [7.212928, 8.412928]
  const cost::PipelineCostModel p = pipeline(2);
  const SimRun run = run_pp(p, {spec(0, 0, 100, 2), spec(1, 0, 100, 2)}, 1, v1_options(512));
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.allocators.size() == 1);  // one KV cache: the whole of it
  for (std::uint64_t id : {0, 1}) {
    CHECK(run.ended.at(id).replica == 0);
    CHECK(run.ended.at(id).first_token_ns == 6012800);
    CHECK(run.ended.at(id).finish_ns == 8412928);
  }
  CHECK(run.result.metrics.num_steps == 2);
  CHECK(run.result.max_running == 2);
}

TEST_CASE("vLLM V1's batch queue pipelines a prompt's chunks over the stages", "[sim][pp][v1]") {
  // One 300-token prompt, 2 tokens out, budget 100: three chunks. Each is scheduled as soon as
  // the batch queue (2 steps) has room, its earlier chunks still in flight:
  //   chunk 1 at 0:      s0 [0, 2],           s1 [2.0064, 4.0064]
  //   chunk 2 at 0:      s0 [2, 4],           s1 [4.0064, 6.0064]   (queue full)
  //   chunk 3 at 4.0064: s0 [4.0064, 6.0064], s1 [6.0128, 8.0128]   -> first token 8.0128 ms
  // at 6.0064 the whole prompt is in flight: the engine waits for chunk 3.
  //   decode at 8.0128:  s0 [8.0128, 9.1128], s1 [9.112864, 10.212864]
  const cost::PipelineCostModel p = pipeline(2);
  const SimRun run = run_pp(p, {spec(0, 0, 300, 2)}, 1, v1_options(100));
  REQUIRE(run.result.metrics.completed == 1);
  CHECK(run.ended.at(0).first_token_ns == 8012800);
  CHECK(run.ended.at(0).finish_ns == 10212864);
  CHECK(run.result.metrics.num_steps == 4);
  // Without a batch queue (vLLM V0's one virtual engine per stage) the chunks go one at a
  // time, each paying both stages: 3 × 4.0064 ms to the first token.
  const SimRun v0 = run_pp(p, {spec(0, 0, 300, 2)}, 1, [] {
    sim::SimOptions o = small_options(sim::SchedulerKind::kChunkedPrefill);
    o.scheduler.max_num_batched_tokens = 100;
    return o;
  }());
  CHECK(v0.ended.at(0).first_token_ns == 3 * 4006400);
}

TEST_CASE("vLLM V1's engine, waiting for its batch in flight, sees arrivals when it ends",
          "[sim][pp][v1]") {
  // R0 (100 + 3 out) at 0, R1 (100 + 2 out) at 1 ms:
  //   batch 1 at 0 (R0's prompt): s0 [0, 2], s1 [2.0064, 4.0064]; then nothing else to run, so
  //   the engine waits for it: R1, arriving at 1 ms while stage 0 is busy... and then idle, is
  //   first scheduled at 4.0064 ms, with R0's decode: 1 + 1.0 + 0.1 = 2.1 ms a stage, 101 rows
  //   of 64 B between them (6.464 us):
  //   batch 2: s0 [4.0064, 6.1064], s1 [6.112864, 8.212864]  -> R0 token 2, R1 token 1
  //   batch 3 (both decode): s0 [8.212864, 9.412864], s1 [9.412992, 10.612992] -> both done
  const cost::PipelineCostModel p = pipeline(2);
  const SimRun run =
      run_pp(p, {spec(0, 0, 100, 3), spec(1, 1000 * kUs, 100, 2)}, 1, v1_options(512));
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.ended.at(0).first_token_ns == 4006400);
  CHECK(run.ended.at(1).first_scheduled_ns == 4006400);
  CHECK(run.ended.at(1).first_token_ns == 8212864);
  CHECK(run.ended.at(0).finish_ns == 10612992);
  CHECK(run.ended.at(1).finish_ns == 10612992);
}

TEST_CASE("vLLM V1's batch queue loses no request and frees every block under preemption",
          "[sim][pp][v1]") {
  const cost::PipelineCostModel p = pipeline(3);
  // 40 blocks of 16 tokens: prompts up to 400 tokens and outputs up to 300 preempt.
  const FakeAllocator::Options alloc{.num_blocks = 40};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto specs = random_workload(seed, 60, 400, 300, 100);
    const SimRun run = run_pp(p, specs, 1, v1_options(256), alloc);
    INFO("seed " << seed);
    REQUIRE(run.ended.size() == specs.size());
    CHECK(run.num_end_calls == static_cast<int>(specs.size()));
    CHECK(run.result.metrics.completed + run.result.metrics.rejected() ==
          static_cast<std::int64_t>(specs.size()));
    CHECK(run.result.metrics.preemptions_recompute > 0);
    REQUIRE(run.allocators.size() == 1);
    CHECK(run.allocators[0]->used_blocks_at_end == 0);
    for (const auto& [id, r] : run.ended) {
      if (r.state == sim::RequestState::kFinished) CHECK(r.generated == r.output_tokens);
    }
  }
}
