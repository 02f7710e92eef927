// The simulator driving the real allocators of src/memory (with the fixed-cost fake).
#include <sstream>

#include <catch2/catch.hpp>

#include "common/int_math.h"
#include "cost/pipeline_model.h"
#include "memory/allocator.h"
#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;

namespace {

constexpr TimeNs kMs = kNsPerMs;

SimRun run_real(const sim::SimOptions& options, const memory::AllocatorOptions& alloc,
                const FixedCostModel& cost, std::vector<trace::RequestSpec> specs) {
  SimRun run;
  simulate_into(
      run, options, [alloc] { return memory::make_allocator(alloc); }, cost, std::move(specs));
  return run;
}

// Every request ended once, finished ones produced all their tokens, memory within capacity and
// the five fractions sum to 1.
void check_run(const SimRun& run, const std::vector<trace::RequestSpec>& specs, int n) {
  const sim::Metrics& m = run.result.metrics;
  REQUIRE(run.num_end_calls == n);
  CHECK(m.completed + m.rejected() == n);
  std::int64_t requested = 0;
  for (const auto& s : specs) {
    const sim::Request& r = run.ended.at(s.id);
    if (r.state == sim::RequestState::kFinished) {
      CHECK(r.generated == s.output_tokens);
      requested += s.output_tokens;
    }
  }
  CHECK(m.output_tokens == requested);
  CHECK(run.result.peak_used_bytes <= run.result.capacity_bytes);
  const auto& f = run.result.fraction;
  CHECK(f.token_states + f.reservation + f.internal_fragmentation + f.external_fragmentation +
            f.free ==
        Approx(1.0).epsilon(1e-12));
}

memory::AllocatorOptions slots(memory::AllocatorKind kind, std::int64_t capacity_slots) {
  memory::AllocatorOptions a;
  a.kind = kind;
  a.bytes_per_slot = 1000;
  a.capacity_bytes = static_cast<Bytes>(capacity_slots) * 1000;
  a.watermark = 0;
  return a;
}

// Paged, blocks of 8 tokens, prefix caching on, a CPU offload tier of `cpu_offload_bytes`
// (none: 0).
memory::AllocatorOptions cached_paged(std::int64_t capacity_slots, Bytes cpu_offload_bytes) {
  memory::AllocatorOptions a = slots(memory::AllocatorKind::kPaged, capacity_slots);
  a.block_size = 8;
  a.enable_prefix_caching = true;
  a.cpu_offload_bytes = cpu_offload_bytes;
  return a;
}

// Content ids per `block_tokens` prompt tokens: the first `shared_blocks` blocks are the same in
// every request (a common system prompt), the rest random.
void share_prefixes(std::vector<trace::RequestSpec>& specs, std::int64_t block_tokens,
                    std::int64_t shared_blocks, Rng& rng) {
  for (auto& s : specs) {
    s.prefix_block_tokens = block_tokens;
    for (std::int64_t b = 0; b < ceil_div(s.prompt_tokens, block_tokens); ++b) {
      s.prefix_hashes.push_back(b < shared_blocks ? static_cast<std::uint64_t>(b) : rng.next_u64());
    }
  }
}

// A real allocator passed through, counting grow() calls; with `defer` false it offers no
// in-place room, so the replica tells it of every token at once.
class Relay final : public memory::Allocator {
 public:
  Relay(const memory::AllocatorOptions& options, bool defer, std::int64_t* grows)
      : inner_(memory::make_allocator(options)), defer_(defer), grows_(grows) {}
  std::optional<memory::AdmitResult> admit(const memory::SeqInfo& seq,
                                           std::int64_t num_tokens) override {
    return inner_->admit(seq, num_tokens);
  }
  bool grow(memory::SeqId id, std::int64_t num_tokens) override {
    ++*grows_;
    return inner_->grow(id, num_tokens);
  }
  void free(memory::SeqId id) override { inner_->free(id); }
  memory::SlotAccounting accounting(const memory::SeqInfo* head) const override {
    return inner_->accounting(head);
  }
  Bytes bytes_per_slot() const override { return inner_->bytes_per_slot(); }
  memory::ByteAccounting byte_accounting(const memory::SeqInfo* head) const override {
    return inner_->byte_accounting(head);
  }
  std::optional<Bytes> swap_out(memory::SeqId id) override { return inner_->swap_out(id); }
  std::optional<Bytes> swap_in(memory::SeqId id) override { return inner_->swap_in(id); }
  std::int64_t cached_prefix_tokens(const memory::SeqInfo& seq,
                                    std::int64_t num_tokens) const override {
    return inner_->cached_prefix_tokens(seq, num_tokens);
  }
  memory::AllocatorStats stats() const override { return inner_->stats(); }
  bool fits_alone(const memory::SeqInfo& seq) const override { return inner_->fits_alone(seq); }
  std::optional<std::int64_t> in_place_room(memory::SeqId id) const override {
    return defer_ ? inner_->in_place_room(id) : std::nullopt;
  }
  Bytes in_place_token_bytes() const override { return inner_->in_place_token_bytes(); }

