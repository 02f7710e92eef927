// Hand-checked scenarios: tiny allocators, a fixed-cost model, exact times.
#include <memory>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/rng.h"
#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;
using sim::RequestState;
using sim::SchedulerKind;

namespace {

constexpr TimeNs kMs = kNsPerMs;
constexpr TimeNs kUs = kNsPerUs;

FixedCostModel cost_1ms_10us_100us() {
  FixedCostModel c;
  c.per_step_ns = 1 * kMs;
  c.per_prefill_token_ns = 10 * kUs;
  c.per_decode_ns = 100 * kUs;
  return c;
}

// Four requests of 10 prompt / 3 output tokens, all due at 0.
std::vector<trace::RequestSpec> four_at_zero() {
  return {spec(0, 0, 10, 3), spec(1, 0, 10, 3), spec(2, 0, 10, 3), spec(3, 0, 10, 3)};
}

}  // namespace

TEST_CASE("Two requests on one replica: exact TTFT, TPOT, ITL, E2E and queueing", "[sim]") {
  // Step = 1 ms + 10 us per prefill token + 100 us per decode row.
  //   t=0     R0 (100 prompt, 3 out) prefills alone: 1 + 1.0 = 2 ms       -> R0 token 1 at 2.0
  //   t=0.5   R1 (50 prompt, 2 out) arrives and waits
  //   t=2.0   prefill first: R1 alone, 1 + 0.5 = 1.5 ms                   -> R1 token 1 at 3.5
  //   t=3.5   decode R0 + R1: 1 + 0.2 = 1.2 ms                            -> both at 4.7, R1 done
  //   t=4.7   decode R0: 1.1 ms                                           -> R0 done at 5.8
  FixedCostModel cost = cost_1ms_10us_100us();
  FakeAllocator::Options alloc;  // 100 blocks of 16 slots
  const auto run =
      run_sim(small_options(), alloc, cost, {spec(0, 0, 100, 3), spec(1, 500 * kUs, 50, 2)});
  const sim::Metrics& m = run.result.metrics;
  REQUIRE(m.completed == 2);
  CHECK(m.rejected() == 0);
  CHECK(run.result.duration_ns == 5800 * kUs);

  const sim::Request& r0 = run.ended.at(0);
  const sim::Request& r1 = run.ended.at(1);
  CHECK(r0.state == RequestState::kFinished);
  CHECK(r0.first_scheduled_ns == 0);
  CHECK(r0.first_token_ns == 2000 * kUs);
  CHECK(r0.finish_ns == 5800 * kUs);
  CHECK(r1.first_scheduled_ns == 2000 * kUs);
  CHECK(r1.first_token_ns == 3500 * kUs);
  CHECK(r1.finish_ns == 4700 * kUs);

  CHECK(m.ttft.percentile(50) == 2000 * kUs);  // TTFTs: 2.0 and 3.0 ms
  CHECK(m.ttft.max() == 3000 * kUs);
  CHECK(m.ttft.mean() == 2500 * kUs);
  // TPOT: R0 (5.8 - 2.0) / 2 = 1.9 ms; R1 (4.2 - 3.0) / 1 = 1.2 ms.
  CHECK(m.tpot.min() == 1200 * kUs);
  CHECK(m.tpot.max() == 1900 * kUs);
  // ITL: R0 2.7 and 1.1 ms; R1 1.2 ms.
  CHECK(m.itl.count() == 3);
  CHECK(m.itl.min() == 1100 * kUs);
  CHECK(m.itl.percentile(50) == 1200 * kUs);
  CHECK(m.itl.max() == 2700 * kUs);
  CHECK(m.e2e.min() == 4200 * kUs);
  CHECK(m.e2e.max() == 5800 * kUs);
  CHECK(m.queue.min() == 0);
  CHECK(m.queue.max() == 1500 * kUs);
  CHECK(m.output_tokens == 5);
  CHECK(m.prompt_tokens == 150);
  CHECK(m.num_steps == 4);
  CHECK(m.num_sequence_steps == 5);  // 1 + 1 + 2 + 1 rows

  // Memory (16-slot blocks, capacity 1,600 slots), slots held × ms:
  //   [0, 2)     R0 100 tokens in 7 blocks (final 103): states 100, reserv. 3, internal 9
  //   [2, 3.5)   + R1 50 in 4 blocks (final 52):        states 150, reserv. 5, internal 21
  //   [3.5, 4.7) both grew by one:                      states 152, reserv. 3, internal 21
  //   [4.7, 5.8) R0 alone with 102:                     states 102, reserv. 1, internal 9
  const double total = 1600.0 * 5.8;
  const auto& f = run.result.fraction;
  CHECK(f.token_states == Approx((100 * 2.0 + 150 * 1.5 + 152 * 1.2 + 102 * 1.1) / total));
  CHECK(f.reservation == Approx((3 * 2.0 + 5 * 1.5 + 3 * 1.2 + 1 * 1.1) / total));
  CHECK(f.internal_fragmentation == Approx((9 * 2.0 + 21 * 1.5 + 21 * 1.2 + 9 * 1.1) / total));
  CHECK(f.external_fragmentation == 0.0);
  CHECK(f.token_states + f.reservation + f.internal_fragmentation + f.external_fragmentation +
            f.free ==
        Approx(1.0).epsilon(1e-12));
  CHECK(run.result.peak_used_bytes == 11 * 16 * 1000);
  CHECK(run.result.capacity_bytes == 1600 * 1000);
  CHECK(run.result.mean_running == Approx((1 * 2.0 + 2 * 1.5 + 2 * 1.2 + 1 * 1.1) / 5.8));
  CHECK(run.result.max_running == 2);
  CHECK(run.result.saturation == sim::SaturationVerdict::kStable);
  CHECK(run.allocators.at(0)->used_blocks_at_end == 0);
}

