// Properties that hold for every workload, policy and seed.
#include <sstream>

#include <catch2/catch.hpp>

#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;

namespace {

std::string fingerprint(const SimRun& run) {
  const sim::SimResult& r = run.result;
  const sim::Metrics& m = r.metrics;
  std::ostringstream s;
  s.precision(17);
  s << m.completed << ' ' << m.rejected() << ' ' << r.duration_ns << ' ' << m.ttft.mean() << ' '
    << m.ttft.percentile(99) << ' ' << m.tpot.percentile(50) << ' ' << m.itl.percentile(90) << ' '
    << m.e2e.max() << ' ' << m.queue.mean() << ' ' << m.preemptions_recompute << ' '
    << m.preemptions_swap << ' ' << r.fraction.token_states << ' ' << r.fraction.reservation << ' '
    << r.mean_running << ' ' << r.num_events << ' ' << m.num_sequence_steps;
  for (const auto& [id, req] : run.ended) s << ' ' << req.finish_ns;
  return s.str();
}

struct Case {
  sim::SchedulerKind scheduler;
  sim::PreemptionMode preemption;
  bool reserve_final;
  std::int64_t replicas;
  sim::RouterKind router;
  bool prefix;
};

}  // namespace

TEST_CASE("Invariants over random workloads, policies and seeds", "[sim]") {
  const std::vector<Case> cases = {
      {sim::SchedulerKind::kVllm, sim::PreemptionMode::kRecompute, false, 1,
       sim::RouterKind::kRoundRobin, false},
      {sim::SchedulerKind::kVllm, sim::PreemptionMode::kSwap, false, 1,
       sim::RouterKind::kRoundRobin, false},
      {sim::SchedulerKind::kVllm, sim::PreemptionMode::kRecompute, true, 1,
       sim::RouterKind::kRoundRobin, false},
      {sim::SchedulerKind::kChunkedPrefill, sim::PreemptionMode::kRecompute, false, 1,
       sim::RouterKind::kRoundRobin, true},
      {sim::SchedulerKind::kChunkedPrefill, sim::PreemptionMode::kSwap, false, 2,
       sim::RouterKind::kLeastOutstanding, false},
      {sim::SchedulerKind::kStatic, sim::PreemptionMode::kRecompute, false, 1,
       sim::RouterKind::kRoundRobin, false},
      {sim::SchedulerKind::kStatic, sim::PreemptionMode::kSwap, true, 3,
       sim::RouterKind::kLeastKvUsage, false},
      {sim::SchedulerKind::kVllm, sim::PreemptionMode::kSwap, false, 3,
       sim::RouterKind::kPrefixAware, true},
      {sim::SchedulerKind::kVllmV1, sim::PreemptionMode::kRecompute, false, 1,
       sim::RouterKind::kRoundRobin, true},
      {sim::SchedulerKind::kVllmV1, sim::PreemptionMode::kRecompute, true, 2,
       sim::RouterKind::kLeastOutstanding, false},
      {sim::SchedulerKind::kChunkedPrefill, sim::PreemptionMode::kRecompute, false, 1,
       sim::RouterKind::kRoundRobin, true},  // partial prefills (below)
  };
  int runs = 0;
  for (const Case& c : cases) {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      Rng rng(seed * 7919);
      const int n = static_cast<int>(rng.uniform_int(1, 120));
      auto specs = random_workload(seed, n, /*rate_per_s=*/rng.uniform_int(50, 3000), 300, 200);
      if (c.prefix) {
        for (auto& s : specs) {
          s.prefix_block_tokens = 32;
          const auto blocks = static_cast<std::size_t>((s.prompt_tokens + 31) / 32);
          for (std::size_t b = 0; b < blocks; ++b) {
            s.prefix_hashes.push_back(b < 2 ? b : rng.next_u64());  // a shared 64-token prefix
          }
        }
      }
      sim::SimOptions opts = small_options(c.scheduler);
      opts.scheduler.max_model_len = 480;
      opts.scheduler.preemption = c.preemption;
      opts.scheduler.max_num_seqs = rng.uniform_int(1, 40);
      if (c.scheduler != sim::SchedulerKind::kVllm && c.scheduler != sim::SchedulerKind::kStatic) {
        opts.scheduler.max_num_batched_tokens = rng.uniform_int(1, 600);
        opts.scheduler.long_prefill_token_threshold = rng.uniform_int(0, 200);
        opts.scheduler.cuda_graph_max_size = rng.uniform_int(0, 64);
      }
      if (&c == &cases.back()) {
        opts.scheduler.max_num_partial_prefills = rng.uniform_int(1, 4);
        opts.scheduler.max_long_partial_prefills =
            rng.uniform_int(1, opts.scheduler.max_num_partial_prefills);
      }
      opts.num_replicas = c.replicas;
      opts.router = c.router;
      opts.enable_prefix_caching = c.prefix;
      FakeAllocator::Options alloc;
      alloc.block_size = rng.uniform_int(1, 32);
      alloc.num_blocks = (480 + alloc.block_size) / alloc.block_size + rng.uniform_int(0, 60);
      alloc.watermark_blocks = rng.uniform_int(0, 3);
      alloc.reserve_final = c.reserve_final;
      alloc.bytes_per_slot = 100;
      alloc.cpu_swap_bytes = static_cast<Bytes>(rng.uniform_int(0, 2000)) * 100;
      opts.block_size = alloc.block_size;
      FixedCostModel cost;
      cost.per_step_ns = rng.uniform_int(1, 5000) * 1000;
      cost.per_prefill_token_ns = rng.uniform_int(0, 50) * 1000;
      cost.per_decode_ns = rng.uniform_int(0, 200) * 1000;
      cost.swap_ns_per_byte = rng.uniform_int(0, 20);

      const SimRun run = run_sim(opts, alloc, cost, specs);
      const sim::Metrics& m = run.result.metrics;
      INFO("case " << sim::scheduler_name(c.scheduler) << "/" << sim::preemption_name(c.preemption)
                   << " replicas " << c.replicas << " seed " << seed << " n " << n);
      // Every request ends exactly once, completed or rejected.
      REQUIRE(run.num_end_calls == n);
      REQUIRE(run.ended.size() == static_cast<std::size_t>(n));
      CHECK(m.arrived == n);
      CHECK(m.completed + m.rejected() == n);
      CHECK(run.result.requests_unfinished == 0);
      // Tokens generated = tokens requested, for every completed request.
      std::int64_t requested = 0, generated = 0;
      for (const auto& s : specs) {
        const sim::Request& r = run.ended.at(s.id);
        if (r.state == sim::RequestState::kFinished) {
          CHECK(r.generated == s.output_tokens);
          CHECK(r.first_token_ns >= r.first_scheduled_ns);
          CHECK(r.first_scheduled_ns >= r.arrival_ns);
          CHECK(r.finish_ns >= r.first_token_ns);
          requested += s.output_tokens;
          generated += r.generated;
        } else {
          REQUIRE(r.state == sim::RequestState::kRejected);
          CHECK(r.reject_reason != sim::RejectReason::kNone);
        }
      }
      CHECK(generated == requested);
      CHECK(m.output_tokens == requested);
      // Memory: never beyond capacity (the fake asserts it on every call), all freed at the end.
      for (const auto& a : run.allocators) {
        CHECK(a->peak_used_blocks <= alloc.num_blocks);
        CHECK(a->used_blocks_at_end == 0);
      }
      CHECK(run.result.peak_used_bytes <= run.result.capacity_bytes);
      const auto& f = run.result.fraction;
      CHECK(f.token_states + f.reservation + f.internal_fragmentation + f.external_fragmentation +
                f.free ==
            Approx(1.0).epsilon(1e-12));
      CHECK(run.result.max_running <= opts.scheduler.max_num_seqs);
      // Same inputs, same seed: the same run.
      const SimRun again = run_sim(opts, alloc, cost, specs);
      CHECK(fingerprint(again) == fingerprint(run));
      ++runs;
    }
  }
  CHECK(runs == 132);
}