 private:
  std::unique_ptr<memory::Allocator> inner_;
  bool defer_;
  std::int64_t* grows_;
};

}  // namespace

TEST_CASE("Contiguous allocation: a hole too small for the waiting head is external fragmentation",
          "[sim]") {
  // contiguous-oracle, first-fit, 100 slots; every step 1 ms. A (10 + 30 → 40 slots), B (10 + 10
  // → 20) and C (10 + 30 → 40) fill [0, 40), [40, 60), [60, 100); D (20 + 20 → 40) waits.
  // B ends at t=10, leaving a 20-slot hole that D cannot use: 20 slots of external
  // fragmentation until A and C end at t=30. D then runs alone, done at t=50.
  // Slot·ms over [0, 50) (see the comments in the expected values):
  //   token states  [0,30): 30 + Σ_{k=1..9} 3(10+k) + Σ_{k=10..29} 2(10+k) = 1,615
  //                 [30,50): 20 + Σ_{j=1..19} (20+j) = 590                    → 2,205
  //   reservation   [0,30): 70 + Σ_{k=1..9} (70−3k) + Σ_{k=10..29} 2(30−k) = 985
  //                 [30,50): 20 + Σ_{j=1..19} (20−j) = 210                     → 1,195
  //   external      [10,30): 20 × 20                                           →   400
  //   free          [30,50): 60 × 20                                           → 1,200
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  memory::AllocatorOptions alloc = slots(memory::AllocatorKind::kContiguousOracle, 100);
  alloc.placement = memory::Placement::kFirstFit;
  const auto run =
      run_real(small_options(), alloc, cost,
               {spec(0, 0, 10, 30), spec(1, 0, 10, 10), spec(2, 0, 10, 30), spec(3, 0, 20, 20)});
  REQUIRE(run.result.metrics.completed == 4);
  CHECK(run.ended.at(1).finish_ns == 10 * kMs);
  CHECK(run.ended.at(0).finish_ns == 30 * kMs);
  CHECK(run.ended.at(3).first_scheduled_ns == 30 * kMs);
  CHECK(run.ended.at(3).finish_ns == 50 * kMs);
  CHECK(run.result.duration_ns == 50 * kMs);
  const auto& f = run.result.fraction;
  CHECK(f.token_states == Approx(2205.0 / 5000));
  CHECK(f.reservation == Approx(1195.0 / 5000));
  CHECK(f.internal_fragmentation == 0.0);
  CHECK(f.external_fragmentation == Approx(400.0 / 5000));
  CHECK(f.free == Approx(1200.0 / 5000));
  CHECK(run.result.peak_used_bytes == 100 * 1000);
  CHECK(run.result.metrics.preemptions_recompute == 0);
}

