// The simulator's fast forward over runs of pure-decode steps (sim/fast_forward.cpp): the same
// run with SimOptions::fast_forward on and off must agree in every result, bit for bit.
#include <catch2/catch.hpp>

#include "common/int_math.h"
#include "config/catalog.h"
#include "cost/cost_fixtures.h"
#include "memory/allocator.h"
#include "model/kv_math.h"
#include "sim/deployment.h"
#include "sim/sim_test_util.h"
#include "trace/workload.h"

using namespace kvsim;
using namespace kvsim::test;

namespace {

constexpr TimeNs kMs = kNsPerMs;

void check_same(const sim::LatencyHistogram& a, const sim::LatencyHistogram& b) {
  CHECK(a.count() == b.count());
  CHECK(a.exact() == b.exact());
  CHECK(a.min() == b.min());
  CHECK(a.max() == b.max());
  CHECK(a.mean() == b.mean());
  for (const double q : {0.0, 10.0, 50.0, 90.0, 95.0, 99.0, 100.0}) {
    CHECK(a.percentile(q) == b.percentile(q));
  }
}

void check_same(const sim::Metrics& a, const sim::Metrics& b) {
  check_same(a.ttft, b.ttft);
  check_same(a.tpot, b.tpot);
  check_same(a.itl, b.itl);
  check_same(a.e2e, b.e2e);
  check_same(a.queue, b.queue);
  check_same(a.normalized, b.normalized);
  CHECK(a.queue_trend.count() == b.queue_trend.count());
  CHECK(a.queue_trend.slope() == b.queue_trend.slope());
  CHECK(a.arrived == b.arrived);
  CHECK(a.completed == b.completed);
  CHECK(a.rejected() == b.rejected());
  CHECK(a.prompt_tokens == b.prompt_tokens);
  CHECK(a.output_tokens == b.output_tokens);
  CHECK(a.slo_good == b.slo_good);
  CHECK(a.preemptions_recompute == b.preemptions_recompute);
  CHECK(a.preemptions_swap == b.preemptions_swap);
  CHECK(a.num_steps == b.num_steps);
  CHECK(a.num_sequence_steps == b.num_sequence_steps);
  CHECK(a.num_step_tokens == b.num_step_tokens);
  CHECK(a.swap_out_bytes == b.swap_out_bytes);
  CHECK(a.swap_in_bytes == b.swap_in_bytes);
}

void check_same(const sim::TimelinePoint& a, const sim::TimelinePoint& b) {
  CHECK(a.t == b.t);
  CHECK(a.running == b.running);
  CHECK(a.waiting == b.waiting);
  CHECK(a.used_bytes == b.used_bytes);
  CHECK(a.reserved_bytes == b.reserved_bytes);
  CHECK(a.free_bytes == b.free_bytes);
  CHECK(a.token_state_bytes == b.token_state_bytes);
  CHECK(a.internal_fragmentation_bytes == b.internal_fragmentation_bytes);
  CHECK(a.external_fragmentation_bytes == b.external_fragmentation_bytes);
}

// Every SimResult field and every request's report.
void check_same(const SimRun& fast, const SimRun& slow) {
  const sim::SimResult& a = fast.result;
  const sim::SimResult& b = slow.result;
  check_same(a.metrics, b.metrics);
  CHECK(a.requests_unfinished == b.requests_unfinished);
  CHECK(a.hit_time_limit == b.hit_time_limit);
  CHECK(a.duration_ns == b.duration_ns);
  CHECK(a.num_replicas == b.num_replicas);
  CHECK(a.capacity_slots == b.capacity_slots);
  CHECK(a.bytes_per_slot == b.bytes_per_slot);
  CHECK(a.capacity_bytes == b.capacity_bytes);
  CHECK(a.fraction.token_states == b.fraction.token_states);
  CHECK(a.fraction.reservation == b.fraction.reservation);
  CHECK(a.fraction.internal_fragmentation == b.fraction.internal_fragmentation);
  CHECK(a.fraction.external_fragmentation == b.fraction.external_fragmentation);
  CHECK(a.fraction.free == b.fraction.free);
  CHECK(a.peak_used_bytes == b.peak_used_bytes);
  CHECK(a.mean_running == b.mean_running);
  CHECK(a.mean_waiting == b.mean_waiting);
  CHECK(a.max_running == b.max_running);
  CHECK(a.max_waiting == b.max_waiting);
  CHECK(a.completed_per_replica == b.completed_per_replica);
  CHECK(a.num_prefix_routed == b.num_prefix_routed);
  CHECK(a.saturation == b.saturation);
  CHECK(a.queue_delay_slope == b.queue_delay_slope);
  CHECK(a.outstanding_at_end_of_arrivals == b.outstanding_at_end_of_arrivals);
  CHECK(a.num_events == b.num_events);
  CHECK(a.timeline_interval_ns == b.timeline_interval_ns);
  CHECK(a.prefix_query_tokens == b.prefix_query_tokens);
  CHECK(a.prefix_hit_tokens == b.prefix_hit_tokens);
  REQUIRE(a.timeline.size() == b.timeline.size());
  for (std::size_t i = 0; i < a.timeline.size(); ++i) check_same(a.timeline[i], b.timeline[i]);
  CHECK(fast.num_end_calls == slow.num_end_calls);
  REQUIRE(fast.ended.size() == slow.ended.size());
  for (const auto& [id, r] : fast.ended) {
    const sim::Request& s = slow.ended.at(id);
    CHECK(r.state == s.state);
    CHECK(r.replica == s.replica);
    CHECK(r.first_scheduled_ns == s.first_scheduled_ns);
    CHECK(r.first_token_ns == s.first_token_ns);
    CHECK(r.last_token_ns == s.last_token_ns);
    CHECK(r.finish_ns == s.finish_ns);
    CHECK(r.generated == s.generated);
    CHECK(r.computed == s.computed);
    CHECK(r.num_preemptions == s.num_preemptions);
    CHECK(r.cached_tokens == s.cached_tokens);
  }
}

memory::AllocatorOptions paged(std::int64_t capacity_slots, std::int64_t block_size) {
  memory::AllocatorOptions a;
  a.kind = memory::AllocatorKind::kPaged;
  a.bytes_per_slot = 1000;
  a.capacity_bytes = static_cast<Bytes>(capacity_slots) * 1000;
  a.block_size = block_size;
  a.watermark = 0;
  return a;
}

// The run with fast forward on (`cost` records it) and off (a copy of `cost` as it was).
std::pair<SimRun, SimRun> both_ways(sim::SimOptions opts, const memory::AllocatorOptions& alloc,
                                    const FixedCostModel& cost,
                                    const std::vector<trace::RequestSpec>& specs) {
  SimRun fast, slow;
  const auto make = [&] { return memory::make_allocator(alloc); };
  const FixedCostModel slow_cost = cost;
  opts.fast_forward = false;
  simulate_into(slow, opts, make, slow_cost, specs);
  opts.fast_forward = true;
  simulate_into(fast, opts, make, cost, specs);
  return {std::move(fast), std::move(slow)};
}

sim::SimOptions tiny_options() {
  sim::SimOptions o = small_options();
  o.scheduler.max_model_len = 64;
  return o;
}

void share_prefixes(std::vector<trace::RequestSpec>& specs, std::int64_t block_tokens, Rng& rng) {
  for (auto& s : specs) {
    s.prefix_block_tokens = block_tokens;
    // Every other request a conversation's turn: ids on over its output, whose blocks the
    // prefix cache registers as they fill.
    const bool turn = rng.next_u64() % 2 == 0;
    const std::int64_t content = s.prompt_tokens + (turn ? s.output_tokens : 0);
    for (std::int64_t b = 0; b < ceil_div(content, block_tokens); ++b) {
      s.prefix_hashes.push_back(b < 3 ? static_cast<std::uint64_t>(b) : rng.next_u64());
    }
  }
}

// The decode contexts of each step the cost model priced, totals shown as "Σ/n".
std::vector<std::string> priced(const FixedCostModel& cost) {
  std::vector<std::string> out;
  for (const auto& s : cost.seen) {
    std::string text;
    for (const auto& p : s.prefills) text += "P" + std::to_string(p.num_tokens) + " ";
    for (const std::int64_t c : s.decode_contexts) text += std::to_string(c) + " ";
    if (s.decode_totals.num_sequences > 0) {
      text += std::to_string(s.decode_totals.context_tokens) + "/" +
              std::to_string(s.decode_totals.num_sequences) + " ";
    }
    if (!text.empty()) text.pop_back();
    out.push_back(text);
  }
  return out;
}

// 1 ms per step, whatever the batch; every priced batch recorded (priced()).
FixedCostModel ms_steps_recorded() {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.record = true;
  return cost;
}

}  // namespace

