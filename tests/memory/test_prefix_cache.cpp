// Prefix caching in the paged allocator (vLLM v1 semantics): full prompt blocks identified by a
// chained hash of content ids, shared across sequences and counted once, kept after release in
// an LRU of evictable blocks, evicted only when a fresh block is needed.

#include <vector>

#include <catch2/catch.hpp>

#include "memory/allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {
namespace {

AllocatorOptions caching_options(std::int64_t num_blocks) {
  AllocatorOptions o;
  o.kind = AllocatorKind::kPaged;
  o.bytes_per_slot = 1;
  o.block_size = 16;
  o.capacity_bytes = static_cast<Bytes>(num_blocks * 16);
  o.watermark = 0;
  o.enable_prefix_caching = true;
  return o;
}

SeqInfo req(SeqId id, std::int64_t prompt, std::int64_t final_tokens,
            const std::vector<std::uint64_t>& ids) {
  return SeqInfo{id, prompt, final_tokens, ids};
}

TEST_CASE("prefix blocks shared by two sequences are counted once", "[memory][prefix]") {
  PagedAllocator a(caching_options(10));
  const std::vector<std::uint64_t> ids{11, 22};
  const auto first = a.admit(req(1, 40, 50, ids), 40);
  REQUIRE(first);
  CHECK(first->cached_tokens == 0);
  const auto second = a.admit(req(2, 40, 45, ids), 40);
  REQUIRE(second);
  CHECK(second->cached_tokens == 32);  // both full blocks; the 8-token tail is computed
  CHECK(a.block_table(2)[0] == a.block_table(1)[0]);
  CHECK(a.block_table(2)[1] == a.block_table(1)[1]);
  CHECK(a.block_table(2)[2] != a.block_table(1)[2]);
  const SlotAccounting s = a.accounting(nullptr);
  CHECK(s.token_states == 48);  // 32 shared + 8 + 8, not 80
  CHECK(s.blocks_in_use == 4);
  CHECK(s.shared_blocks == 2);
  CHECK(s.reservation == 8 + 5);
  CHECK(s.internal_fragmentation == 0 + 3);
  CHECK(s.free == 6 * 16);
  const PrefixCacheStats p = a.stats().prefix_cache;
  CHECK(p.queries == 2);
  CHECK(p.query_tokens == 80);
  CHECK(p.hit_tokens == 32);
  CHECK(p.query_blocks == 4);
  CHECK(p.hit_blocks == 2);
  CHECK(p.hit_rate() == 0.4);
  a.check_invariants();
}

TEST_CASE("the chain: a block hits only when every block before it matches", "[memory][prefix]") {
  PagedAllocator a(caching_options(10));
  REQUIRE(a.admit(req(1, 48, 48, {1, 2, 3}), 48));
  CHECK(a.cached_prefix_tokens(req(2, 49, 60, {1, 2, 3}), 49) == 48);
  CHECK(a.cached_prefix_tokens(req(2, 49, 60, {1, 9, 3}), 49) == 16);  // block 2 differs
  CHECK(a.cached_prefix_tokens(req(2, 49, 60, {9, 2, 3}), 49) == 0);
  // At most prompt − 1 tokens: a fully cached 48-token prompt recomputes its last block.
  CHECK(a.cached_prefix_tokens(req(2, 48, 60, {1, 2, 3}), 48) == 32);
  // At most the tokens admitted (a first chunk of 20 covers one full block).
  CHECK(a.cached_prefix_tokens(req(2, 49, 60, {1, 2, 3}), 20) == 16);
  const auto hit = a.admit(req(2, 49, 60, {1, 2, 3}), 20);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 16);
  CHECK(a.block_table(2).size() == 2);  // the cached block and a fresh one for tokens 16..19
  a.check_invariants();
  // Without prefix caching nothing is looked up or counted.
  AllocatorOptions off = caching_options(10);
  off.enable_prefix_caching = false;
  PagedAllocator b(off);
  REQUIRE(b.admit(req(1, 48, 48, {1, 2, 3}), 48));
  CHECK(b.admit(req(2, 49, 60, {1, 2, 3}), 49)->cached_tokens == 0);
  CHECK(b.stats().prefix_cache.queries == 0);
}

