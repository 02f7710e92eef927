// The paged allocator: blocks, internal fragmentation of the last block, copy-on-write fork,
// watermark, swap. Slots are 1 byte unless a test says otherwise.

#include <catch2/catch.hpp>

#include "memory/allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {
namespace {

SeqInfo req(SeqId id, std::int64_t prompt, std::int64_t final_tokens) {
  return SeqInfo{id, prompt, final_tokens, {}};
}

AllocatorOptions paged_options(std::int64_t num_blocks, std::int64_t block_size = 16) {
  AllocatorOptions o;
  o.kind = AllocatorKind::kPaged;
  o.bytes_per_slot = 1;
  o.block_size = block_size;
  o.capacity_bytes = static_cast<Bytes>(num_blocks * block_size);
  o.watermark = 0;
  return o;
}

PagedAllocator paged(std::int64_t num_blocks, std::int64_t block_size = 16) {
  return PagedAllocator(paged_options(num_blocks, block_size));
}

struct Five {
  std::int64_t t, r, i, e, f;
};

void require_slots(const Allocator& a, Five want) {
  const SlotAccounting s = a.accounting(nullptr);
  CHECK(s.token_states == want.t);
  CHECK(s.reservation == want.r);
  CHECK(s.internal_fragmentation == want.i);
  CHECK(s.external_fragmentation == want.e);
  CHECK(s.free == want.f);
  REQUIRE(s.token_states + s.reservation + s.internal_fragmentation + s.external_fragmentation +
              s.free ==
          s.capacity);
}

TEST_CASE("33 tokens at block size 16: 3 blocks, 15 slots of internal fragmentation",
          "[memory][paged]") {
  PagedAllocator a = paged(10);
  REQUIRE(a.admit(req(1, 33, 33), 33));
  CHECK(a.block_table(1).size() == 3);
  require_slots(a, {33, 0, 15, 0, 160 - 48});
  const SlotAccounting s = a.accounting(nullptr);
  CHECK(s.blocks_in_use == 3);
  CHECK(s.largest_free_extent == 7 * 16);
  a.check_invariants();
}

TEST_CASE("paged admission and growth fail as values when blocks run out", "[memory][paged]") {
  PagedAllocator a = paged(4);
  REQUIRE(a.admit(req(1, 40, 64), 40));      // 3 blocks
  CHECK_FALSE(a.admit(req(2, 17, 20), 17));  // needs 2, 1 free
  REQUIRE(a.grow(1, 8));                     // fills block 3
  CHECK(a.grow(1, 16));                      // the 4th block
  CHECK_FALSE(a.grow(1, 1));                 // none left
  require_slots(a, {64, 0, 0, 0, 0});
  const AllocatorStats st = a.stats();
  CHECK(st.admits == 1);
  CHECK(st.admits_refused == 1);
  CHECK(st.grows_refused == 1);
  a.check_invariants();
}

TEST_CASE("watermark: admission keeps 1% of the blocks free, growth may use them",
          "[memory][paged]") {
  AllocatorOptions o = paged_options(100);
  o.watermark = 0.01;
  PagedAllocator a(o);
  CHECK(a.watermark_blocks() == 1);
  REQUIRE(a.admit(req(1, 99 * 16, 100 * 16), 99 * 16));  // leaves exactly 1 block
  CHECK_FALSE(a.admit(req(2, 1, 2), 1));                 // would leave 0 < 1
  REQUIRE(a.grow(1, 16));                                // running sequences may take it
  CHECK(a.accounting(nullptr).free == 0);
  a.free(1);
  // 200 blocks at 1%: 2 kept back.
  AllocatorOptions o2 = paged_options(200);
  o2.watermark = 0.01;
  PagedAllocator b(o2);
  CHECK(b.watermark_blocks() == 2);
  CHECK_FALSE(b.admit(req(1, 199 * 16, 199 * 16), 199 * 16));
  CHECK(b.admit(req(1, 198 * 16, 198 * 16), 198 * 16));
}

TEST_CASE("copy-on-write fork: the child shares every block until one of them writes",
          "[memory][paged][fork]") {
  PagedAllocator a = paged(10);
  REQUIRE(a.admit(req(1, 20, 40), 20));  // block 0 full, block 1 holds 4
  REQUIRE(a.fork(1, req(2, 20, 30)));
  SlotAccounting s = a.accounting(nullptr);
  CHECK(s.blocks_in_use == 2);
  CHECK(s.shared_blocks == 2);
  // Shared blocks count once: 20 token states; the shared open block is reservation up to the
  // larger final length (40 → the whole block).
  require_slots(a, {20, 12, 0, 0, 128});
  CHECK(a.block_table(1) == a.block_table(2));

  REQUIRE(a.grow(2, 1));  // the child writes into the shared partial block: it gets a copy
  CHECK(a.stats().cow_copies == 1);
  CHECK(a.block_table(2)[0] == a.block_table(1)[0]);
  CHECK(a.block_table(2)[1] != a.block_table(1)[1]);
  s = a.accounting(nullptr);
  CHECK(s.blocks_in_use == 3);
  CHECK(s.shared_blocks == 1);
  // 16 + 4 + 5 stored; parent reserves up to 32 (12), child up to 30 (9) and wastes 2.
  require_slots(a, {25, 21, 2, 0, 112});

  REQUIRE(a.grow(1, 1));  // the parent's open block is now its own: written in place
  CHECK(a.stats().cow_copies == 1);
  CHECK(a.accounting(nullptr).blocks_in_use == 3);
  a.check_invariants();
  a.free(1);
  CHECK(a.accounting(nullptr).shared_blocks == 0);
  require_slots(a, {21, 9, 2, 0, 128});
  a.free(2);
  require_slots(a, {0, 0, 0, 0, 160});
  a.check_invariants();
}

TEST_CASE("copy-on-write needs a free block, without one the write is refused, nothing changed",
          "[memory][paged][fork]") {
  PagedAllocator a = paged(2);
  REQUIRE(a.admit(req(1, 20, 32), 20));  // both blocks
  REQUIRE(a.fork(1, req(2, 20, 32)));
  const ByteAccounting before = a.byte_accounting(nullptr);
  CHECK_FALSE(a.grow(2, 1));
  CHECK(a.byte_accounting(nullptr) == before);
  CHECK(a.block_table(1) == a.block_table(2));
  a.check_invariants();
}

TEST_CASE("paged swap: whole blocks move to a CPU pool of a given size and back",
          "[memory][paged][swap]") {
  AllocatorOptions o = paged_options(10);
  o.cpu_swap_bytes = 3 * 16;  // 3 blocks
  PagedAllocator a(o);
  REQUIRE(a.admit(req(1, 40, 48), 40));  // 3 blocks
  const auto out = a.swap_out(1);
  REQUIRE(out);
  CHECK(*out == 3 * 16);
  require_slots(a, {0, 0, 0, 0, 160});
  CHECK(a.stats().cpu_bytes_in_use == 48);

  REQUIRE(a.admit(req(2, 128, 128), 128));  // 8 blocks: 2 left
  REQUIRE(a.admit(req(3, 16, 16), 16));     // 1 left
  CHECK_FALSE(a.swap_out(3));               // the CPU pool is full
  CHECK_FALSE(a.swap_in(1));                // needs 3 GPU blocks
  a.free(2);
  const auto in = a.swap_in(1);
  REQUIRE(in);
  CHECK(*in == 48);
  require_slots(a, {56, 8, 0, 0, 96});
  const AllocatorStats st = a.stats();
  CHECK(st.swap_outs == 1);
  CHECK(st.swap_ins == 1);
  CHECK(st.swaps_refused == 2);
  CHECK(st.swapped_out_bytes == 48);
  CHECK(st.swapped_in_bytes == 48);
  CHECK(st.cpu_bytes_in_use == 0);
  a.check_invariants();
  // Growth continues where it stopped.
  REQUIRE(a.grow(1, 8));
  require_slots(a, {64, 0, 0, 0, 96});
}

TEST_CASE("without CPU swap space every swap-out is refused", "[memory][paged][swap]") {
  PagedAllocator a = paged(4);
  REQUIRE(a.admit(req(1, 10, 10), 10));
  CHECK_FALSE(a.swap_out(1));
  CHECK(a.stats().swaps_refused == 1);
}

}  // namespace
}  // namespace kvsim::memory