TEST_CASE("Contiguous-max reserves the maximum length: the leftover is external fragmentation",
          "[sim]") {
  // Reservations of max_seq_len = 32 slots in 100: three fit (96), the 4 slots left cannot take
  // the fourth request, which waits. Everything is decided by reservations, not by lengths.
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  memory::AllocatorOptions alloc = slots(memory::AllocatorKind::kContiguousMax, 100);
  alloc.placement = memory::Placement::kFirstFit;
  alloc.max_seq_len = 32;
  sim::SimOptions opts = small_options();
  opts.scheduler.max_model_len = 32;
  const auto run = run_real(
      opts, alloc, cost, {spec(0, 0, 4, 4), spec(1, 0, 4, 4), spec(2, 0, 4, 4), spec(3, 0, 4, 4)});
  REQUIRE(run.result.metrics.completed == 4);
  CHECK(run.ended.at(3).first_scheduled_ns == 4 * kMs);
  // While request 3 waits ([0, 4) ms), the 4 free slots are external fragmentation.
  // Total 100 × 8 slot·ms (two rounds of 4 steps).
  CHECK(run.result.duration_ns == 8 * kMs);
  CHECK(run.result.fraction.external_fragmentation == Approx(4.0 * 4 / 800));
  // Internal fragmentation: 32 − 8 slots per request that will never be written.
  CHECK(run.result.fraction.internal_fragmentation == Approx((3 * 24 * 4 + 24 * 4) / 800.0));
}

TEST_CASE("Paged allocation: prefix caching with the real block pool", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.record = true;
  memory::AllocatorOptions alloc = slots(memory::AllocatorKind::kPaged, 64);
  alloc.block_size = 16;
  alloc.enable_prefix_caching = true;
  sim::SimOptions opts = small_options();
  opts.enable_prefix_caching = true;
  opts.block_size = 16;
  trace::RequestSpec a = spec(0, 0, 40, 2);
  a.prefix_hashes = {5, 6};  // 2 × 32 tokens
  a.prefix_block_tokens = 32;
  trace::RequestSpec b = a;
  b.id = 1;
  b.arrival_ns = 5 * kMs;
  const auto run = run_real(opts, alloc, cost, {a, b});
  REQUIRE(run.result.metrics.completed == 2);
  // b finds a's two full blocks (32 tokens) in the cache.
  CHECK(run.ended.at(1).cached_tokens == 32);
  CHECK(run.result.prefix_hit_tokens == 32);
  CHECK(run.result.prefix_query_tokens == 80);
  CHECK(run.result.prefix_cache_hit_rate() == Approx(0.4));
  bool saw = false;
  for (const auto& s : cost.seen) {
    for (const auto& p : s.prefills) saw = saw || (p.num_tokens == 8 && p.num_cached_tokens == 32);
  }
  CHECK(saw);
}

TEST_CASE("Prefix caching: a conversation's next turn finds the previous turn's answer cached",
          "[sim][prefix]") {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  memory::AllocatorOptions alloc = slots(memory::AllocatorKind::kPaged, 256);
  alloc.block_size = 16;
  alloc.enable_prefix_caching = true;
  sim::SimOptions opts = small_options();
  opts.enable_prefix_caching = true;
  opts.block_size = 16;
  // Turn 1: 40 prompt + 25 output tokens, one id per 16 (ids past the prompt's three blocks
  // describe its output). Its KV holds 64 tokens (the last token sampled is never fed back):
  // blocks 0..3 full.
  trace::RequestSpec t1 = spec(0, 0, 40, 25);
  t1.prefix_hashes = {5, 6, 7, 8};
  t1.prefix_block_tokens = 16;
  // Turn 2, after turn 1 ended: the 65 tokens so far and a 19-token question.
  trace::RequestSpec t2 = spec(1, 100 * kMs, 84, 2);
  t2.prefix_hashes = {5, 6, 7, 8, 9};
  t2.prefix_block_tokens = 16;
  const auto run = run_real(opts, alloc, cost, {t1, t2});
  REQUIRE(run.result.metrics.completed == 2);
  CHECK(run.ended.at(1).cached_tokens == 64);  // turn 1's prompt and answer
  // One output token fewer: block 3 never fills (its last slot would hold the unfed token).
  t1.output_tokens = 24;
  CHECK(run_real(opts, alloc, cost, {t1, t2}).ended.at(1).cached_tokens == 48);
  t1.output_tokens = 25;
  // The same turn 1 with ids for its prompt only: its answer is not cached; turn 2 finds the
  // prompt's two full blocks.
  t1.prefix_hashes = {5, 6, 7};
  const auto single = run_real(opts, alloc, cost, {t1, t2});
  CHECK(single.ended.at(1).cached_tokens == 32);
}

