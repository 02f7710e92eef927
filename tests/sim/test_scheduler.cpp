// What each scheduling policy puts in a step, read from the batches the cost model is asked about.
#include <catch2/catch.hpp>

#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;
using sim::SchedulerKind;

namespace {

constexpr TimeNs kMs = kNsPerMs;
using Chunks = std::vector<std::pair<std::int64_t, std::int64_t>>;  // (tokens, cached) per prefill

Chunks prefills_of(const FixedCostModel::Seen& s) {
  Chunks out;
  for (const auto& p : s.prefills) out.emplace_back(p.num_tokens, p.num_cached_tokens);
  return out;
}

FixedCostModel recording_1ms() {
  FixedCostModel c;
  c.per_step_ns = kMs;
  c.record = true;
  return c;
}

}  // namespace

TEST_CASE("vllm: prefill steps come first and respect max_num_seqs", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options();
  opts.scheduler.max_num_seqs = 2;
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 10, 3), spec(1, 0, 20, 3), spec(2, 0, 30, 3)});
  REQUIRE(run.result.metrics.completed == 3);
  REQUIRE(cost.seen.size() >= 3);
  // Step 1: two prompts (the limit); the third waits for a free sequence slot.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{10, 0}, {20, 0}});
  CHECK(cost.seen[0].decode_contexts.empty());
  CHECK(cost.seen[0].num_sampling == 2);
  // Steps 2-3: decodes of both (contexts 10 and 20, then 11 and 21).
  CHECK(cost.seen[1].decode_contexts == std::vector<std::int64_t>{10, 20});
  CHECK(cost.seen[2].decode_contexts == std::vector<std::int64_t>{11, 21});
  // Step 4: both finished at t=3; R2 prefills.
  CHECK(prefills_of(cost.seen[3]) == Chunks{{30, 0}});
  CHECK(run.result.max_running == 2);
  CHECK(run.ended.at(2).first_scheduled_ns == 3 * kMs);
}

TEST_CASE("vllm: the token budget splits prompts over prefill steps", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options();
  opts.scheduler.max_model_len = 100;
  opts.scheduler.max_num_batched_tokens = 150;
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 60, 2), spec(1, 0, 60, 2), spec(2, 0, 60, 2)});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(prefills_of(cost.seen[0]) == Chunks{{60, 0}, {60, 0}});
  // Prefill first: the third prompt runs before the others decode.
  CHECK(prefills_of(cost.seen[1]) == Chunks{{60, 0}});
  CHECK(cost.seen[2].decode_contexts == std::vector<std::int64_t>{60, 60, 60});
}

TEST_CASE("vllm: a token budget below max_model_len is refused", "[sim]") {
  FixedCostModel cost;
  sim::SimOptions opts = small_options();
  opts.scheduler.max_num_batched_tokens = 512;  // max_model_len 2048
  CHECK_THROWS_WITH(run_sim(opts, {}, cost, {}), Catch::Contains("--max-num-batched-tokens"));
}

TEST_CASE("chunked-prefill: decodes first, then prefill chunks within the budget", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kChunkedPrefill);
  opts.scheduler.max_num_batched_tokens = 8;
  // R0: 4 prompt tokens, 5 out. R1 (20 prompt) arrives at 0.5 ms.
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 4, 5), spec(1, kMs / 2, 20, 2)});
  REQUIRE(run.result.metrics.completed == 2);
  // t=0: R0's whole prompt. t=1: R0 decodes (1 token), R1 gets the other 7.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{4, 0}});
  CHECK(cost.seen[1].decode_contexts == std::vector<std::int64_t>{4});
  CHECK(prefills_of(cost.seen[1]) == Chunks{{7, 0}});
  CHECK(cost.seen[1].num_sampling == 1);  // R1's chunk does not finish its prompt
  // t=2: R0 decode + 7 more of R1 (7 already cached). t=3: R0 decode + the last 6.
  CHECK(prefills_of(cost.seen[2]) == Chunks{{7, 7}});
  CHECK(prefills_of(cost.seen[3]) == Chunks{{6, 14}});
  CHECK(cost.seen[3].num_sampling == 2);
  CHECK(run.ended.at(1).first_token_ns == 4 * kMs);
}