TEST_CASE("Fast forward: a lone request runs across its block boundaries, growing in the run",
          "[sim][fast_forward]") {
  // Prompt 8, 30 outputs, 16-token blocks, 1 ms steps, no prefix caching. After the prefill
  // (context 8) every decode step goes in one run (priced as totals "ctx/1"), the steps at
  // contexts 16 and 32 included: there the request's token goes past the room it holds, and the
  // run grows it through the allocator (a new block each time), as the scheduler would. The step
  // producing its last token (context 36, at 30 ms) finishes it in the run (no client waits).
  FixedCostModel cost = ms_steps_recorded();
  const auto [fast, slow] = both_ways(tiny_options(), paged(64, 16), cost, {spec(0, 0, 8, 30)});
  check_same(fast, slow);
  CHECK(fast.ended.at(0).finish_ns == 30 * kMs);
  std::vector<std::string> expected = {"P8"};
  for (int c = 8; c <= 36; ++c) expected.push_back(std::to_string(c) + "/1");
  CHECK(priced(cost) == expected);
  CHECK(fast.result.metrics.num_steps == 30);
}

TEST_CASE("Fast forward: a run ends before a step whose grows the allocator cannot promise",
          "[sim][fast_forward]") {
  // A and B (prompt 8, 20 outputs each) share 3 blocks of 16 tokens. After their prefill (one
  // block each) one block is free; both tokens of the step at context 16 go past their blocks.
  // The run stops before it (two grows, one block): the ordinary step grows A into the last
  // block and preempts B (the newest), which recomputes once A is done.
  FixedCostModel cost = ms_steps_recorded();
  const auto [fast, slow] =
      both_ways(tiny_options(), paged(48, 16), cost, {spec(0, 0, 8, 20), spec(1, 0, 8, 20)});
  check_same(fast, slow);
  const std::vector<std::string> seen = priced(cost);
  REQUIRE(seen.size() >= 11);
  std::vector<std::string> expected = {"P8 P8"};
  for (int c = 8; c <= 16; ++c) expected.push_back(std::to_string(2 * c) + "/2");
  expected.push_back("16");  // the step at context 16: priced ("32/2"), not taken, A alone
  CHECK(std::vector<std::string>(seen.begin(), seen.begin() + 11) == expected);
  CHECK(fast.ended.at(1).num_preemptions == 1);
  CHECK(fast.result.metrics.preemptions_recompute == 1);
}