TEST_CASE("Invariants with the real allocators over many seeds", "[sim]") {
  int runs = 0;
  for (auto kind :
       {memory::AllocatorKind::kPaged, memory::AllocatorKind::kContiguousMax,
        memory::AllocatorKind::kContiguousPow2, memory::AllocatorKind::kContiguousOracle}) {
    for (auto sched : {sim::SchedulerKind::kVllm, sim::SchedulerKind::kChunkedPrefill,
                       sim::SchedulerKind::kStatic, sim::SchedulerKind::kVllmV1}) {
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        Rng rng(seed * 31 + static_cast<std::uint64_t>(kind) * 7 +
                static_cast<std::uint64_t>(sched));
        const int n = static_cast<int>(rng.uniform_int(1, 100));
        auto specs =
            random_workload(seed, n, static_cast<double>(rng.uniform_int(100, 4000)), 200, 150);
        const bool prefix = kind == memory::AllocatorKind::kPaged && seed % 2 == 0;
        if (prefix) share_prefixes(specs, 16, 3, rng);
        sim::SimOptions opts = small_options(sched);
        opts.scheduler.max_model_len = 360;
        opts.scheduler.max_num_seqs = rng.uniform_int(1, 32);
        if (sched == sim::SchedulerKind::kChunkedPrefill || sched == sim::SchedulerKind::kVllmV1) {
          opts.scheduler.max_num_batched_tokens = rng.uniform_int(16, 512);
        }
        // vLLM V1 has no swap.
        opts.scheduler.preemption = seed % 3 == 0 && sched != sim::SchedulerKind::kVllmV1
                                        ? sim::PreemptionMode::kSwap
                                        : sim::PreemptionMode::kRecompute;
        opts.enable_prefix_caching = prefix;
        opts.num_replicas = 1 + static_cast<std::int64_t>(seed % 2);
        opts.block_size = 8;
        memory::AllocatorOptions alloc = slots(kind, rng.uniform_int(400, 1500));
        alloc.block_size = 8;
        alloc.max_seq_len = 360;
        alloc.watermark = 0.01;
        alloc.enable_prefix_caching = prefix;
        alloc.cpu_swap_bytes = opts.scheduler.preemption == sim::PreemptionMode::kSwap
                                   ? static_cast<Bytes>(rng.uniform_int(0, 3000)) * 1000
                                   : 0;
        alloc.placement = seed % 2 ? memory::Placement::kBuddy : memory::Placement::kBestFit;
        FixedCostModel cost;
        cost.per_step_ns = rng.uniform_int(100, 3000) * 1000;
        cost.per_prefill_token_ns = rng.uniform_int(0, 20) * 1000;
        cost.swap_ns_per_byte = 1;
        INFO("allocator " << memory::allocator_kind_name(kind) << " scheduler "
                          << sim::scheduler_name(sched) << " seed " << seed);
        const SimRun run = run_real(opts, alloc, cost, specs);
        check_run(run, specs, n);
        const auto& f = run.result.fraction;
        if (kind == memory::AllocatorKind::kPaged) CHECK(f.external_fragmentation == 0.0);
        const SimRun again = run_real(opts, alloc, cost, specs);
        CHECK(again.result.duration_ns == run.result.duration_ns);
        CHECK(again.result.fraction.token_states == run.result.fraction.token_states);
        CHECK(again.result.metrics.ttft.mean() == run.result.metrics.ttft.mean());
        ++runs;
      }
    }
  }
  CHECK(runs == 96);
}