TEST_CASE("vllm-v1: long_prefill_token_threshold caps each chunk", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 100;
  opts.scheduler.long_prefill_token_threshold = 16;
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 40, 1), spec(1, 0, 10, 1)});
  REQUIRE(run.result.metrics.completed == 2);
  // Both start in step 1 (16 + 10); R0 continues 16, then 8.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{16, 0}, {10, 0}});
  CHECK(prefills_of(cost.seen[1]) == Chunks{{16, 16}});
  CHECK(prefills_of(cost.seen[2]) == Chunks{{8, 32}});
}

TEST_CASE("chunked-prefill: a prefix hit moves the chunk past the cached blocks", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kChunkedPrefill);
  opts.scheduler.max_num_batched_tokens = 32;
  opts.enable_prefix_caching = true;
  trace::RequestSpec a = spec(0, 0, 64, 1);
  a.prefix_hashes = {11, 12, 13, 14};
  a.prefix_block_tokens = 16;
  trace::RequestSpec b = a;
  b.id = 1;
  b.arrival_ns = 10 * kMs;
  const auto run = run_sim(opts, {}, cost, {a, b});
  REQUIRE(run.result.metrics.completed == 2);
  // a: 32 + 32. b: its whole prompt is cached, but the last token is always computed, so the
  // hit is 3 blocks (48 tokens) and its one step computes the last 16.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{32, 0}});
  CHECK(prefills_of(cost.seen[1]) == Chunks{{32, 32}});
  CHECK(prefills_of(cost.seen[2]) == Chunks{{16, 48}});
}

TEST_CASE("static: a batch runs until its longest request, finished rows as padding", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kStatic);
  opts.scheduler.max_num_seqs = 2;
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 4, 2), spec(1, 0, 4, 5), spec(2, kMs / 2, 8, 2)});
  REQUIRE(run.result.metrics.completed == 3);
  // t=0 prefill R0+R1; t=1..5 decodes with two rows each (R0 done at t=2, padding after).
  CHECK(prefills_of(cost.seen[0]) == Chunks{{4, 0}, {4, 0}});
  for (int step = 1; step <= 4; ++step) {
    CHECK(cost.seen[static_cast<std::size_t>(step)].decode_contexts.size() == 2);
  }
  CHECK(cost.seen[2].decode_contexts == std::vector<std::int64_t>{5, 5});  // R1, padding R0
  CHECK(run.ended.at(0).finish_ns == 2 * kMs);
  CHECK(run.ended.at(1).finish_ns == 5 * kMs);
  // R2 could only start with the next batch.
  CHECK(run.ended.at(2).first_scheduled_ns == 5 * kMs);
  CHECK(prefills_of(cost.seen[5]) == Chunks{{8, 0}});
  CHECK(run.allocators.at(0)->used_blocks_at_end == 0);
}

TEST_CASE("static: finished rows keep their memory until the batch ends", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kStatic);
  FakeAllocator::Options alloc;
  alloc.num_blocks = 10;
  alloc.block_size = 16;
  const auto run = run_sim(opts, alloc, cost, {spec(0, 0, 16, 1), spec(1, 0, 16, 40)});
  REQUIRE(run.result.metrics.completed == 2);
  // R0 is done after the prefill, yet its block stays allocated for the 39 decode steps.
  const double held_slots = 16.0 * 40;  // R0's block × 40 ms
  CHECK(run.result.fraction.token_states * 160.0 * 40.0 >= held_slots);
  // The peak tells: R0's block is still held beside R1's 4 blocks (55 tokens) at the last step.
  CHECK(run.result.peak_used_bytes == 5 * 16 * alloc.bytes_per_slot);
}