TEST_CASE("A time limit stops the run and counts what is still in flight", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.time_limit_ns = 5 * kMs + 500 * kUs;
  // R0 finishes at 3 ms; R1 (100 tokens out) runs past the limit; R2 arrives after it.
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 10, 3), spec(1, 0, 10, 100), spec(2, 9 * kMs, 10, 3)});
  CHECK(run.result.hit_time_limit);
  CHECK(run.result.duration_ns == opts.time_limit_ns);
  CHECK(run.result.metrics.arrived == 2);
  CHECK(run.result.metrics.completed == 1);
  // R1 in flight, and R2, read ahead for its arrival after the limit: every request read is
  // completed, rejected or unfinished.
  CHECK(run.result.requests_unfinished == 2);
  CHECK(run.ended.at(1).state == RequestState::kDecode);
  CHECK(run.ended.count(2) == 0);
}

TEST_CASE("Bad requests from a workload are errors", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  CHECK_THROWS_AS(run_sim(small_options(), {}, cost, {spec(0, 0, 0, 3)}), Error);
  CHECK_THROWS_AS(run_sim(small_options(), {}, cost, {spec(0, 0, 5, 0)}), Error);
  CHECK_THROWS_WITH(run_sim(small_options(), {}, cost, {spec(0, 10, 5, 3), spec(1, 5, 5, 3)}),
                    Catch::Contains("arrivals must not go backwards"));
}

TEST_CASE("An empty workload gives an empty, well-formed result", "[sim]") {
  FixedCostModel cost;
  const auto run = run_sim(small_options(), {}, cost, {});
  CHECK(run.result.metrics.arrived == 0);
  CHECK(run.result.duration_ns == 0);
  CHECK(run.result.fraction.free == 1.0);
}

TEST_CASE("Prefix hashes become allocator-size block ids", "[sim]") {
  trace::RequestSpec s = spec(0, 0, 40, 1);
  s.prefix_hashes = {7, 9};
  s.prefix_block_tokens = 16;
  std::vector<std::uint64_t> ids;
  sim::expand_prefix_blocks(s, 8, ids);
  // Tokens 0..31 are hashed (2 × 16); full 8-token blocks inside both the prompt and the hashed
  // part: 4. Blocks 0, 1 lie in prefix block 0; blocks 2, 3 in prefix block 1.
  REQUIRE(ids.size() == 4);
  CHECK(ids[0] == hash_combine(7, 0));
  CHECK(ids[1] == hash_combine(7, 1));
  CHECK(ids[2] == hash_combine(9, 2));
  CHECK(ids[3] == hash_combine(9, 3));
  sim::expand_prefix_blocks(s, 32, ids);
  CHECK(ids == std::vector<std::uint64_t>{hash_combine(9, 0)});
  s.prefix_hashes.clear();
  sim::expand_prefix_blocks(s, 8, ids);
  CHECK(ids.empty());
}

TEST_CASE("Prefix-cache hits skip prefill compute", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.record = true;
  sim::SimOptions opts = small_options();
  opts.enable_prefix_caching = true;
  opts.block_size = 16;
  trace::RequestSpec a = spec(0, 0, 100, 2);
  a.prefix_hashes = {1, 2, 3, 4};  // 4 × 32 tokens
  a.prefix_block_tokens = 32;
  trace::RequestSpec b = a;
  b.id = 1;
  b.arrival_ns = 10 * kMs;
  b.prefix_hashes = {1, 2, 5, 6};  // shares the first 64 tokens
  const auto run = run_sim(opts, {}, cost, {a, b});
  REQUIRE(run.result.metrics.completed == 2);
  // Prompt tokens of both admissions looked up; b finds blocks 0-3 (64 tokens) cached.
  CHECK(run.result.prefix_query_tokens == 200);
  CHECK(run.result.prefix_hit_tokens == 64);
  CHECK(run.ended.at(1).cached_tokens == 64);
  std::vector<std::pair<std::int64_t, std::int64_t>> prefills;
  for (const auto& s : cost.seen) {
    for (const auto& p : s.prefills) prefills.emplace_back(p.num_tokens, p.num_cached_tokens);
  }
  CHECK(prefills == std::vector<std::pair<std::int64_t, std::int64_t>>{{100, 0}, {36, 64}});
}

