// Allocator micro-benchmarks: admit / grow / free, the prefix-cache lookup path, and accounting.
// Run: build/tests/bench/kvsim_bench --benchmark_filter=Memory
// items_per_second is allocator calls (admit, grow, free, lookup) per second.

#include <benchmark/benchmark.h>

#include <vector>

#include "common/rng.h"
#include "memory/allocator.h"

namespace {

using namespace kvsim::memory;

AllocatorOptions options(AllocatorKind kind, Placement placement = Placement::kBuddy,
                         bool caching = false) {
  AllocatorOptions o;
  o.kind = kind;
  o.placement = placement;
  o.bytes_per_slot = 819'200;            // OPT-13B
  o.capacity_bytes = 12'000'000'000ULL;  // 915 blocks of 16 / 14,648 slots
  o.enable_prefix_caching = caching;
  return o;
}

// A steady state of 4 live sequences; each iteration admits one (prompt of 200–1,000 tokens),
// decodes it 32 tokens one at a time and frees the oldest: 34 calls per iteration.
void run_churn(benchmark::State& state, const AllocatorOptions& o) {
  auto alloc = make_allocator(o);
  kvsim::Rng rng(1);
  std::vector<SeqId> live;
  SeqId next = 1;
  const auto admit_one = [&]() {
    const std::int64_t prompt = rng.uniform_int(200, 1000);
    const SeqInfo info{next, prompt, prompt + 40, {}};
    if (alloc->admit(info, prompt)) live.push_back(next);
    ++next;
  };
  for (int i = 0; i < 4; ++i) admit_one();
  std::int64_t calls = 0;
  for (auto _ : state) {
    admit_one();
    if (live.size() != 5) {
      state.SkipWithError("admission refused: the steady state does not fit");
      break;
    }
    const SeqId id = live.back();
    for (int t = 0; t < 32; ++t) benchmark::DoNotOptimize(alloc->grow(id, 1));
    alloc->free(live.front());
    live.erase(live.begin());
    calls += 34;
  }
  state.SetItemsProcessed(calls);
}

void BM_MemoryPagedAdmitGrowFree(benchmark::State& state) {
  run_churn(state, options(AllocatorKind::kPaged));
}
void BM_MemoryPagedCachingAdmitGrowFree(benchmark::State& state) {
  run_churn(state, options(AllocatorKind::kPaged, Placement::kBuddy, true));
}
void BM_MemoryContiguousOracleBuddyAdmitGrowFree(benchmark::State& state) {
  run_churn(state, options(AllocatorKind::kContiguousOracle, Placement::kBuddy));
}
void BM_MemoryContiguousOracleFirstFitAdmitGrowFree(benchmark::State& state) {
  run_churn(state, options(AllocatorKind::kContiguousOracle, Placement::kFirstFit));
}
BENCHMARK(BM_MemoryPagedAdmitGrowFree);
BENCHMARK(BM_MemoryPagedCachingAdmitGrowFree);
BENCHMARK(BM_MemoryContiguousOracleBuddyAdmitGrowFree);
BENCHMARK(BM_MemoryContiguousOracleFirstFitAdmitGrowFree);

// The prefix-cache lookup path: a prompt of range(0) blocks whose every block is cached (held by
// a live sequence), looked up without admitting (chain hashing + one map probe per block).
void BM_MemoryPrefixLookup(benchmark::State& state) {
  const std::int64_t blocks = state.range(0);
  AllocatorOptions o = options(AllocatorKind::kPaged, Placement::kBuddy, true);
  o.capacity_bytes = static_cast<kvsim::Bytes>(4 * blocks + 64) * 16 * o.bytes_per_slot;
  auto alloc = make_allocator(o);
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(blocks));
  for (std::size_t j = 0; j < ids.size(); ++j) ids[j] = 1000 + j;
  const std::int64_t prompt = blocks * 16 + 1;
  if (!alloc->admit(SeqInfo{1, prompt, prompt + 10, ids}, prompt)) state.SkipWithError("admit");
  const SeqInfo probe{2, prompt, prompt + 10, ids};
  std::int64_t hit = 0;
  for (auto _ : state) {
    hit = alloc->cached_prefix_tokens(probe, prompt);
    benchmark::DoNotOptimize(hit);
  }
  if (hit != blocks * 16) state.SkipWithError("expected a full hit");
  state.SetItemsProcessed(state.iterations());
  state.counters["blocks_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * blocks), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MemoryPrefixLookup)->Arg(8)->Arg(128);

// Admit with a full prefix hit and free again (shared blocks: reference counts only).
void BM_MemoryPrefixHitAdmitFree(benchmark::State& state) {
  const std::int64_t blocks = state.range(0);
  AllocatorOptions o = options(AllocatorKind::kPaged, Placement::kBuddy, true);
  o.capacity_bytes = static_cast<kvsim::Bytes>(4 * blocks + 64) * 16 * o.bytes_per_slot;
  auto alloc = make_allocator(o);
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(blocks));
  for (std::size_t j = 0; j < ids.size(); ++j) ids[j] = 1000 + j;
  const std::int64_t prompt = blocks * 16 + 1;
  if (!alloc->admit(SeqInfo{1, prompt, prompt + 10, ids}, prompt)) state.SkipWithError("admit");
  for (auto _ : state) {
    const auto r = alloc->admit(SeqInfo{2, prompt, prompt + 10, ids}, prompt);
    benchmark::DoNotOptimize(r);
    alloc->free(2);
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_MemoryPrefixHitAdmitFree)->Arg(8)->Arg(128);

// byte_accounting() with range(0) running paged sequences (what the simulator calls each step).
void BM_MemoryPagedAccounting(benchmark::State& state) {
  AllocatorOptions o = options(AllocatorKind::kPaged);
  o.capacity_bytes = 100'000'000'000ULL;
  auto alloc = make_allocator(o);
  for (SeqId id = 1; id <= static_cast<SeqId>(state.range(0)); ++id) {
    if (!alloc->admit(SeqInfo{id, 300, 400, {}}, 300)) state.SkipWithError("admit");
  }
  for (auto _ : state) benchmark::DoNotOptimize(alloc->byte_accounting(nullptr));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemoryPagedAccounting)->Arg(16)->Arg(256);

}  // namespace