TEST_CASE("vllm-v1: running requests in order, then waiting FCFS, within one token budget",
          "[sim][v1]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 10;
  // R0: 6 prompt, 3 out. R1: 30 prompt, 1 out. R2 (4 prompt, 2 out) arrives at 0.5 ms.
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 6, 3), spec(1, 0, 30, 1), spec(2, kMs / 2, 4, 2)});
  REQUIRE(run.result.metrics.completed == 3);
  REQUIRE(cost.seen.size() == 6);
  // t=0: R0's whole prompt, R1 the 4 left.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{6, 0}, {4, 0}});
  CHECK(cost.seen[0].num_sampling == 1);
  // t=1, t=2: R0 decodes, R1 takes the 9 left each time; R2 waits for budget.
  CHECK(cost.seen[1].decode_contexts == std::vector<std::int64_t>{6});
  CHECK(prefills_of(cost.seen[1]) == Chunks{{9, 4}});
  CHECK(cost.seen[2].decode_contexts == std::vector<std::int64_t>{7});
  CHECK(prefills_of(cost.seen[2]) == Chunks{{9, 13}});
  // t=3: R0 has finished; R1's last 8 tokens, then R2 admitted with the 2 left.
  CHECK(cost.seen[3].decode_contexts.empty());
  CHECK(prefills_of(cost.seen[3]) == Chunks{{8, 22}, {2, 0}});
  CHECK(cost.seen[3].num_sampling == 1);
  // t=4: R2's last 2; t=5: its decode.
  CHECK(prefills_of(cost.seen[4]) == Chunks{{2, 2}});
  CHECK(cost.seen[5].decode_contexts == std::vector<std::int64_t>{4});
  CHECK(run.ended.at(0).finish_ns == 3 * kMs);
  CHECK(run.ended.at(1).finish_ns == 4 * kMs);
  CHECK(run.ended.at(2).first_scheduled_ns == 3 * kMs);
  CHECK(run.ended.at(2).first_token_ns == 5 * kMs);
  CHECK(run.ended.at(2).finish_ns == 6 * kMs);
}

TEST_CASE("vllm-v1: a running prefill ahead of a decode may take the whole budget", "[sim][v1]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 10;
  opts.scheduler.long_prefill_token_threshold = 6;
  // Step 1: R0 (40 prompt) is capped at 6, R1 (2 prompt) takes 2 and starts decoding.
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 40, 1), spec(1, 0, 2, 4)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(prefills_of(cost.seen[0]) == Chunks{{6, 0}, {2, 0}});
  // Running order is R0, R1: R0's chunk (capped at 6) comes first, then R1's decode.
  CHECK(prefills_of(cost.seen[1]) == Chunks{{6, 6}});
  CHECK(cost.seen[1].decode_contexts == std::vector<std::int64_t>{2});
}

TEST_CASE("vllm-v1: out of blocks, the last running request is recomputed, nobody admitted",
          "[sim][v1]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 100;
  FakeAllocator::Options alloc;
  alloc.num_blocks = 4;
  alloc.block_size = 4;
  // Two 4-token prompts, 8 tokens out each, and a third request waiting behind them.
  const auto run =
      run_sim(opts, alloc, cost, {spec(0, 0, 4, 8), spec(1, 0, 4, 8), spec(2, kMs / 2, 4, 1)});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.result.metrics.preemptions_recompute == 1);
  CHECK(run.ended.at(0).num_preemptions == 0);
  CHECK(run.ended.at(1).num_preemptions == 1);
  // Both prefill at t=0 and decode into their second block; at t=5 R0's ninth token needs a
  // third block: R1, the last running request, is preempted and the step decodes R0 alone.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{4, 0}, {4, 0}});
  CHECK(cost.seen[4].decode_contexts == std::vector<std::int64_t>{7, 7});
  CHECK(cost.seen[5].decode_contexts == std::vector<std::int64_t>{8});
  CHECK(cost.seen[5].prefills.empty());
  // R0 ends at t=8 (its 8 tokens at t=1..8); R1 comes back first, recomputing its prompt and the
  // 5 tokens it had made, before R2.
  CHECK(run.ended.at(0).finish_ns == 8 * kMs);
  CHECK(prefills_of(cost.seen[8]).front() == std::pair<std::int64_t, std::int64_t>{9, 0});
  CHECK(run.ended.at(2).first_scheduled_ns > run.ended.at(1).first_scheduled_ns);
}

TEST_CASE("vllm-v1: steps up to the CUDA-graph size are padded to a capture size", "[sim][v1]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 64;
  opts.scheduler.cuda_graph_max_size = 16;
  // Step 1: 3 + 4 + 4 = 11 prompt tokens -> 16. Then three decodes -> 4. Then 2 decodes -> 2.
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 3, 2), spec(1, 0, 4, 3), spec(2, 0, 4, 3)});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(cost.seen[0].num_padding_tokens == 5);
  CHECK(cost.seen[1].num_padding_tokens == 1);
  CHECK(cost.seen[2].decode_contexts.size() == 2);
  CHECK(cost.seen[2].num_padding_tokens == 0);
  // A step above the largest capture size runs eagerly: no padding.
  FixedCostModel eager = recording_1ms();
  (void)run_sim(opts, {}, eager, {spec(0, 0, 17, 1)});
  CHECK(eager.seen[0].num_padding_tokens == 0);
}