TEST_CASE("The saturation verdict tells a stable load from a growing queue", "[sim]") {
  // Requests served one at a time, 5 steps of 1 ms each.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.scheduler.max_num_seqs = 1;  // one at a time: service time 1 ms × 5 tokens
  std::vector<trace::RequestSpec> light, heavy;
  for (int i = 0; i < 300; ++i) {
    light.push_back(spec(static_cast<std::uint64_t>(i), i * 10 * kMs, 10, 5));  // 50% busy
    heavy.push_back(spec(static_cast<std::uint64_t>(i), i * 4 * kMs, 10, 5));   // 125% busy
  }
  const auto stable = run_sim(opts, {}, cost, light);
  CHECK(stable.result.saturation == sim::SaturationVerdict::kStable);
  CHECK(stable.result.queue_delay_slope == Approx(0.0).margin(1e-9));
  const auto growing = run_sim(opts, {}, cost, heavy);
  CHECK(growing.result.saturation == sim::SaturationVerdict::kQueueGrowing);
  // Service takes 5 ms per 4 ms of arrivals: the delay grows by 1/4 s per second.
  CHECK(growing.result.queue_delay_slope == Approx(0.25).epsilon(0.01));
}

TEST_CASE("Goodput counts requests within every per-request SLO target", "[sim]") {
  // The two-request scenario: TTFT 2.0 / 3.0 ms, TPOT 1.9 / 1.2 ms, E2E 5.8 / 4.2 ms.
  struct Case {
    TimeNs ttft, tpot, e2e;
    std::int64_t good;
  };
  const Case cases[] = {{0, 0, 0, 2},
                        {2 * kMs, 0, 0, 1},               // B's 3.0 ms TTFT misses
                        {0, 1500 * kUs, 0, 1},            // A's 1.9 ms TPOT misses
                        {0, 0, 5 * kMs, 1},               // A's 5.8 ms E2E misses
                        {2 * kMs, 0, 5 * kMs, 0},         // each misses one
                        {3 * kMs, 2 * kMs, 6 * kMs, 2}};  // targets are inclusive
  for (const Case& c : cases) {
    sim::SimOptions opts = small_options();
    opts.slo.ttft_ns = c.ttft;
    opts.slo.tpot_ns = c.tpot;
    opts.slo.e2e_ns = c.e2e;
    FixedCostModel cost = cost_1ms_10us_100us();
    const auto run = run_sim(opts, {}, cost, {spec(0, 0, 100, 3), spec(1, 500 * kUs, 50, 2)});
    INFO("ttft " << c.ttft << " tpot " << c.tpot << " e2e " << c.e2e);
    CHECK(run.result.metrics.slo_good == c.good);
  }
}

TEST_CASE("A closed loop sends the next request when one ends, 1 ns after", "[sim][closed-loop]") {
  // 1 ms steps; four requests of 10 prompt / 3 output tokens, all due at 0, two clients:
  //   t=0  R0, R1 arrive (R2 held); one prefill step      -> first tokens at 1 ms
  //   t=1, t=2 decode                                     -> R0, R1 finish at 3 ms
  //   t=3+1ns  R2 and R3 go out to an idle engine; same timeline -> finish at 6 ms + 1 ns
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.max_concurrency = 2;
  const auto run = run_sim(opts, {}, cost, four_at_zero());
  REQUIRE(run.result.metrics.completed == 4);
  CHECK(run.result.duration_ns == 6 * kMs + 1);
  CHECK(run.ended.at(1).arrival_ns == 0);
  CHECK(run.ended.at(2).arrival_ns == 3 * kMs + 1);
  CHECK(run.ended.at(3).arrival_ns == 3 * kMs + 1);
  CHECK(run.ended.at(3).finish_ns == 6 * kMs + 1);
  // TTFT counts from the send, not from the stream's time 0: every request waits 1 ms.
  CHECK(run.result.metrics.ttft.min() == kMs);
  CHECK(run.result.metrics.ttft.max() == kMs);
  CHECK(run.result.metrics.queue.max() == 0);
  CHECK(run.result.max_running == 2);

  // Open loop, same requests: all four run at once.
  sim::SimOptions open = small_options();
  const auto all = run_sim(open, {}, cost, four_at_zero());
  CHECK(all.result.duration_ns == 3 * kMs);
  CHECK(all.result.max_running == 4);
}