TEST_CASE("Fast forward: an arrival stops the run at the last step that ends before it",
          "[sim][fast_forward]") {
  // A (prompt 8, 12 outputs) decodes alone from 1 ms in 1 ms steps; B arrives at 5.5 ms. The
  // steps ending at 2..5 ms go in one run; the step 5 → 6 ms would end after the arrival: it is
  // priced ("12/1") and runs in flight, its end an ordinary event after B's arrival (not priced
  // again, no per-request pass). At 6 ms B's prefill runs alone (vllm), then both decode: A's
  // tokens 7..12 at 8..13 ms.
  FixedCostModel cost = ms_steps_recorded();
  const auto [fast, slow] = both_ways(tiny_options(), paged(64, 16), cost,
                                      {spec(0, 0, 8, 12), spec(1, 5 * kMs + kMs / 2, 4, 3)});
  check_same(fast, slow);
  const std::vector<std::string> seen = priced(cost);
  REQUIRE(seen.size() >= 7);
  CHECK(std::vector<std::string>(seen.begin(), seen.begin() + 7) ==
        std::vector<std::string>{"P8", "8/1", "9/1", "10/1", "11/1", "12/1", "P4"});
  CHECK(fast.ended.at(0).finish_ns == 13 * kMs);
  CHECK(fast.ended.at(1).first_token_ns == 7 * kMs);
  CHECK(fast.ended.at(1).finish_ns == 9 * kMs);
}

