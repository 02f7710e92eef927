// The paged allocator with a CPU offload tier: cached blocks the GPU evicts move to the tier, and
// an admission continues its GPU prefix hit with the blocks the tier holds (loaded, not
// recomputed).

#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "memory/allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {
namespace {

// 4 GPU blocks of 4 tokens × 1,000 bytes (a page is 4,000 bytes); a CPU tier of `cpu_bytes`.
AllocatorOptions offload_options(Bytes cpu_bytes) {
  AllocatorOptions o;
  o.kind = AllocatorKind::kPaged;
  o.bytes_per_slot = 1000;
  o.block_size = 4;
  o.capacity_bytes = 4 * 4000;
  o.watermark = 0;
  o.enable_prefix_caching = true;
  o.cpu_offload_bytes = cpu_bytes;
  return o;
}

SeqInfo req(SeqId id, std::int64_t prompt, const std::vector<std::uint64_t>& ids) {
  return SeqInfo{id, prompt, prompt, ids};
}

const std::vector<std::uint64_t> kA{1, 2};     // two full blocks of a 9-token prompt
const std::vector<std::uint64_t> kB{7, 8, 9};  // three of a 13-token prompt

TEST_CASE("the CPU tier's capacity is its bytes in whole pages", "[memory][offload]") {
  CHECK(PagedAllocator(offload_options(4 * 4000 + 3999)).cpu_tier()->capacity() == 4);
  CHECK(PagedAllocator(offload_options(3999)).cpu_tier()->capacity() == 0);
  CHECK(PagedAllocator(offload_options(0)).cpu_tier() == nullptr);
}

TEST_CASE("blocks evicted from the GPU land in the CPU tier and are loaded by a later prefix hit",
          "[memory][offload]") {
  PagedAllocator a(offload_options(4 * 4000));
  REQUIRE(a.admit(req(1, 9, kA), 9));  // blocks 0, 1 (cached: A1, A2) and 2 (a partial tail)
  a.free(1);                           // tail first: 2 plain free; LRU A2 (oldest), A1
  // B takes block 2 and fresh block 3, then evicts A2 and A1, in LRU order, into the CPU tier.
  REQUIRE(a.admit(req(2, 13, kB), 13));
  CHECK(a.stats().evictions == 2);
  CHECK(a.cpu_tier()->size() == 2);
  CHECK(a.stats().offload.stored_blocks == 2);
  CHECK(a.stats().offload.stored_bytes == 8000);
  a.free(2);  // its last block (token 12) plain free; LRU B3, B2, B1
  // C has A's prompt: no GPU hit, both blocks in the CPU tier, 8 tokens (the 9th is computed).
  CHECK(a.cached_prefix_tokens(req(3, 9, kA), 9) == 8);
  const auto c = a.admit(req(3, 9, kA), 9);
  REQUIRE(c);
  CHECK(c->cached_tokens == 8);
  CHECK(c->loaded_tokens == 8);
  CHECK(c->loaded_bytes == 2 * 4000);
  // Its 3 blocks: the plain free one, then B3 and B2 evicted into the tier (4 blocks: A1, A2
  // touched by the load, then B3, B2).
  CHECK(a.cpu_tier()->size() == 4);
  const AllocatorStats s = a.stats();
  CHECK(s.offload.capacity_blocks == 4);
  CHECK(s.offload.blocks_held == 4);
  CHECK(s.offload.stored_blocks == 4);
  CHECK(s.offload.dropped_blocks == 0);
  CHECK(s.offload.loaded_blocks == 2);
  CHECK(s.offload.loaded_bytes == 8000);
  CHECK(s.prefix_cache.hit_tokens == 0);  // the GPU's hits
  CHECK(s.prefix_cache.cpu_hit_tokens == 8);
  CHECK(s.prefix_cache.cpu_hit_blocks == 2);
  CHECK(s.prefix_cache.query_tokens == 9 + 13 + 9);
  CHECK(s.prefix_cache.cpu_hit_rate() == Approx(8.0 / 31));
  // The loaded blocks are GPU-cached again: D, the same prompt, hits them on the GPU.
  const auto d = a.admit(req(4, 9, kA), 9);
  REQUIRE(d);
  CHECK(d->cached_tokens == 8);
  CHECK(d->loaded_tokens == 0);
  CHECK(a.block_table(4)[0] == a.block_table(3)[0]);
  a.check_invariants();
  a.cpu_tier()->check_invariants();
}

TEST_CASE("a CPU hit continues the GPU hit only with consecutive blocks", "[memory][offload]") {
  PagedAllocator a(offload_options(4 * 4000));
  REQUIRE(a.admit(req(1, 9, kA), 9));
  a.free(1);
  REQUIRE(a.admit(req(2, 13, kB), 13));  // A2, A1 to the CPU
  a.free(2);
  // Same first block, another second: only block 0 (4 tokens) is loaded.
  const auto c = a.admit(req(3, 9, {1, 5}), 9);
  REQUIRE(c);
  CHECK(c->cached_tokens == 4);
  CHECK(c->loaded_tokens == 4);
  CHECK(c->loaded_bytes == 4000);
  a.check_invariants();
}

TEST_CASE("without a CPU tier evicted blocks are gone", "[memory][offload]") {
  PagedAllocator a(offload_options(0));
  REQUIRE(a.admit(req(1, 9, kA), 9));
  a.free(1);
  REQUIRE(a.admit(req(2, 13, kB), 13));
  a.free(2);
  const auto c = a.admit(req(3, 9, kA), 9);
  REQUIRE(c);
  CHECK(c->cached_tokens == 0);
  CHECK(c->loaded_bytes == 0);
  CHECK(a.stats().offload.capacity_blocks == 0);
}

TEST_CASE("a CPU offload tier needs the paged allocator, prefix caching and full attention",
          "[memory][offload]") {
  AllocatorOptions o = offload_options(4000);
  o.enable_prefix_caching = false;
  CHECK_THROWS_WITH(validate_allocator_options(o), Catch::Contains("needs prefix caching"));
  o = offload_options(4000);
  o.kind = AllocatorKind::kContiguousOracle;
  CHECK_THROWS_WITH(validate_allocator_options(o), Catch::Contains("needs the paged allocator"));
  o = offload_options(4000);
  o.groups = {KvGroupSpec{1000, 0}, KvGroupSpec{1000, 8}};
  CHECK_THROWS_WITH(validate_allocator_options(o), Catch::Contains("full-attention models only"));
}

}  // namespace
}  // namespace kvsim::memory