TEST_CASE("The front end's latency delays each request's join, counted in TTFT and E2E only",
          "[sim][closed-loop]") {
  // The test above with a 0.5 ms front end: R0, R1 sent at 0 join at 0.5 ms; prefill to 1.5,
  // decodes to 3.5 ms. R2, R3 sent at 3.5 ms + 1 ns (the clients are free when the answers
  // end, not when the next request reaches the engine) join at 4 ms + 1 ns, finish at 7 ms + 1.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.max_concurrency = 2;
  opts.frontend_latency_ns = 500 * kUs;
  const auto run = run_sim(opts, {}, cost, four_at_zero());
  REQUIRE(run.result.metrics.completed == 4);
  CHECK(run.result.duration_ns == 7 * kMs + 1);
  CHECK(run.ended.at(0).first_scheduled_ns == 500 * kUs);
  CHECK(run.ended.at(2).arrival_ns == 3500 * kUs + 1);
  CHECK(run.ended.at(3).first_scheduled_ns == 4 * kMs + 1);
  CHECK(run.ended.at(3).finish_ns == 7 * kMs + 1);
  // TTFT and E2E grow by the latency; the tokens after the first keep their 1 ms.
  CHECK(run.result.metrics.ttft.min() == 1500 * kUs);
  CHECK(run.result.metrics.ttft.max() == 1500 * kUs);
  CHECK(run.result.metrics.e2e.max() == 3500 * kUs);
  CHECK(run.result.metrics.tpot.min() == kMs);
  CHECK(run.result.metrics.tpot.max() == kMs);

  // A time limit inside the front end: the requests sent are unfinished, none lost.
  sim::SimOptions cut = small_options();
  cut.frontend_latency_ns = 500 * kUs;
  cut.time_limit_ns = 300 * kUs;
  const auto early = run_sim(cut, {}, cost, {spec(0, 0, 10, 3), spec(1, 100 * kUs, 10, 3)});
  CHECK(early.result.hit_time_limit);
  CHECK(early.result.metrics.arrived == 2);
  CHECK(early.result.metrics.completed == 0);
  CHECK(early.result.requests_unfinished == 2);
  CHECK(early.ended.size() == 2);
}

TEST_CASE("A closed loop's next request misses the step the engine starts as the last one ends",
          "[sim][closed-loop]") {
  // Two clients, 1 ms steps. R0 (2 outputs) and R1 (5 outputs) prefill at 0; R0 ends at 2 ms,
  // when the engine starts R1's next decode. R2 goes out 1 ns later and waits for the step at
  // 3 ms: first token at 4 ms, TTFT 2 ms - 1 ns (a zero-time client would have had 1 ms).
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.max_concurrency = 2;
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 10, 2), spec(1, 0, 10, 5), spec(2, 0, 10, 2)});
  REQUIRE(run.result.metrics.completed == 3);
  const sim::Request& r2 = run.ended.at(2);
  CHECK(r2.arrival_ns == 2 * kMs + 1);
  CHECK(r2.first_token_ns == 4 * kMs);
  CHECK(r2.finish_ns == 5 * kMs);
}

TEST_CASE("A closed loop with a rate: a request goes at its own time when a client is free",
          "[sim][closed-loop]") {
  // One client. R0 at 0 ends at 3 ms; R1 is due at 5 ms (client idle): it goes at 5. R2 is due
  // at 6 ms, while R1 runs until 8 ms: it goes 1 ns after.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.max_concurrency = 1;
  const auto run = run_sim(opts, {}, cost,
                           {spec(0, 0, 10, 3), spec(1, 5 * kMs, 10, 3), spec(2, 6 * kMs, 10, 3)});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.ended.at(1).arrival_ns == 5 * kMs);
  CHECK(run.ended.at(2).arrival_ns == 8 * kMs + 1);
  CHECK(run.result.duration_ns == 11 * kMs + 1);
  CHECK(run.result.max_running == 1);
}

namespace {

trace::RequestSpec turn(std::uint64_t id, TimeNs arrival, const char* session) {
  trace::RequestSpec s = spec(id, arrival, 10, 3);
  s.session_id = session;
  return s;
}

FixedCostModel one_ms_steps() {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  return cost;
}

sim::SimOptions serial_session_options() {
  sim::SimOptions opts = small_options();
  opts.serial_sessions = true;
  return opts;
}

}  // namespace

TEST_CASE("Serial sessions: a conversation's next turn is sent when the turn before it ends",
          "[sim][sessions]") {
  // 1 ms steps (vLLM V0 order: a prefill step runs alone). R0 (conversation a) at 0; R1 (a) and
  // R2 (b) due at 1 ms, when R0 has its first token:
  //   t=0  R0 prefills                              -> token 1 at 1 ms
  //   t=1  R2 sent and prefills alone; R1 waits for R0 -> R2 token 1 at 2 ms
  //   t=2, t=3  R0 and R2 decode                    -> both end at 4 ms
  //   t=4 + 1 ns  R1 sent to an idle engine: prefill, two decodes -> ends at 7 ms + 1 ns
  const FixedCostModel cost = one_ms_steps();
  const sim::SimOptions opts = serial_session_options();
  const std::vector<trace::RequestSpec> specs = {turn(0, 0, "a"), turn(1, kMs, "a"),
                                                 turn(2, kMs, "b")};
  const auto run = run_sim(opts, {}, cost, specs);
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.ended.at(0).finish_ns == 4 * kMs);
  CHECK(run.ended.at(2).arrival_ns == kMs);  // another conversation's turn goes on time
  CHECK(run.ended.at(2).finish_ns == 4 * kMs);
  const sim::Request& r1 = run.ended.at(1);
  CHECK(r1.arrival_ns == 4 * kMs + 1);
  CHECK(r1.first_token_ns == 5 * kMs + 1);  // TTFT counts from the send: 1 ms
  CHECK(r1.finish_ns == 7 * kMs + 1);
  CHECK(run.result.duration_ns == 7 * kMs + 1);
  CHECK(run.result.metrics.ttft.max() == kMs);

  // Without serial sessions the ids change nothing: R1 goes at 1 ms, with R2.
  sim::SimOptions free = small_options();
  const auto open = run_sim(free, {}, cost, specs);
  CHECK(open.ended.at(1).arrival_ns == kMs);

  // A turn due after its conversation's previous one has ended goes at its own time.
  const auto late = run_sim(opts, {}, cost, {turn(0, 0, "a"), turn(1, 10 * kMs, "a")});
  CHECK(late.ended.at(1).arrival_ns == 10 * kMs);

  // Requests without a session id are never held.
  const auto none = run_sim(opts, {}, cost, four_at_zero());
  CHECK(none.result.max_running == 4);
}