namespace kvsim::memory {
namespace {

TEST_CASE("in-place room: the tail block's free slots, within the final length",
          "[memory][paged]") {
  PagedAllocator a = paged(10);
  REQUIRE(a.admit(req(1, 20, 40), 20));  // blocks [0, 32): room up to slot 32
  CHECK(a.in_place_room(1) == 12);
  CHECK(a.in_place_token_bytes() == 1);
  REQUIRE(a.grow(1, 11));  // 31 tokens
  CHECK(a.in_place_room(1) == 1);
  REQUIRE(a.grow(1, 1));  // 32: the tail is full
  CHECK(a.in_place_room(1) == 0);
  REQUIRE(a.grow(1, 1));  // 33: a third block, whose slots end past the final length (40)
  CHECK(a.in_place_room(1) == 7);
  // A sequence ending inside its tail block: room up to its final length only.
  REQUIRE(a.admit(req(2, 3, 5), 3));
  CHECK(a.in_place_room(2) == 2);
}

TEST_CASE(
    "in-place room: a prompt block the prefix cache registers when full keeps its last "
    "slot for grow()",
    "[memory][paged]") {
  AllocatorOptions o = paged_options(10);
  o.enable_prefix_caching = true;
  PagedAllocator a(o);
  // Prompt 40 with content: blocks 0 and 1 are full prompt blocks (registered when full).
  // Admitted with 20 tokens, its tail is block 1, whose last slot (32) fills it: room to 31.
  const std::vector<std::uint64_t> ids = {1, 2};
  REQUIRE(a.admit(SeqInfo{1, 40, 60, ids}, 20));
  CHECK(a.in_place_room(1) == 11);
  REQUIRE(a.grow(1, 12));  // 32: block 1 full and registered
  CHECK(a.in_place_room(1) == 0);
  REQUIRE(a.grow(1, 1));  // 33: block 2 has no content id: never registered
  CHECK(a.in_place_room(1) == 15);
  // Another prompt with the same first two blocks finds both cached.
  REQUIRE(a.admit(SeqInfo{2, 40, 60, ids}, 40));
  CHECK(a.stats().prefix_cache.hit_blocks == 2);
}

TEST_CASE(
    "prefix cache: content ids past the prompt are its output's, cached as they fill, and the "
    "next turn of the conversation finds them",
    "[memory][paged][prefix]") {
  AllocatorOptions o = paged_options(20);
  o.enable_prefix_caching = true;
  PagedAllocator a(o);
  // Turn 1: prompt 20, output 30 (50 tokens: blocks 0..2 full). Ids for all three full blocks.
  const std::vector<std::uint64_t> turn1 = {7, 8, 9};
  REQUIRE(a.admit(SeqInfo{1, 20, 50, turn1}, 20));
  CHECK(a.stats().prefix_cache.query_blocks == 1);  // within the prompt only
  REQUIRE(a.grow(1, 28));                           // 48: blocks 1 and 2 full (output tokens)
  a.free(1);
  // Turn 2: the conversation so far (50) and a new question: 60 prompt tokens. Its first three
  // blocks are turn 1's prompt and answer, all cached; block 3 is new.
  const std::vector<std::uint64_t> turn2 = {7, 8, 9};
  const auto hit = a.admit(SeqInfo{2, 60, 70, turn2}, 60);
  REQUIRE(hit);
  CHECK(hit->cached_tokens == 48);
  // A prompt that only shares turn 1's prompt block finds that one: ids chain by position.
  const std::vector<std::uint64_t> other = {7, 5};
  const auto partial = a.admit(SeqInfo{3, 40, 41, other}, 40);
  REQUIRE(partial);
  CHECK(partial->cached_tokens == 16);
}

TEST_CASE("in-place room: one grow of the deferred tokens leaves what one grow per token leaves",
          "[memory][paged]") {
  PagedAllocator once = paged(10), each = paged(10);
  for (PagedAllocator* a : {&once, &each}) {
    REQUIRE(a->admit(req(1, 20, 60), 20));
    REQUIRE(a->admit(req(2, 7, 30), 7));
  }
  // 11 tokens deferred within block 1, then one that crosses into a new block: told at once.
  REQUIRE(once.grow(1, 12));
  for (int k = 0; k < 12; ++k) REQUIRE(each.grow(1, 1));
  // The accounting while deferred: the replica moves in_place_token_bytes per token from
  // reservation to token states; here 5 tokens of sequence 2 are still untold.
  REQUIRE(each.grow(2, 5));
  ByteAccounting corrected = once.byte_accounting(nullptr);
  corrected.token_states += 5 * once.in_place_token_bytes();
  corrected.reservation -= 5 * once.in_place_token_bytes();
  const ByteAccounting told = each.byte_accounting(nullptr);
  CHECK(corrected.token_states == told.token_states);
  CHECK(corrected.reservation == told.reservation);
  CHECK(corrected.internal_fragmentation == told.internal_fragmentation);
  CHECK(corrected.free == told.free);
  REQUIRE(once.grow(2, 5));
  CHECK(once.block_table(1) == each.block_table(1));
  CHECK(once.block_table(2) == each.block_table(2));
  const ByteAccounting x = once.byte_accounting(nullptr);
  CHECK(x.token_states == told.token_states);
  CHECK(x.reservation == told.reservation);
  CHECK(x.internal_fragmentation == told.internal_fragmentation);
  once.check_invariants();
  each.check_invariants();
}

TEST_CASE("in-place room is not offered for a shared tail, after a fork, or while swapped",
          "[memory][paged]") {
  AllocatorOptions o = paged_options(10);
  o.cpu_swap_bytes = 10 * 16;
  PagedAllocator a(o);
  REQUIRE(a.admit(req(1, 20, 40), 20));
  REQUIRE(a.swap_out(1));
  CHECK_FALSE(a.in_place_room(1).has_value());
  REQUIRE(a.swap_in(1));
  CHECK(a.in_place_room(1) == 12);
  REQUIRE(a.fork(1, req(2, 20, 40)));
  CHECK_FALSE(a.in_place_room(1).has_value());
  CHECK_FALSE(a.in_place_room(2).has_value());
}

}  // namespace
}  // namespace kvsim::memory