TEST_CASE("Fast forward: an arrival at the very end of a step stops the run before that step",
          "[sim][fast_forward]") {
  // As above with B arriving at 5 ms exactly, when A's step 4 → 5 ms ends. B's arrival was
  // queued first, so it is dispatched first at 5 ms and vllm then admits B: that step end must
  // be an event, not part of the run (which ends at 4 ms): the step runs in flight ("11/1").
  FixedCostModel cost = ms_steps_recorded();
  const auto [fast, slow] =
      both_ways(tiny_options(), paged(64, 16), cost, {spec(0, 0, 8, 12), spec(1, 5 * kMs, 4, 3)});
  check_same(fast, slow);
  const std::vector<std::string> seen = priced(cost);
  REQUIRE(seen.size() >= 6);
  CHECK(std::vector<std::string>(seen.begin(), seen.begin() + 6) ==
        std::vector<std::string>{"P8", "8/1", "9/1", "10/1", "11/1", "P4"});
  CHECK(fast.ended.at(1).first_scheduled_ns == 5 * kMs);
  CHECK(fast.ended.at(1).first_token_ns == 6 * kMs);
}

TEST_CASE("Fast forward: a request finishing in a run leaves the others running on in it",
          "[sim][fast_forward]") {
  // A (prompt 2, 5 outputs) and B (prompt 3, 9 outputs) decode together from 1 ms; the run holds
  // the steps ending at 2..5 ms (contexts summed: 5, 7, 9, 11), A finishing at 5 ms in the last
  // of them; B goes on alone in the same run: contexts 7..10, its last token at 9 ms.
  FixedCostModel cost = ms_steps_recorded();
  const auto [fast, slow] =
      both_ways(tiny_options(), paged(128, 16), cost, {spec(0, 0, 2, 5), spec(1, 0, 3, 9)});
  check_same(fast, slow);
  CHECK(priced(cost) == std::vector<std::string>{"P2 P3", "5/2", "7/2", "9/2", "11/2", "7/1", "8/1",
                                                 "9/1", "10/1"});
  CHECK(fast.ended.at(0).finish_ns == 5 * kMs);
  CHECK(fast.ended.at(1).finish_ns == 9 * kMs);
  CHECK(fast.result.metrics.num_steps == 9);
}

TEST_CASE("Fast forward: with a client waiting to send, the finishing step is ordinary",
          "[sim][fast_forward]") {
  // One client (max concurrency 1) and two requests: while A (prompt 2, 5 outputs) runs, B is
  // held by the client and sent when A ends. A's finishing step ("5") is an ordinary step, so
  // that B's arrival 1 ns after 5 ms is an event before the next step; B (prompt 3, 4 outputs),
  // whose client holds nothing more, finishes in its run.
  FixedCostModel cost = ms_steps_recorded();
  sim::SimOptions opts = tiny_options();
  opts.max_concurrency = 1;
  const auto [fast, slow] =
      both_ways(opts, paged(128, 16), cost, {spec(0, 0, 2, 5), spec(1, 0, 3, 4)});
  check_same(fast, slow);
  CHECK(priced(cost) ==
        std::vector<std::string>{"P2", "2/1", "3/1", "4/1", "5", "P3", "3/1", "4/1", "5/1"});
  CHECK(fast.ended.at(1).arrival_ns == 5 * kMs + 1);
  CHECK(fast.ended.at(1).finish_ns == 9 * kMs + 1);
}