TEST_CASE("Serial sessions: a turn still waiting at the time limit is unfinished, not lost",
          "[sim][sessions]") {
  const FixedCostModel cost = one_ms_steps();
  sim::SimOptions opts = serial_session_options();
  opts.time_limit_ns = 2 * kMs;
  const auto run = run_sim(opts, {}, cost, {turn(0, 0, "a"), turn(1, 0, "a"), turn(2, 0, "a")});
  CHECK(run.result.hit_time_limit);
  CHECK(run.result.metrics.arrived == 1);
  CHECK(run.result.metrics.completed == 0);
  CHECK(run.result.requests_unfinished == 3);
  // Every request is reported: the one in flight, and the two turns never sent (waiting, no
  // engine, no send time).
  REQUIRE(run.num_end_calls == 3);
  CHECK(run.ended.at(0).replica == 0);
  for (const std::uint64_t id : {1, 2}) {
    const sim::Request& r = run.ended.at(id);
    CHECK(r.state == RequestState::kWaiting);
    CHECK(r.replica == sim::Request::kNoReplica);
    CHECK(r.arrival_ns == -1);
    CHECK(r.first_scheduled_ns == -1);
    CHECK(r.prompt_tokens == 10);
  }
}

TEST_CASE("Serial sessions: an idle conversation's record goes to the next one to start",
          "[sim][sessions]") {
  // a's first turn ends at 3 ms, leaving a idle; b starts at 4 ms (on a's old record). a's
  // second turn at 5 ms finds a idle and goes on time, not behind b's turn; b's second turn at
  // 5 ms waits for b's first. Then c and a again, each idle: on time.
  const FixedCostModel cost = one_ms_steps();
  const sim::SimOptions opts = serial_session_options();
  const auto run = run_sim(opts, {}, cost,
                           {turn(0, 0, "a"), turn(1, 4 * kMs, "b"), turn(2, 5 * kMs, "a"),
                            turn(3, 5 * kMs, "b"), turn(4, 30 * kMs, "c"), turn(5, 31 * kMs, "a")});
  REQUIRE(run.result.metrics.completed == 6);
  CHECK(run.ended.at(0).finish_ns == 3 * kMs);
  CHECK(run.ended.at(1).arrival_ns == 4 * kMs);
  CHECK(run.ended.at(2).arrival_ns == 5 * kMs);
  CHECK(run.ended.at(3).arrival_ns == run.ended.at(1).finish_ns + 1);
  CHECK(run.ended.at(4).arrival_ns == 30 * kMs);
  CHECK(run.ended.at(5).arrival_ns == 31 * kMs);
}

TEST_CASE("Serial sessions in a closed loop: a turn waiting for its conversation holds a client",
          "[sim][sessions][closed-loop]") {
  // Two clients, all due at 0. R0 (a) goes; R1 (a) takes the second client and waits for R0;
  // R2 (b) waits for a client. R0 ends at 3 ms: R1 goes 1 ns later, which frees no client, and
  // R2 goes then too (its client freed by R0's end).
  const FixedCostModel cost = one_ms_steps();
  sim::SimOptions opts = serial_session_options();
  opts.max_concurrency = 2;
  const auto run = run_sim(opts, {}, cost, {turn(0, 0, "a"), turn(1, 0, "a"), turn(2, 0, "b")});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.ended.at(0).finish_ns == 3 * kMs);
  CHECK(run.ended.at(1).arrival_ns == 3 * kMs + 1);
  CHECK(run.ended.at(2).arrival_ns == 3 * kMs + 1);
  CHECK(run.result.max_running == 2);
}