TEST_CASE("Deferred growth changes nothing: the same run with every token told to the allocator",
          "[sim]") {
  // The replica counts a decode token in a tail block it holds itself and tells the paged
  // allocator at the next real growth, a swap-out or a free. Under memory pressure (preemption by
  // recompute and by swap, prefix caching, chunked prefill, two replicas), every observable
  // result must equal the run where the allocator hears of each token at once.
  int runs = 0;
  for (auto sched : {sim::SchedulerKind::kVllm, sim::SchedulerKind::kChunkedPrefill,
                     sim::SchedulerKind::kStatic}) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      Rng rng(seed * 131 + static_cast<std::uint64_t>(sched));
      const int n = static_cast<int>(rng.uniform_int(20, 120));
      auto specs = random_workload(seed, n, 2000.0, 200, 150);
      const bool prefix = seed % 2 == 0;
      if (prefix) share_prefixes(specs, 8, 4, rng);
      sim::SimOptions opts = small_options(sched);
      opts.scheduler.max_model_len = 360;
      opts.scheduler.max_num_seqs = rng.uniform_int(4, 48);
      opts.scheduler.max_num_batched_tokens = rng.uniform_int(400, 1000);
      if (sched == sim::SchedulerKind::kChunkedPrefill) {
        opts.scheduler.max_num_batched_tokens = rng.uniform_int(16, 512);
      }
      opts.scheduler.preemption =
          seed % 3 == 0 ? sim::PreemptionMode::kSwap : sim::PreemptionMode::kRecompute;
      opts.enable_prefix_caching = prefix;
      opts.num_replicas = 1 + static_cast<std::int64_t>(seed % 2);
      opts.block_size = 8;
      opts.timeline_points = 64;
      memory::AllocatorOptions alloc =
          slots(memory::AllocatorKind::kPaged, rng.uniform_int(400, 900));
      alloc.block_size = 8;
      alloc.watermark = 0.01;
      alloc.enable_prefix_caching = prefix;
      alloc.cpu_swap_bytes = static_cast<Bytes>(rng.uniform_int(0, 3000)) * 1000;
      FixedCostModel cost;
      cost.per_step_ns = rng.uniform_int(100, 3000) * 1000;
      cost.per_prefill_token_ns = rng.uniform_int(0, 20) * 1000;
      cost.per_decode_ns = rng.uniform_int(0, 50) * 1000;
      cost.swap_ns_per_byte = 1;
      INFO("scheduler " << sim::scheduler_name(sched) << " seed " << seed);
      std::int64_t deferred_grows = 0, told_grows = 0;
      SimRun deferred, told;
      simulate_into(
          deferred, opts, [&] { return std::make_unique<Relay>(alloc, true, &deferred_grows); },
          cost, specs);
      simulate_into(
          told, opts, [&] { return std::make_unique<Relay>(alloc, false, &told_grows); }, cost,
          specs);
      CHECK(deferred_grows < told_grows);
      const sim::SimResult& a = deferred.result;
      const sim::SimResult& b = told.result;
      REQUIRE(a.metrics.completed + a.metrics.rejected() == n);
      CHECK(a.duration_ns == b.duration_ns);
      CHECK(a.metrics.num_steps == b.metrics.num_steps);
      CHECK(a.metrics.preemptions_recompute == b.metrics.preemptions_recompute);
      CHECK(a.metrics.preemptions_swap == b.metrics.preemptions_swap);
      CHECK(a.metrics.swap_out_bytes == b.metrics.swap_out_bytes);
      CHECK(a.prefix_hit_tokens == b.prefix_hit_tokens);
      CHECK(a.peak_used_bytes == b.peak_used_bytes);
      CHECK(a.fraction.token_states == b.fraction.token_states);
      CHECK(a.fraction.reservation == b.fraction.reservation);
      CHECK(a.fraction.internal_fragmentation == b.fraction.internal_fragmentation);
      CHECK(a.fraction.free == b.fraction.free);
      REQUIRE(a.timeline.size() == b.timeline.size());
      for (std::size_t i = 0; i < a.timeline.size(); ++i) {
        CHECK(a.timeline[i].token_state_bytes == b.timeline[i].token_state_bytes);
        CHECK(a.timeline[i].reserved_bytes == b.timeline[i].reserved_bytes);
        CHECK(a.timeline[i].used_bytes == b.timeline[i].used_bytes);
      }
      for (const auto& [id, r] : deferred.ended) {
        const sim::Request& t = told.ended.at(id);
        CHECK(r.finish_ns == t.finish_ns);
        CHECK(r.first_token_ns == t.first_token_ns);
        CHECK(r.num_preemptions == t.num_preemptions);
        CHECK(r.cached_tokens == t.cached_tokens);
      }
      runs += a.metrics.preemptions_recompute + a.metrics.preemptions_swap > 0 ? 1 : 0;
    }
  }
  CHECK(runs >= 6);  // memory pressure did preempt
}