namespace kvsim::memory {
namespace {

TEST_CASE(
    "state pages: a fixed number per sequence, whatever its length, freed and swapped with it",
    "[memory][paged][state]") {
  AllocatorOptions o = paged_options(10);  // pages of 16 B
  o.state_blocks_per_seq = 2;
  o.state_bytes_per_seq = 25;  // 7 B of the two pages are padding
  o.cpu_swap_bytes = 5 * 16;
  PagedAllocator a(o);
  REQUIRE(a.admit(req(1, 20, 20), 20));  // 2 token blocks + 2 state pages
  CHECK(a.pool().num_in_use() == 4);
  // Token states 20 + 25; internal: 12 slots of the tail block + 7 B of state padding.
  require_slots(a, {45, 0, 19, 0, 96});
  REQUIRE(a.grow(1, 12));  // 32 tokens: still 2 token blocks; the state does not grow
  CHECK(a.pool().num_in_use() == 4);
  a.check_invariants();
  // 6 pages left: a 50-token request needs 4 token blocks + 2 state pages; a second one does not
  // fit, though its tokens alone would.
  REQUIRE(a.admit(req(2, 50, 50), 50));
  CHECK_FALSE(a.admit(req(3, 16, 16), 16));
  CHECK_FALSE(a.fits_alone(req(4, 16 * 9, 16 * 9)));  // 9 + 2 > 10 pages
  CHECK(a.fits_alone(req(4, 16 * 8, 16 * 8)));
  // Swap-out moves the state with the tokens: 4 + 2 pages exceed the 5 CPU pages.
  CHECK_FALSE(a.swap_out(2));
  const auto out = a.swap_out(1);
  REQUIRE(out);
  CHECK(*out == 4 * 16);
  CHECK(a.pool().num_in_use() == 6);
  a.check_invariants();
  REQUIRE(a.swap_in(1));
  CHECK(a.pool().num_in_use() == 10);
  a.check_invariants();
  // A fork needs pages for the child's own state: none are free.
  CHECK_FALSE(a.fork(1, req(5, 20, 40)));
  a.free(2);
  REQUIRE(a.fork(1, req(5, 20, 40)));
  CHECK(a.pool().num_in_use() == 6);  // shared token blocks, two states
  a.check_invariants();
  a.free(1);
  a.free(5);
  CHECK(a.pool().num_in_use() == 0);
  require_slots(a, {0, 0, 0, 0, 160});
}

TEST_CASE("state pages need the paged allocator without prefix caching, within their pages",
          "[memory][paged][state]") {
  AllocatorOptions o = paged_options(10);
  o.state_blocks_per_seq = 1;
  o.state_bytes_per_seq = 16;
  CHECK_NOTHROW(validate_allocator_options(o));
  o.state_bytes_per_seq = 17;
  CHECK_THROWS_WITH(validate_allocator_options(o), Catch::Contains("state_bytes_per_seq"));
  o.state_bytes_per_seq = 16;
  o.enable_prefix_caching = true;
  CHECK_THROWS_WITH(validate_allocator_options(o),
                    Catch::Contains("state_blocks_per_seq") && Catch::Contains("prefix caching"));
  o.enable_prefix_caching = false;
  o.kind = AllocatorKind::kContiguousMax;
  CHECK_THROWS_WITH(validate_allocator_options(o), Catch::Contains("paged allocator"));
}

}  // namespace
}  // namespace kvsim::memory