TEST_CASE("Async scheduling: a request that arrives during a step joins the step after next",
          "[sim][async]") {
  // vLLM V1's async scheduling decides step k+1 when it launches step k. 1 ms steps; R0
  // (10 prompt, 4 outputs) at 0, R1 (10, 2) at 0.5 ms, during R0's prefill step.
  //   sync:  R1 is in the step at 1 ms -> first token 2 ms
  //   async: the step at 1 ms was decided at 0 -> R1 runs from 2 ms, first token 3 ms
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  const std::vector<trace::RequestSpec> specs = {spec(0, 0, 10, 4), spec(1, 500 * kUs, 10, 2)};
  sim::SimOptions sync = small_options(sim::SchedulerKind::kVllmV1);
  sim::SimOptions async = sync;
  async.scheduler.async_scheduling = true;
  const auto a = run_sim(sync, {}, cost, specs);
  const auto b = run_sim(async, {}, cost, specs);
  REQUIRE(a.result.metrics.completed == 2);
  REQUIRE(b.result.metrics.completed == 2);
  CHECK(a.ended.at(1).first_token_ns == 2 * kMs);
  CHECK(b.ended.at(1).first_token_ns == 3 * kMs);
  CHECK(b.ended.at(1).finish_ns == 4 * kMs);
  // R0 is not delayed; the waiting integral counts R1 from its arrival either way.
  CHECK(b.ended.at(0).finish_ns == 4 * kMs);
  CHECK(b.result.mean_waiting > a.result.mean_waiting);

  // An engine with nothing to run takes a request as it arrives: R0 (1 output) ends at 1 ms,
  // R1 arrives at 1.5 ms to an idle engine and has its first token at 2.5 ms.
  const std::vector<trace::RequestSpec> idle = {spec(0, 0, 10, 1), spec(1, 1500 * kUs, 10, 2)};
  const auto c = run_sim(async, {}, cost, idle);
  REQUIRE(c.result.metrics.completed == 2);
  CHECK(c.ended.at(1).first_token_ns == 2500 * kUs);
}

TEST_CASE("Async scheduling loses no request under load", "[sim][async]") {
  // 200 requests, one every 0.3 ms against 1 ms steps and 8 sequences at most: the inbox
  // fills while steps run, and some requests arrive just as a step ends (already decided).
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options(sim::SchedulerKind::kVllmV1);
  opts.scheduler.async_scheduling = true;
  opts.scheduler.max_num_seqs = 8;
  std::vector<trace::RequestSpec> specs;
  for (int i = 0; i < 200; ++i) {
    specs.push_back(spec(static_cast<std::uint64_t>(i), i * 300 * kUs, 10 + i % 7, 1 + i % 5));
  }
  const auto run = run_sim(opts, {}, cost, specs);
  CHECK(run.result.metrics.completed == 200);
  CHECK(run.ended.size() == 200);
  // FCFS: a request never has its first token before one that arrived earlier.
  for (std::uint64_t i = 1; i < 200; ++i) {
    CHECK(run.ended.at(i).first_token_ns >= run.ended.at(i - 1).first_token_ns);
  }
}

TEST_CASE("A closed loop under a time limit accounts for the held request", "[sim][closed-loop]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.max_concurrency = 1;
  opts.time_limit_ns = 4 * kMs;
  // R0 ends at 3 ms, R1 (100 out) runs past the limit, R2 is held behind it.
  const auto run =
      run_sim(opts, {}, cost, {spec(0, 0, 10, 3), spec(1, 0, 10, 100), spec(2, 0, 10, 3)});
  CHECK(run.result.metrics.completed == 1);
  CHECK(run.result.metrics.arrived == 2);
  CHECK(run.result.requests_unfinished == 2);  // R1 in flight, R2 held by the client
  // R2 was due at 0 and never sent: reported as waiting, without an engine or a send time.
  REQUIRE(run.num_end_calls == 3);
  CHECK(run.ended.at(2).state == RequestState::kWaiting);
  CHECK(run.ended.at(2).replica == sim::Request::kNoReplica);
  CHECK(run.ended.at(2).arrival_ns == -1);
  // Held, but due only after the limit: counted, not reported (as an open loop's read-ahead).
  const auto later =
      run_sim(opts, {}, cost, {spec(0, 0, 10, 3), spec(1, 0, 10, 100), spec(2, 5 * kMs, 10, 3)});
  CHECK(later.result.requests_unfinished == 2);
  CHECK(later.num_end_calls == 2);
  CHECK(later.ended.count(2) == 0);
}

namespace {

// One prefill replica in front of one decode replica: 1 ms steps on both, 1,000 B of KV per
// token over a 1 MB/s link with 0.5 ms latency.
struct DisaggregatedRun {
  FixedCostModel prefill_cost, decode_cost;
  std::vector<std::shared_ptr<AllocStats>> prefill_stats, decode_stats;
  sim::SimResult result;
  std::map<std::uint64_t, sim::Request> ended;

  DisaggregatedRun(std::vector<trace::RequestSpec> specs, std::int64_t decode_blocks,
                   std::int64_t prefill_replicas = 1) {
    prefill_cost.per_step_ns = kMs;
    prefill_cost.record = true;
    decode_cost.per_step_ns = kMs;
    decode_cost.record = true;
    sim::SimSetup setup;
    setup.options = small_options(SchedulerKind::kVllm);
    setup.cost_model = &decode_cost;
    setup.make_allocator = [this, decode_blocks]() -> std::unique_ptr<memory::Allocator> {
      decode_stats.push_back(std::make_shared<AllocStats>());
      FakeAllocator::Options o;
      o.num_blocks = decode_blocks;
      return std::make_unique<FakeAllocator>(o, decode_stats.back());
    };
    setup.prefill.num_replicas = prefill_replicas;
    setup.prefill.cost_model = &prefill_cost;
    setup.prefill.make_allocator = [this]() -> std::unique_ptr<memory::Allocator> {
      prefill_stats.push_back(std::make_shared<AllocStats>());
      return std::make_unique<FakeAllocator>(FakeAllocator::Options{}, prefill_stats.back());
    };
    setup.prefill.bytes_per_token = 1000;
    setup.prefill.bandwidth = 1e6;
    setup.prefill.latency_s = 0.5e-3;
    VectorReader reader(std::move(specs));
    SimRun run;
    RecordingObserver observer(run);
    result = sim::simulate(setup, reader, &observer);
    ended = run.ended;
  }
};

}  // namespace