namespace {

// KV offload, hand-worked: 4 GPU blocks of 4 tokens × 1,000 bytes, a CPU tier of 4 blocks;
// vllm-v1, 1 ms per step + 0.1 ms per prefill token. A (9 tokens, prefix blocks 1, 2) runs at
// t = 0; B (13 tokens, other blocks) at 10 ms needs all 4 blocks and evicts A's two cached
// blocks into the CPU tier; C (A's prompt) arrives at 20 ms.
SimRun run_offload(Bytes offload_bytes, double bandwidth_bytes_per_s,
                   std::vector<FixedCostModel::Seen>* seen = nullptr) {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  cost.per_prefill_token_ns = kMs / 10;
  cost.swap_ns_per_byte = 10;  // the "GPU profile's PCIe": 100 MB/s
  cost.record = true;
  memory::AllocatorOptions alloc = slots(memory::AllocatorKind::kPaged, 16);
  alloc.block_size = 4;
  alloc.enable_prefix_caching = true;
  alloc.cpu_offload_bytes = offload_bytes;
  sim::SimOptions opts = small_options(sim::SchedulerKind::kVllmV1);
  opts.scheduler.max_num_batched_tokens = 2048;
  opts.enable_prefix_caching = true;
  opts.block_size = 4;
  opts.kv_offload_bytes = offload_bytes;
  opts.kv_offload_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  std::vector<trace::RequestSpec> specs{spec(0, 0, 9, 1), spec(1, 10 * kMs, 13, 1),
                                        spec(2, 20 * kMs, 9, 1)};
  for (auto& s : specs) s.prefix_block_tokens = 4;
  specs[0].prefix_hashes = {1, 2};
  specs[1].prefix_hashes = {7, 8, 9};
  specs[2].prefix_hashes = {1, 2};
  SimRun run = run_real(opts, alloc, cost, specs);
  if (seen != nullptr) *seen = cost.seen;
  return run;
}

}  // namespace