TEST_CASE("released cached blocks are evictable in LRU order, tail blocks first",
          "[memory][prefix][lru]") {
  PagedAllocator a(caching_options(6));
  REQUIRE(a.admit(req(1, 48, 48, {1, 2, 3}), 48));  // blocks 0, 1, 2
  REQUIRE(a.admit(req(2, 48, 48, {4, 5, 6}), 48));  // blocks 3, 4, 5
  CHECK(a.block_table(1) == std::vector<BlockId>{0, 1, 2});
  CHECK(a.block_table(2) == std::vector<BlockId>{3, 4, 5});
  a.free(1);
  a.free(2);
  CHECK(a.pool().lru_order() == std::vector<BlockId>{2, 1, 0, 5, 4, 3});
  SlotAccounting s = a.accounting(nullptr);
  CHECK(s.cached_blocks == 6);
  CHECK(s.token_states == 0);  // evictable blocks hold no live sequence's tokens: free
  CHECK(s.free == 96);
  CHECK(s.blocks_in_use == 0);

  // A sequence with no cached content needs 2 fresh blocks: the two oldest evictable go.
  REQUIRE(a.admit(req(3, 20, 20, {}), 20));
  CHECK(a.block_table(3) == std::vector<BlockId>{2, 1});
  CHECK(a.stats().evictions == 2);
  CHECK(a.pool().lru_order() == std::vector<BlockId>{0, 5, 4, 3});
  // Sequence 1's chain now breaks after its first block; sequence 2's is whole.
  CHECK(a.cached_prefix_tokens(req(4, 49, 60, {1, 2, 3}), 49) == 16);
  CHECK(a.cached_prefix_tokens(req(4, 49, 60, {4, 5, 6}), 49) == 48);

  // A hit takes its blocks out of the LRU (they are in use again) and needs one fresh block.
  const auto hit = a.admit(req(4, 49, 60, {4, 5, 6}), 49);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 48);
  CHECK(a.block_table(4) == std::vector<BlockId>{3, 4, 5, 0});
  CHECK(a.pool().lru_order().empty());
  CHECK(a.stats().evictions == 3);
  a.check_invariants();
}

TEST_CASE("a plain free block is used before any cached block is evicted",
          "[memory][prefix][lru]") {
  PagedAllocator a(caching_options(4));
  REQUIRE(a.admit(req(1, 32, 32, {1, 2}), 32));
  a.free(1);  // blocks 0, 1 cached and evictable; 2, 3 plain free
  REQUIRE(a.admit(req(2, 32, 32, {}), 32));
  CHECK(a.block_table(2) == std::vector<BlockId>{2, 3});
  CHECK(a.stats().evictions == 0);
  CHECK(a.cached_prefix_tokens(req(3, 33, 40, {1, 2}), 33) == 32);
}

TEST_CASE("an evictable hit counts against free blocks at admission", "[memory][prefix]") {
  AllocatorOptions o = caching_options(4);
  PagedAllocator a(o);
  REQUIRE(a.admit(req(1, 32, 32, {1, 2}), 32));
  a.free(1);
  REQUIRE(a.admit(req(2, 32, 32, {}), 32));  // plain blocks 2, 3; 0, 1 evictable
  // 49 tokens need 4 blocks: 2 cached (evictable: they stop being free) + 2 fresh. Only 2 free.
  CHECK_FALSE(a.admit(req(3, 49, 60, {1, 2}), 49));
  // 33 tokens: 2 cached + 1 fresh = 3 > 2 free: refused too; 32 tokens of a 33-token prompt
  // fit exactly (the 2 cached blocks, no fresh one).
  CHECK_FALSE(a.admit(req(3, 33, 60, {1, 2}), 33));
  const auto hit = a.admit(req(3, 33, 60, {1, 2}), 32);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 32);
  CHECK(a.accounting(nullptr).free == 0);
  a.check_invariants();
}

TEST_CASE("blocks are cached as they fill, also under chunked prefill", "[memory][prefix]") {
  PagedAllocator a(caching_options(10));
  REQUIRE(a.admit(req(1, 40, 50, {7, 8}), 10));  // nothing full yet
  CHECK(a.cached_prefix_tokens(req(2, 40, 50, {7, 8}), 40) == 0);
  REQUIRE(a.grow(1, 10));  // 20: block 0 full
  CHECK(a.cached_prefix_tokens(req(2, 40, 50, {7, 8}), 40) == 16);
  REQUIRE(a.grow(1, 20));  // 40: block 1 full
  CHECK(a.cached_prefix_tokens(req(2, 40, 50, {7, 8}), 40) == 32);
  // Decode blocks have no content id: never cached.
  REQUIRE(a.grow(1, 8));
  CHECK(a.cached_prefix_tokens(req(2, 60, 70, {7, 8, 9}), 60) == 32);
}

TEST_CASE("two identical prompts admitted together: the second block stays uncached",
          "[memory][prefix]") {
  PagedAllocator a(caching_options(10));
  REQUIRE(a.admit(req(1, 40, 40, {5, 6}), 10));
  REQUIRE(a.admit(req(2, 40, 40, {5, 6}), 10));  // nothing cached yet: no hit
  REQUIRE(a.grow(1, 30));
  REQUIRE(a.grow(2, 30));  // same content, different blocks; only sequence 1's are cached
  a.free(1);
  a.free(2);
  CHECK(a.accounting(nullptr).cached_blocks == 2);
  a.check_invariants();
}

TEST_CASE("forked sequences share cached blocks, counted once", "[memory][prefix][fork]") {
  PagedAllocator a(caching_options(10));
  REQUIRE(a.admit(req(1, 36, 60, {1, 2}), 36));
  REQUIRE(a.fork(1, req(2, 36, 60, {})));
  REQUIRE(a.fork(1, req(3, 36, 60, {})));
  SlotAccounting s = a.accounting(nullptr);
  CHECK(s.token_states == 36);
  CHECK(s.shared_blocks == 3);
  for (SeqId id : {1, 2, 3}) REQUIRE(a.grow(id, 1));
  s = a.accounting(nullptr);
  CHECK(a.stats().cow_copies == 2);  // the last writer finds the block its own
  CHECK(s.token_states == 32 + 3 * 5);
  a.check_invariants();
}

}  // namespace
}  // namespace kvsim::memory