TEST_CASE("Disaggregated: prefill, KV transfer, then decode on the decode replica",
          "[sim][disagg]") {
  // R0: 100 prompt tokens, 3 out. Prefill [0, 1 ms] -> token 1 at 1 ms (TTFT). Transfer:
  // 0.5 ms + 100,000 B at 1 MB/s = 100.5 ms -> at 101.5 ms. The decode replica admits it with
  // its 100 tokens of KV and computes token 1's KV [101.5, 102.5] -> token 2; token 3 at 103.5.
  DisaggregatedRun run({spec(0, 0, 100, 3)}, 100);
  REQUIRE(run.result.metrics.completed == 1);
  const sim::Request& r = run.ended.at(0);
  CHECK(r.first_token_ns == 1 * kMs);
  CHECK(r.finish_ns == 103'500'000);
  CHECK(r.replica == 1);        // the decode replica
  CHECK(r.cached_tokens == 0);  // transferred KV is not a prefix-cache hit
  CHECK(run.result.metrics.kv_transfer.count() == 1);
  CHECK(run.result.metrics.kv_transfer.max() == 100'500'000);
  CHECK(run.result.metrics.kv_transfer_bytes == 100'000);
  // The prefill replica computed the prompt; the decode replica one token with 100 present.
  REQUIRE(run.prefill_cost.seen.size() == 1);
  CHECK(run.prefill_cost.seen[0].prefills.front().num_tokens == 100);
  REQUIRE(run.decode_cost.seen.size() == 2);
  CHECK(run.decode_cost.seen[0].prefills.front().num_tokens == 1);
  CHECK(run.decode_cost.seen[0].prefills.front().num_cached_tokens == 100);
  CHECK(run.decode_cost.seen[1].decode_contexts == std::vector<std::int64_t>{101});
  // Both replicas hold nothing at the end; the decode replica counts the completion.
  CHECK(run.prefill_stats.at(0)->used_blocks_at_end == 0);
  CHECK(run.decode_stats.at(0)->used_blocks_at_end == 0);
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{0, 1});
}

TEST_CASE(
    "Disaggregated: one-token requests end on the prefill replica; sends queue; decode "
    "admission waits for KV room",
    "[sim][disagg]") {
  // R0 (1 out) finishes with its prefill. R1 (32 prompt, 40 out) and R2 (32 prompt, 2 out)
  // prefill together in the second step and are sent one after the other: 0.5 + 32 ms each ->
  // at 34.5 and 67 ms. The decode replica has 6 blocks of 16: R1 ends at 73.5 ms holding 5 (71
  // tokens), so R2 (33 tokens: 3 blocks) waits for it and finishes one step later.
  DisaggregatedRun run({spec(0, 0, 10, 1), spec(1, kMs / 2, 32, 40), spec(2, kMs / 2, 32, 2)}, 6);
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.ended.at(0).finish_ns == 1 * kMs);
  CHECK(run.ended.at(0).replica == 0);
  CHECK(run.result.metrics.kv_transfer.count() == 2);
  CHECK(run.ended.at(1).first_token_ns == 2 * kMs);
  CHECK(run.ended.at(1).finish_ns == 73'500'000);  // arrives 34.5 ms, 39 decode steps
  CHECK(run.ended.at(2).finish_ns == 74'500'000);
  CHECK(run.result.metrics.kv_transfer.max() == 65 * kMs);
}

TEST_CASE(
    "Disaggregated with pipelined decode replicas: requests join the virtual engine with the "
    "fewest unfinished",
    "[sim][disagg][pp]") {
  // One prefill replica (engine 0), one decode replica of two stages (engines 1 and 2). R0 and R1
  // prefill together in [0, 1 ms] and are sent one after the other (0.5 + 10 ms each: they
  // arrive at 11.5 and 22 ms). R0 joins engine 1 and is still decoding (40 tokens at >= 2 ms a
  // step) when R1 arrives, so R1 joins the idle engine 2. R2 (sent after them, at 32.5 ms) finds
  // both busy with one each and takes the lower, engine 1.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  std::vector<std::unique_ptr<cost::CostModel>> stages;
  for (int i = 0; i < 2; ++i) stages.push_back(std::make_unique<FixedCostModel>(cost));
  const cost::PipelineCostModel pipeline(
      std::move(stages), std::vector<cost::StageTransfer>{{64, model::Link{1e9, 0, true}}});
  SimRun run;
  sim::SimSetup setup;
  setup.options = small_options(SchedulerKind::kVllm);
  setup.cost_model = &pipeline;
  setup.pipeline = &pipeline;
  setup.make_allocator = fake_allocators(run);
  setup.prefill.num_replicas = 1;
  setup.prefill.cost_model = &cost;
  setup.prefill.make_allocator = fake_allocators(run);
  setup.prefill.bytes_per_token = 1000;
  setup.prefill.bandwidth = 1e6;
  setup.prefill.latency_s = 0.5e-3;
  simulate_into(run, std::move(setup),
                {spec(0, 0, 10, 40), spec(1, 0, 10, 40), spec(2, 0, 10, 40)});
  REQUIRE(run.result.metrics.completed == 3);
  CHECK(run.ended.at(0).first_token_ns == kMs);
  CHECK(run.ended.at(1).first_token_ns == kMs);
  CHECK(run.ended.at(0).replica == 1);
  CHECK(run.ended.at(1).replica == 2);
  CHECK(run.ended.at(2).replica == 1);
  CHECK(run.result.metrics.kv_transfer.max() == 31'500'000);  // R2: sent 22 -> 32.5 ms
  // Completions per replica: the prefill replica's, then the decode replica's two engines'.
  CHECK(run.result.completed_per_replica == std::vector<std::int64_t>{0, 3});
}