TEST_CASE("Fast forward changes nothing: random runs, fast-forwarded and step by step",
          "[sim][fast_forward]") {
  // Memory pressure (preemption by recompute and by swap), prefix caching, one or two replicas,
  // a timeline, CUDA-graph padding, a time limit, closed-loop clients, serial sessions and async
  // scheduling: every result equal.
  int runs = 0;
  std::int64_t fast_steps = 0, all_steps = 0;
  for (auto sched : {sim::SchedulerKind::kVllm, sim::SchedulerKind::kChunkedPrefill,
                     sim::SchedulerKind::kVllmV1}) {
    for (auto preemption : {sim::PreemptionMode::kRecompute, sim::PreemptionMode::kSwap}) {
      if (sched == sim::SchedulerKind::kVllmV1 && preemption == sim::PreemptionMode::kSwap) {
        continue;  // V1 recomputes only
      }
      for (int variant = 0; variant < 16; ++variant) {
        for (std::uint64_t seed = 1; seed <= 2; ++seed) {
          const bool prefix = (variant & 1) != 0;
          const bool two_replicas = (variant & 2) != 0;
          const bool timeline = (variant & 4) != 0;
          const bool graphs = (variant & 8) != 0;
          Rng rng(seed * 1009 + static_cast<std::uint64_t>(variant) * 37 +
                  static_cast<std::uint64_t>(sched) * 7 + static_cast<std::uint64_t>(preemption));
          const int n = static_cast<int>(rng.uniform_int(10, 80));
          auto specs = random_workload(seed + static_cast<std::uint64_t>(variant) * 101, n,
                                       static_cast<double>(rng.uniform_int(20, 2000)), 200, 150);
          // Seed 2: every time a multiple of 0.1 ms, so that step ends often coincide with
          // arrivals, other replicas' step ends, timeline samples and the time limit.
          const TimeNs quantum = seed == 2 ? kMs / 10 : 1000;
          if (seed == 2) {
            for (auto& s : specs) s.arrival_ns -= s.arrival_ns % quantum;
          }
          if (prefix) share_prefixes(specs, 8, rng);
          sim::SimOptions opts = small_options(sched);
          opts.scheduler.max_model_len = 360;
          opts.scheduler.max_num_seqs = rng.uniform_int(2, 48);
          opts.scheduler.max_num_batched_tokens = sched == sim::SchedulerKind::kVllm
                                                      ? rng.uniform_int(360, 1000)
                                                      : rng.uniform_int(8, 512);
          opts.scheduler.preemption = preemption;
          opts.scheduler.cuda_graph_max_size = graphs ? rng.uniform_int(1, 64) : 0;
          if (sched == sim::SchedulerKind::kVllmV1 && rng.uniform_int(0, 1) == 1) {
            // A vLLM V1 graph mode: some steps (or all) eager, each priced apart.
            opts.scheduler.cuda_graph_mode = *sim::parse_cuda_graph_mode(
                sim::cuda_graph_mode_names()[static_cast<std::size_t>(rng.uniform_int(0, 4))]);
          }
          opts.enable_prefix_caching = prefix;
          opts.num_replicas = two_replicas ? 2 : 1;
          opts.router =
              seed % 2 ? sim::RouterKind::kLeastOutstanding : sim::RouterKind::kRoundRobin;
          opts.block_size = 8;
          opts.timeline_points = timeline ? rng.uniform_int(2, 64) : 0;
          // Always a limit: some of these configurations never drain (a swapped request can
          // be swapped in and out again step after step, with fast forward off too).
          opts.time_limit_ns =
              rng.uniform_int(0, 3) == 0 ? rng.uniform_int(1, 400) * kMs : 10'000 * kMs;
          if (rng.uniform_int(0, 3) == 0) opts.max_concurrency = rng.uniform_int(1, 16);
          // A front end: requests join their engine late, each an event of its own.
          if (rng.uniform_int(0, 3) == 0) opts.frontend_latency_ns = rng.uniform_int(1, 20) * kMs;
          if (sched == sim::SchedulerKind::kVllmV1) {
            opts.scheduler.async_scheduling = rng.uniform_int(0, 1) == 1;
          }
          // Conversations (seed 1): 5 of them, serial; each turn's send an event at an end.
          if (seed == 1 && variant % 3 == 0) {
            opts.serial_sessions = true;
            for (auto& s : specs) s.session_id = std::to_string(s.id % 5);
          }
          memory::AllocatorOptions alloc = paged(rng.uniform_int(400, 1500), 8);
          alloc.watermark = 0.01;
          alloc.enable_prefix_caching = prefix;
          alloc.cpu_swap_bytes = static_cast<Bytes>(rng.uniform_int(0, 3000)) * 1000;
          FixedCostModel cost;
          cost.per_step_ns = rng.uniform_int(1, 30) * quantum;
          cost.per_prefill_token_ns = rng.uniform_int(0, 2) * quantum;
          cost.per_decode_ns = rng.uniform_int(0, 5) * quantum / 10;
          cost.per_context_token_ns = seed == 2 ? 0 : rng.uniform_int(0, 300);
          cost.per_padding_token_ns = rng.uniform_int(0, 2) * quantum;
          cost.eager_step_ns = rng.uniform_int(0, 3) * quantum;
          cost.swap_ns_per_byte = 1;
          INFO("scheduler " << sim::scheduler_name(sched) << " preemption "
                            << sim::preemption_name(preemption) << " variant " << variant
                            << " seed " << seed);
          const auto [fast, slow] = both_ways(opts, alloc, cost, specs);
          check_same(fast, slow);
          fast_steps += cost.num_totals_batches;
          all_steps += slow.result.metrics.num_steps;
          ++runs;
        }
      }
    }
  }
  CHECK(runs == 160);
  // The fast path was taken, and often (steps priced from totals, a few of them not taken).
  CHECK(fast_steps * 5 > all_steps);
}

