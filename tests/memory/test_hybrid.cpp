// Sliding-window and hybrid (full + window layer groups) paged allocation: groups share one pool
// of equal-byte pages; window groups free the blocks that fall out of the window; byte accounting
// is byte-weighted and sums exactly to capacity.

#include <catch2/catch.hpp>

#include "memory/allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {
namespace {

SeqInfo req(SeqId id, std::int64_t prompt, std::int64_t final_tokens,
            std::span<const std::uint64_t> ids = {}) {
  return SeqInfo{id, prompt, final_tokens, ids};
}

AllocatorOptions hybrid(std::vector<KvGroupSpec> groups, std::int64_t num_pages,
                        std::int64_t block_size = 16) {
  AllocatorOptions o;
  o.kind = AllocatorKind::kPaged;
  o.groups = std::move(groups);
  o.block_size = block_size;
  Bytes widest = 0;
  for (const auto& g : o.groups) widest = std::max(widest, g.bytes_per_slot);
  o.capacity_bytes = static_cast<Bytes>(num_pages * block_size) * widest;
  o.watermark = 0;
  return o;
}

void require_sum(const ByteAccounting& b) {
  REQUIRE(b.token_states + b.reservation + b.internal_fragmentation + b.external_fragmentation +
              b.free ==
          b.capacity);
}

TEST_CASE("Gemma-2 style: full and window groups of equal bytes, the window frees old blocks",
          "[memory][hybrid]") {
  // 2 bytes per token in each group; window 32; page = 16 × 2 = 32 bytes; 20 pages.
  PagedAllocator a(hybrid({{2, 0}, {2, 32}}, 20));
  REQUIRE(a.groups().size() == 2);
  CHECK(a.groups()[0].block_size == 16);
  CHECK(a.groups()[1].block_size == 16);
  CHECK(a.page_bytes() == 32);
  CHECK(a.bytes_per_slot() == 4);

  REQUIRE(a.admit(req(1, 40, 200), 40));  // the whole prompt: 3 blocks in each group
  CHECK(a.block_table(1, 0).size() == 3);
  CHECK(a.block_table(1, 1).size() == 3);
  REQUIRE(a.grow(1, 1));  // 41 after 40 stored: (40 − 32 + 1) / 16 = 0 blocks out of the window
  CHECK(a.first_block(1, 1) == 0);
  for (int i = 0; i < 59; ++i) REQUIRE(a.grow(1, 1));  // to 100 tokens
  // Before the last growth 99 tokens were stored: blocks below (99 − 31) / 16 = 4 are gone.
  CHECK(a.first_block(1, 1) == 4);
  CHECK(a.block_table(1, 1).size() == 3);  // blocks 4, 5, 6 cover tokens 64..111
  CHECK(a.block_table(1, 0).size() == 7);
  const ByteAccounting b = a.byte_accounting(nullptr);
  require_sum(b);
  CHECK(b.capacity == 640);
  CHECK(b.token_states == 100 * 2 + 36 * 2);
  CHECK(b.reservation == 12 * 2 + 12 * 2);
  CHECK(b.internal_fragmentation == 0);
  CHECK(b.free == 10 * 32);
  a.check_invariants();
  a.free(1);
  CHECK(a.byte_accounting(nullptr).free == 640);
  a.check_invariants();
}

TEST_CASE("groups of unequal bytes per token share pages of equal bytes", "[memory][hybrid]") {
  // Full group 3 bytes/token, window group 5: page = 16 × 5 = 80 bytes. The full group fits
  // 80 / 3 = 26 tokens in a page and leaves 2 bytes of padding.
  PagedAllocator a(hybrid({{3, 0}, {5, 64}}, 10));
  CHECK(a.page_bytes() == 80);
  CHECK(a.groups()[0].block_size == 26);
  CHECK(a.groups()[0].padding == 2);
  CHECK(a.groups()[1].block_size == 16);
  CHECK(a.groups()[1].padding == 0);
  REQUIRE(a.admit(req(1, 30, 30), 30));  // 2 pages per group
  const ByteAccounting b = a.byte_accounting(nullptr);
  require_sum(b);
  CHECK(b.capacity == 800);
  CHECK(b.token_states == 30 * 3 + 30 * 5);
  CHECK(b.reservation == 0);
  CHECK(b.internal_fragmentation == (52 - 30) * 3 + 2 * 2 + (32 - 30) * 5);
  CHECK(b.free == 6 * 80);
  // Slots are counted in the widest group's (5-byte) slots; free takes the rounding.
  const SlotAccounting s = a.accounting(nullptr);
  CHECK(s.capacity == 160);
  CHECK(s.token_states == 48);
  CHECK(s.internal_fragmentation == 16);
  CHECK(s.free == 96);
  CHECK(s.token_states + s.reservation + s.internal_fragmentation + s.free == s.capacity);
  a.check_invariants();
}

TEST_CASE("one sliding-window group (Mistral): memory per sequence stays bounded",
          "[memory][hybrid]") {
  AllocatorOptions o = hybrid({{1, 64}}, 8);
  PagedAllocator a(o);
  REQUIRE(a.admit(req(1, 10, 10'000), 10));
  for (int i = 0; i < 5000; ++i) REQUIRE(a.grow(1, 1));
  // The window of 64 tokens plus the open block: at most ceil(63 / 16) + 1 = 5 blocks.
  CHECK(a.block_table(1).size() <= 5);
  CHECK(a.accounting(nullptr).blocks_in_use <= 5);
  a.check_invariants();
}

TEST_CASE("window prefix hit needs only the blocks inside the window", "[memory][hybrid][prefix]") {
  AllocatorOptions o = hybrid({{1, 32}}, 7);
  o.enable_prefix_caching = true;
  PagedAllocator a(o);
  const std::vector<std::uint64_t> ids{1, 2, 3, 4};
  REQUIRE(a.admit(req(1, 64, 100, ids), 64));  // blocks 0..3, all cached
  REQUIRE(a.grow(1, 1));  // (64 − 31) / 16 = 2: blocks 0, 1 leave the window (evictable)
  CHECK(a.first_block(1) == 2);
  CHECK(a.pool().lru_order() == std::vector<BlockId>{1, 0});
  REQUIRE(a.admit(req(2, 48, 48), 48));  // plain blocks 5, 6, then evicts block 1
  CHECK(a.stats().evictions == 1);
  // Blocks 2 and 3 (the last 31 tokens before position 64) are cached: a 64-token hit even
  // though block 1 is gone. A full-attention group would hit 16 tokens only.
  CHECK(a.cached_prefix_tokens(req(3, 65, 70, ids), 65) == 64);
  const auto hit = a.admit(req(3, 65, 70, ids), 65);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 64);
  CHECK(a.first_block(3) == 2);
  CHECK(a.block_table(3)[0] == a.block_table(1)[0]);
  CHECK(a.block_table(3)[1] == a.block_table(1)[1]);
  const SlotAccounting s = a.accounting(nullptr);
  CHECK(s.token_states == 32 + 1 + 1 + 48);  // the shared window blocks counted once
  CHECK(s.shared_blocks == 2);
  a.check_invariants();
}

TEST_CASE("hybrid prefix caching hits only where every group has the blocks",
          "[memory][hybrid][prefix]") {
  AllocatorOptions o = hybrid({{2, 0}, {2, 32}}, 20);
  o.enable_prefix_caching = true;
  PagedAllocator a(o);
  const std::vector<std::uint64_t> ids{1, 2, 3, 4};
  REQUIRE(a.admit(req(1, 64, 64, ids), 64));
  CHECK(a.cached_prefix_tokens(req(2, 65, 70, ids), 65) == 64);
  a.free(1);
  const auto hit = a.admit(req(2, 65, 70, ids), 65);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 64);
  CHECK(a.block_table(2, 0).size() == 5);
  CHECK(a.first_block(2, 1) == 2);  // the window group takes only blocks 2, 3 (+ 1 fresh)
  CHECK(a.block_table(2, 1).size() == 3);
  a.check_invariants();

  // A group whose block size is no multiple of the base block size cannot be keyed by the
  // given content ids: no hits at all.
  AllocatorOptions odd = hybrid({{3, 0}, {5, 64}}, 20);
  odd.enable_prefix_caching = true;
  PagedAllocator b(odd);
  REQUIRE(b.admit(req(1, 64, 64, ids), 64));
  CHECK(b.cached_prefix_tokens(req(2, 65, 70, ids), 65) == 0);
}

TEST_CASE("growth of a hybrid or sliding-window sequence is never deferred",
          "[memory][paged][hybrid]") {
  PagedAllocator both(hybrid({{2, 0}, {2, 32}}, 20));
  REQUIRE(both.admit(req(1, 20, 40), 20));
  CHECK_FALSE(both.in_place_room(1).has_value());
  PagedAllocator window(hybrid({{1, 64}}, 8));
  REQUIRE(window.admit(req(1, 20, 40), 20));
  CHECK_FALSE(window.in_place_room(1).has_value());
}

}  // namespace
}  // namespace kvsim::memory
