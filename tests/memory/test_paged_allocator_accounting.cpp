// memory/paged_allocator_accounting.cpp: the paged allocator's five quantities, in slots and bytes.
// Slots are 1 byte unless a test says otherwise.
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

TEST_CASE("a growing paged sequence: reservation is the last block's slots it will still write",
          "[memory][paged]") {
  PagedAllocator a = paged(10);
  REQUIRE(a.admit(req(1, 20, 33), 20));  // blocks 0, 1: 20 stored, 12 to come (up to 32)
  require_slots(a, {20, 12, 0, 0, 128});
  REQUIRE(a.grow(1, 12));  // exactly 2 full blocks
  require_slots(a, {32, 0, 0, 0, 128});
  REQUIRE(a.grow(1, 1));  // the 33rd token opens block 3; it will never be written further
  require_slots(a, {33, 0, 15, 0, 112});
  // Final length 40 lies beyond its 2 blocks: all 15 open slots will be written.
  REQUIRE(a.admit(req(2, 17, 40), 17));
  require_slots(a, {50, 15, 15, 0, 80});
  a.free(1);
  a.free(2);
  require_slots(a, {0, 0, 0, 0, 160});
  a.check_invariants();
}

TEST_CASE("bytes: a slot of 1000 bytes, blocks of 16 slots", "[memory][paged]") {
  AllocatorOptions o = paged_options(10);
  o.bytes_per_slot = 1000;
  o.capacity_bytes = 10 * 16 * 1000 + 999;  // the remainder is not capacity
  PagedAllocator a(o);
  CHECK(a.num_blocks() == 10);
  CHECK(a.page_bytes() == 16000);
  REQUIRE(a.admit(req(1, 33, 40), 33));
  const ByteAccounting b = a.byte_accounting(nullptr);
  CHECK(b.capacity == 160000);
  CHECK(b.token_states == 33000);
  CHECK(b.reservation == 7000);
  CHECK(b.internal_fragmentation == 8000);
  CHECK(b.external_fragmentation == 0);
  CHECK(b.free == 112000);
  CHECK(b.used() == 48000);
}

}  // namespace
}  // namespace kvsim::memory