namespace {

// A roofline deployment of `model` on one `gpu`: its own KV dtype, 4,096-token sequences.
sim::DeploymentInputs roofline_inputs(const model::ModelSpec& model,
                                      const model::HardwareSpec& gpu) {
  sim::DeploymentInputs in;
  in.model = &model;
  in.hardware = &gpu;
  in.kv_format = *model::kv_format_from_name(model, "auto");
  in.max_model_len = 4096;
  return in;
}

// Scheduler `sched` with 64 sequences, 512 batched tokens (4,096 for vLLM V0, which does not
// chunk), V1's CUDA graphs up to 128, and 100 timeline points.
sim::SimOptions roofline_options(sim::SchedulerKind sched) {
  sim::SimOptions options;
  options.scheduler.kind = sched;
  options.scheduler.max_num_seqs = 64;
  options.scheduler.max_num_batched_tokens = sched == sim::SchedulerKind::kVllm ? 4096 : 512;
  if (sched == sim::SchedulerKind::kVllmV1) options.scheduler.cuda_graph_max_size = 128;
  options.timeline_points = 100;
  return options;
}

}  // namespace

TEST_CASE("Fast forward changes nothing with the roofline model on shipped deployments",
          "[sim][fast_forward]") {
  // Llama-3-8B on an A100-80GB and an H200 (their measured tables included), vLLM V1 with its
  // CUDA-graph padding, vLLM V0 and chunked prefill; a synthetic Poisson workload.
  const model::ModelSpec model = config::load_model("llama-3-8b");
  for (const char* gpu_name : {"a100-80gb", "h200-sxm"}) {
    const model::HardwareSpec gpu = config::load_hardware(gpu_name);
    for (auto sched : {sim::SchedulerKind::kVllmV1, sim::SchedulerKind::kVllm,
                       sim::SchedulerKind::kChunkedPrefill}) {
      sim::SimOptions options = roofline_options(sched);
      const sim::BuiltDeployment built =
          sim::build_deployment(roofline_inputs(model, gpu), options);
      CHECK(built.setup(options).cost_model->prices_decode_totals());
      std::vector<trace::RequestSpec> specs = random_workload(7, 300, 20.0, 2000, 400);
      SimRun fast, slow;
      for (SimRun* run : {&fast, &slow}) {
        options.fast_forward = run == &fast;
        const sim::SimSetup setup = built.setup(options);
        VectorReader reader(specs);
        RecordingObserver observer(*run);
        run->result = sim::simulate(setup, reader, &observer);
      }
      INFO(gpu_name << " " << sim::scheduler_name(sched));
      check_same(fast, slow);
    }
  }
}