TEST_CASE("KV offload: a prefix evicted to the CPU tier is loaded, not recomputed", "[sim]") {
  // Without offload C recomputes its 9 tokens: TTFT = 1 + 9 × 0.1 = 1.9 ms.
  const SimRun off = run_offload(0, 0);
  REQUIRE(off.result.metrics.completed == 3);
  CHECK(off.ended.at(2).first_token_ns - 20 * kMs == 1'900'000);
  CHECK(off.ended.at(2).cached_tokens == 0);
  // With offload C's two blocks (8 tokens, 8,000 bytes) come from the CPU tier at 100 MB/s:
  // 80 µs on the link, then one step with the last token: TTFT = 0.08 + 1 + 0.1 = 1.18 ms,
  // 0.72 ms sooner (8 tokens × 0.1 ms of compute saved, less the 0.08 ms load).
  std::vector<FixedCostModel::Seen> on_seen;
  const SimRun on = run_offload(16'000, 1e8, &on_seen);
  REQUIRE(on.result.metrics.completed == 3);
  const sim::Request& c = on.ended.at(2);
  CHECK(c.first_token_ns - 20 * kMs == 1'180'000);
  CHECK(c.first_scheduled_ns == 20 * kMs);  // admitted at once; the load is not queueing
  CHECK(c.cached_tokens == 8);
  CHECK(off.ended.at(2).first_token_ns - c.first_token_ns == 720'000);
  const sim::Metrics& m = on.result.metrics;
  CHECK(m.offload_loads == 1);
  CHECK(m.offload_load_bytes == 8000);
  CHECK(m.offload_load_ns == 80'000);
  CHECK(on.result.prefix_cpu_hit_tokens == 8);
  CHECK(on.result.prefix_hit_tokens == 0);
  CHECK(on.result.prefix_query_tokens == 31);
  CHECK(on.result.offload.stored_blocks == 4);  // A's two, then two of B's
  CHECK(on.result.offload.capacity_blocks == 4);
  // The step after the load computes one token after 8 cached ones.
  bool saw = false;
  for (const auto& s : on_seen) {
    for (const auto& p : s.prefills) saw = saw || (p.num_tokens == 1 && p.num_cached_tokens == 8);
  }
  CHECK(saw);
  // Without a bandwidth the load takes the cost model's swap time: the same 10 ns per byte.
  const SimRun profile = run_offload(16'000, 0);
  CHECK(profile.ended.at(2).first_token_ns == c.first_token_ns);
  CHECK(profile.result.metrics.offload_load_ns == 80'000);
}

TEST_CASE("KV offload keeps the invariants over many seeds", "[sim]") {
  std::int64_t cpu_hits = 0;
  for (auto sched : {sim::SchedulerKind::kVllmV1, sim::SchedulerKind::kChunkedPrefill}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      Rng rng(seed * 17 + static_cast<std::uint64_t>(sched));
      const int n = static_cast<int>(rng.uniform_int(20, 120));
      auto specs =
          random_workload(seed, n, static_cast<double>(rng.uniform_int(100, 4000)), 200, 150);
      share_prefixes(specs, 8, rng.uniform_int(1, 12), rng);
      sim::SimOptions opts = small_options(sched);
      opts.scheduler.max_model_len = 360;
      opts.scheduler.max_num_seqs = rng.uniform_int(1, 32);
      opts.scheduler.max_num_batched_tokens = rng.uniform_int(360, 1024);
      opts.enable_prefix_caching = true;
      opts.num_replicas = 1 + static_cast<std::int64_t>(seed % 2);
      opts.block_size = 8;
      opts.kv_offload_bytes = static_cast<Bytes>(rng.uniform_int(1, 200)) * 8 * 1000;
      opts.kv_offload_bandwidth_bytes_per_s = seed % 3 == 0 ? 0.0 : 1e9;
      const memory::AllocatorOptions alloc =
          cached_paged(rng.uniform_int(400, 1500), opts.kv_offload_bytes);
      FixedCostModel cost;
      cost.per_step_ns = rng.uniform_int(100, 3000) * 1000;
      cost.per_prefill_token_ns = rng.uniform_int(0, 20) * 1000;
      cost.swap_ns_per_byte = 1;
      INFO("scheduler " << sim::scheduler_name(sched) << " seed " << seed);
      const SimRun run = run_real(opts, alloc, cost, specs);
      check_run(run, specs, n);
      const sim::Metrics& m = run.result.metrics;
      CHECK(m.offload_load_bytes == run.result.offload.loaded_bytes);
      CHECK(run.result.offload.blocks_held <= run.result.offload.capacity_blocks);
      cpu_hits += run.result.prefix_cpu_hit_tokens;
      const SimRun again = run_real(opts, alloc, cost, specs);
      CHECK(again.result.duration_ns == run.result.duration_ns);
      CHECK(again.result.metrics.ttft.mean() == run.result.metrics.ttft.mean());
    }
  }
  CHECK(cpu_hits > 0);  // the tier is exercised
}

TEST_CASE("vLLM V1's batch queue over pipeline stages keeps the invariants with the real allocator",
          "[sim][pp][v1]") {
  // Prefix caching, the CPU offload tier and preemption by recompute, with up to 3 steps in
  // flight over 3 stages: every request ends once, every finished one with all its tokens, the
  // fractions sum to 1, and the same inputs give the same run.
  // Counts the steps that start while another is in flight (the batch queue at work).
  struct Overlaps final : sim::SimObserver {
    TimeNs last_end = 0;
    std::int64_t count = 0;
    void on_step(const sim::StepEvent& e) override {
      if (e.start_ns < last_end) ++count;
      last_end = std::max(last_end, e.end_ns);
    }
  };
  std::int64_t preemptions = 0, overlapping = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed * 13 + 5);
    const int n = static_cast<int>(rng.uniform_int(20, 120));
    auto specs =
        random_workload(seed, n, static_cast<double>(rng.uniform_int(100, 4000)), 200, 150);
    share_prefixes(specs, 8, rng.uniform_int(1, 12), rng);
    sim::SimOptions opts = small_options(sim::SchedulerKind::kVllmV1);
    opts.scheduler.max_model_len = 360;
    opts.scheduler.max_num_seqs = rng.uniform_int(1, 32);
    opts.scheduler.max_num_batched_tokens = rng.uniform_int(16, 512);
    opts.scheduler.cuda_graph_max_size = seed % 2 == 0 ? 0 : 64;
    opts.enable_prefix_caching = true;
    opts.block_size = 8;
    opts.kv_offload_bytes = seed % 3 == 0 ? 0 : static_cast<Bytes>(rng.uniform_int(1, 200)) * 8000;
    memory::AllocatorOptions alloc =
        cached_paged(rng.uniform_int(400, 1500), opts.kv_offload_bytes);
    alloc.max_seq_len = 360;
    std::vector<std::unique_ptr<cost::CostModel>> stages;
    std::vector<cost::StageTransfer> links;
    for (int s = 0; s < 3; ++s) {
      auto c = std::make_unique<FixedCostModel>();
      c->per_step_ns = rng.uniform_int(100, 3000) * 1000;
      c->per_prefill_token_ns = rng.uniform_int(0, 20) * 1000;
      c->per_decode_ns = rng.uniform_int(0, 100) * 1000;
      stages.push_back(std::move(c));
      if (s < 2) links.push_back({64, model::Link{1e9, 0, true}});
    }
    const cost::PipelineCostModel pipeline(std::move(stages), std::move(links));
    const auto setup = [&] {
      sim::SimSetup s;
      s.options = opts;
      s.cost_model = &pipeline;
      s.pipeline = &pipeline;
      s.make_allocator = [alloc] { return memory::make_allocator(alloc); };
      return s;
    };
    const auto run_once = [&] {
      SimRun run;
      simulate_into(run, setup(), specs);
      return run;
    };
    {
      VectorReader reader(specs);
      Overlaps observer;
      (void)sim::simulate(setup(), reader, &observer);
      overlapping += observer.count;
    }
    INFO("seed " << seed);
    const SimRun run = run_once();
    check_run(run, specs, n);
    preemptions += run.result.metrics.preemptions_recompute;
    const SimRun again = run_once();
    CHECK(again.result.duration_ns == run.result.duration_ns);
    CHECK(again.result.metrics.ttft.mean() == run.result.metrics.ttft.mean());
    CHECK(again.result.metrics.num_steps == run.result.metrics.num_steps);
  }
  CHECK(preemptions > 0);  // preemption with steps in flight is exercised
  CHECK(overlapping > 0);  // steps in flight together
}