TEST_CASE("vllm-v1 FULL_DECODE_ONLY: steps with a prefill run eagerly, decodes under graphs",
          "[sim][v1]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 64;
  opts.scheduler.cuda_graph_max_size = 16;
  opts.scheduler.cuda_graph_mode = sim::CudaGraphMode::kFullDecodeOnly;
  // Step 1 prefills 11 tokens: eager, unpadded. Then three decodes, padded to 4, then two.
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 3, 2), spec(1, 0, 4, 3), spec(2, 0, 4, 3)});
  REQUIRE(run.result.metrics.completed == 3);
  REQUIRE(cost.seen.size() >= 3);
  CHECK(cost.seen[0].eager);
  CHECK(cost.seen[0].num_padding_tokens == 0);
  CHECK_FALSE(cost.seen[1].eager);
  CHECK(cost.seen[1].num_padding_tokens == 1);
  // --enforce-eager: every step.
  FixedCostModel none = recording_1ms();
  opts.scheduler.cuda_graph_mode = sim::CudaGraphMode::kNone;
  (void)run_sim(opts, {}, none, {spec(0, 0, 3, 3)});
  for (const auto& s : none.seen) {
    CHECK(s.eager);
    CHECK(s.num_padding_tokens == 0);
  }
}

TEST_CASE("cuda_graph_padded_tokens: 1, 2, 4, then multiples of 8 up to the largest size",
          "[sim][v1]") {
  using sim::cuda_graph_padded_tokens;
  CHECK(cuda_graph_padded_tokens(1, 512, 8192) == 1);
  CHECK(cuda_graph_padded_tokens(3, 512, 8192) == 4);
  CHECK(cuda_graph_padded_tokens(5, 512, 8192) == 8);
  CHECK(cuda_graph_padded_tokens(9, 512, 8192) == 16);
  CHECK(cuda_graph_padded_tokens(505, 512, 8192) == 512);
  CHECK(cuda_graph_padded_tokens(513, 512, 8192) == 513);  // eager
  CHECK(cuda_graph_padded_tokens(9, 12, 8192) == 9);       // sizes 1, 2, 4, 8
  CHECK(cuda_graph_padded_tokens(9, 512, 12) == 9);        // no size above the token budget
  CHECK(cuda_graph_padded_tokens(7, 0, 8192) == 7);        // no graphs
  CHECK(sim::default_cuda_graph_max_size(1024) == 512);
  CHECK(sim::default_cuda_graph_max_size(100) == 200);
}