namespace {

// Forwards to a cost model, counting the steps priced from decode totals (fast-forwarded).
struct CountingCost : cost::CostModel {
  explicit CountingCost(const cost::CostModel& m) : inner(m) {}
  TimeNs step_time(const cost::StepBatch& b) const override {
    if (b.decode_totals.num_sequences > 0) ++totals;
    return inner.step_time(b);
  }
  cost::StepCost breakdown(const cost::StepBatch& b) const override { return inner.breakdown(b); }
  TimeNs swap_time(Bytes bytes) const override { return inner.swap_time(bytes); }
  bool prices_decode_totals() const override { return inner.prices_decode_totals(); }
  std::int64_t decode_totals_min_context() const override {
    return inner.decode_totals_min_context();
  }
  const cost::CostModel& inner;
  mutable std::int64_t totals = 0;
};

}  // namespace

TEST_CASE("Fast forward changes nothing for a sparse-attention model past its top-k",
          "[sim][fast_forward]") {
  // DeepSeek-V2-Lite with a 256-key sparse attention on an H200, vLLM V1: a run of decode steps
  // is fast-forwarded only once every request's context is past 255, the roofline's
  // decode_totals_min_context; below it each step lists its contexts.
  const model::ModelSpec model = test::deepseek_v2_lite_sparse();
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  sim::SimOptions options = roofline_options(sim::SchedulerKind::kVllmV1);
  const sim::BuiltDeployment built = sim::build_deployment(roofline_inputs(model, gpu), options);
  REQUIRE(built.setup(options).cost_model->decode_totals_min_context() == 255);
  // Short prompts first (a run below the top-k stays stepped), then long ones.
  std::vector<trace::RequestSpec> specs = random_workload(7, 200, 20.0, 2000, 300);
  for (std::size_t i = 0; i < 40; ++i) specs[i].prompt_tokens = 1 + specs[i].prompt_tokens % 100;
  SimRun fast, slow;
  std::int64_t fast_totals = 0;
  for (SimRun* run : {&fast, &slow}) {
    options.fast_forward = run == &fast;
    sim::SimSetup setup = built.setup(options);
    const CountingCost counting(*setup.cost_model);
    setup.cost_model = &counting;
    VectorReader reader(specs);
    RecordingObserver observer(*run);
    run->result = sim::simulate(setup, reader, &observer);
    if (run == &fast) fast_totals = counting.totals;
  }
  CHECK(fast_totals > 0);
  check_same(fast, slow);
}

TEST_CASE("Fast forward: progress reports come at the same instants", "[sim][fast_forward]") {
  // The observer hears of progress every 16,384 instants with events; steps run in one go count
  // as the instants they would have been. One request decoding 40,000 tokens: two reports.
  struct Progress final : sim::SimObserver {
    std::vector<TimeNs> at;
    void on_progress(const sim::SimProgress& p) override {
      at.push_back(p.now);
      CHECK(p.live == 1);
    }
  };
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimOptions opts = small_options();
  opts.scheduler.max_model_len = 40'008;
  Progress fast, slow;
  for (Progress* p : {&fast, &slow}) {
    opts.fast_forward = p == &fast;
    sim::SimSetup setup;
    setup.options = opts;
    setup.cost_model = &cost;
    setup.make_allocator = [] { return memory::make_allocator(paged(40'016, 16)); };
    VectorReader reader({spec(0, 0, 8, 40'000)});
    sim::simulate(setup, reader, p);
  }
  CHECK(cost.num_totals_batches > 30'000);
  CHECK(fast.at == std::vector<TimeNs>{16'383 * kMs, 32'767 * kMs});
  CHECK(fast.at == slow.at);
}