TEST_CASE("Disaggregated runs over random workloads lose no request and free every block",
          "[sim][disagg]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed * 104729);
    const int n = static_cast<int>(rng.uniform_int(1, 80));
    auto specs = random_workload(seed, n, static_cast<double>(rng.uniform_int(50, 2000)), 300, 120);
    sim::SimSetup setup;
    setup.options = small_options(seed % 2 == 0 ? SchedulerKind::kVllmV1 : SchedulerKind::kVllm);
    setup.options.scheduler.max_model_len = 480;
    setup.options.scheduler.max_num_batched_tokens = seed % 2 == 0 ? 256 : 0;
    setup.options.num_replicas = rng.uniform_int(1, 3);
    setup.options.router =
        seed % 3 == 0 ? sim::RouterKind::kLeastOutstanding : sim::RouterKind::kRoundRobin;
    FixedCostModel cost;
    cost.per_step_ns = rng.uniform_int(1, 3000) * kUs;
    cost.per_prefill_token_ns = rng.uniform_int(0, 20) * kUs;
    cost.per_decode_ns = rng.uniform_int(0, 100) * kUs;
    setup.cost_model = &cost;
    // Every third seed: decode replicas of two pipeline stages (virtual engines).
    std::optional<cost::PipelineCostModel> pipeline;
    if (seed % 3 == 1) {
      std::vector<std::unique_ptr<cost::CostModel>> stages;
      for (int i = 0; i < 2; ++i) stages.push_back(std::make_unique<FixedCostModel>(cost));
      pipeline.emplace(std::move(stages),
                       std::vector<cost::StageTransfer>{{64, model::Link{1e9, 1e-6, true}}});
      setup.cost_model = &*pipeline;
      setup.pipeline = &*pipeline;
    }
    // Every third seed from 2: decode replicas of two data-parallel ranks, in lockstep (an MoE
    // model) on even seeds.
    if (seed % 3 == 2) setup.data_parallel = {.size = 2, .lockstep = seed % 2 == 0};
    // Every fourth seed: prefill replicas of two data-parallel ranks (in lockstep on even seeds).
    if (seed % 4 == 0) setup.prefill.data_parallel = {.size = 2, .lockstep = seed % 8 == 0};
    std::vector<std::shared_ptr<AllocStats>> stats;
    const std::int64_t blocks = (480 + 16) / 16 + rng.uniform_int(0, 40);
    auto make = [&stats, blocks]() -> std::unique_ptr<memory::Allocator> {
      stats.push_back(std::make_shared<AllocStats>());
      FakeAllocator::Options o;
      o.num_blocks = blocks;
      return std::make_unique<FakeAllocator>(o, stats.back());
    };
    setup.make_allocator = make;
    setup.prefill.num_replicas = rng.uniform_int(1, 3);
    setup.prefill.cost_model = &cost;
    setup.prefill.make_allocator = make;
    setup.prefill.bytes_per_token = 100;
    setup.prefill.bandwidth = static_cast<double>(rng.uniform_int(1, 1000)) * 1e6;
    setup.prefill.latency_s = 1e-6 * static_cast<double>(rng.uniform_int(0, 500));
    VectorReader reader(specs);
    const sim::SimResult r = sim::simulate(setup, reader);
    INFO("seed " << seed);
    CHECK(r.metrics.arrived == n);
    CHECK(r.metrics.completed + r.metrics.rejected() == n);
    CHECK(r.requests_unfinished == 0);
    std::int64_t transfers = 0;
    for (const auto& s : specs)
      transfers += s.output_tokens > 1 && s.prompt_tokens + s.output_tokens <= 480;
    CHECK(r.metrics.kv_transfer.count() <= transfers);
    for (const auto& s : stats) CHECK(s->used_blocks_at_end == 0);
    const double sum = r.fraction.token_states + r.fraction.reservation +
                       r.fraction.internal_fragmentation + r.fraction.external_fragmentation +
                       r.fraction.free;
    CHECK(sum == Approx(1.0));
  }
}