TEST_CASE("chunked-prefill: the threshold alone caps nothing; prefix caching cuts chunks to blocks",
          "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kChunkedPrefill);
  opts.scheduler.max_num_batched_tokens = 100;
  opts.scheduler.long_prefill_token_threshold = 16;  // only classifies (partial prefills off)
  auto run = run_sim(opts, {}, cost, {spec(0, 0, 40, 1), spec(1, 0, 70, 1)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(prefills_of(cost.seen[0]) == Chunks{{40, 0}, {60, 0}});
  CHECK(prefills_of(cost.seen[1]) == Chunks{{10, 60}});
  // Prefix caching on (blocks of 16): R1's partial chunk is cut from 60 to 48 tokens; a chunk
  // that finishes its prompt is not cut.
  FixedCostModel aligned = recording_1ms();
  opts.enable_prefix_caching = true;
  opts.block_size = 16;
  run = run_sim(opts, {}, aligned, {spec(0, 0, 40, 1), spec(1, 0, 70, 1)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(prefills_of(aligned.seen[0]) == Chunks{{40, 0}, {48, 0}});
  CHECK(prefills_of(aligned.seen[1]) == Chunks{{22, 48}});
}

TEST_CASE("chunked-prefill: partial prefills split the budget, long ones wait their turn",
          "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kChunkedPrefill);
  opts.scheduler.max_num_batched_tokens = 100;
  opts.scheduler.max_num_partial_prefills = 2;
  opts.scheduler.max_long_partial_prefills = 1;
  opts.scheduler.long_prefill_token_threshold = 50;
  // R0 and R1 are long (300 prompt tokens), R2 short (30 tokens, 1 out); all arrive at once.
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 300, 1), spec(1, 0, 300, 1), spec(2, 0, 30, 1)});
  REQUIRE(run.result.metrics.completed == 3);
  // Step 1: two prefills can run (R0, and R2 which passes the second long one): 50 tokens each
  // at most. R1 keeps its place.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{50, 0}, {30, 0}});
  // Steps 2-3: R0 alone (R1 is long while R0 is): the whole budget.
  CHECK(prefills_of(cost.seen[1]) == Chunks{{100, 50}});
  CHECK(prefills_of(cost.seen[2]) == Chunks{{100, 150}});
  // Step 4: R0's last 50 are no longer long, so R1 starts beside it; 50 each.
  CHECK(prefills_of(cost.seen[3]) == Chunks{{50, 250}, {50, 0}});
  CHECK(run.ended.at(2).finish_ns == 1 * kMs);
  CHECK(run.ended.at(1).first_scheduled_ns == 3 * kMs);
}

TEST_CASE("partial prefills: the default threshold, and who may use them", "[sim]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kChunkedPrefill);
  opts.scheduler.max_model_len = 1000;  // long: more than 4% = 40 tokens
  opts.scheduler.max_num_batched_tokens = 100;
  opts.scheduler.max_num_partial_prefills = 2;
  const auto run = run_sim(opts, {}, cost, {spec(0, 0, 120, 1), spec(1, 0, 120, 1)});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(prefills_of(cost.seen[0]) == Chunks{{100, 0}});  // R1 (long) waits for R0's last 20
  CHECK(prefills_of(cost.seen[1]) == Chunks{{20, 100}, {50, 0}});
  opts.scheduler.kind = SchedulerKind::kVllmV1;
  CHECK_THROWS_WITH(run_sim(opts, {}, cost, {}), Catch::Contains("--max-num-partial-prefills"));
  opts.scheduler.kind = SchedulerKind::kChunkedPrefill;
  opts.scheduler.max_long_partial_prefills = 3;
  CHECK_THROWS_WITH(run_sim(opts, {}, cost, {}),
                    Catch::Contains("--max-long-partial-prefills: expected at most"));
}

TEST_CASE("A warm prefix cache holds the warm-up prompts; the warm-up counts in no statistic",
          "[sim][warm]") {
  FixedCostModel cost = recording_1ms();
  sim::SimOptions opts = small_options(SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 256;
  opts.enable_prefix_caching = true;
  opts.warm_prefix_cache = true;
  opts.block_size = 16;
  auto with_hashes = [](trace::RequestSpec s, std::uint64_t base) {
    s.prefix_block_tokens = 16;
    for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(s.prompt_tokens / 16); ++k)
      s.prefix_hashes.push_back(base + k);
    return s;
  };
  const std::vector<trace::RequestSpec> specs = {with_hashes(spec(0, 0, 64, 1), 100),
                                                 with_hashes(spec(1, 0, 40, 1), 200)};
  VectorReader warm(specs);
  sim::SimSetup setup;
  setup.options = opts;
  setup.cost_model = &cost;
  setup.make_allocator = [] { return std::make_unique<FakeAllocator>(FakeAllocator::Options{}); };
  setup.warm_prefixes = &warm;
  VectorReader reader(specs);
  const sim::SimResult r = sim::simulate(setup, reader);
  REQUIRE(r.metrics.completed == 2);
  // R0: 3 of its 4 blocks (the last token is always computed); R1: both full blocks.
  CHECK(prefills_of(cost.seen[0]) == Chunks{{16, 48}, {8, 32}});
  CHECK(r.prefix_query_tokens == 104);  // the two admissions of the run only
  CHECK(r.prefix_hit_tokens == 80);
  // Without the warm-up reader the cache starts cold.
  FixedCostModel cold = recording_1ms();
  setup.cost_model = &cold;
  setup.warm_prefixes = nullptr;
  VectorReader again(specs);
  (void)sim::simulate(setup, again);
  CHECK(prefills_of(cold.seen[0]) == Chunks{{64, 0}, {40, 0}});

  // Two data-parallel ranks keep a cache each; warm-up prompt k goes to rank k mod 2. The run
  // sends R0 to rank 0 and R1 to rank 1: warmed in that order both hit, in the other order both
  // miss.
  setup.cost_model = &cost;
  setup.data_parallel = {.size = 2, .lockstep = false};
  VectorReader warm_in_order(specs);
  setup.warm_prefixes = &warm_in_order;
  VectorReader run_dp(specs);
  CHECK(sim::simulate(setup, run_dp).prefix_hit_tokens == 80);
  VectorReader warm_swapped({specs[1], specs[0]});
  setup.warm_prefixes = &warm_swapped;
  VectorReader run_dp_again(specs);
  CHECK(sim::simulate(setup, run_dp_again).prefix_hit_tokens == 0);
}
