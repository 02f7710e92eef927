// The Orca baselines: contiguous extents, reservation policies, buddy / first-fit / best-fit
// placement, and exact accounting per DESIGN.md "Definitions". Slots are 1 byte, so byte and slot
// numbers coincide.

#include <catch2/catch.hpp>

#include "memory/allocator.h"
#include "memory/contiguous_allocator.h"

namespace kvsim::memory {
namespace {

SeqInfo req(SeqId id, std::int64_t prompt, std::int64_t final_tokens) {
  return SeqInfo{id, prompt, final_tokens, {}};
}

std::unique_ptr<Allocator> contiguous(AllocatorKind kind, std::int64_t capacity,
                                      Placement placement, std::int64_t max_seq_len = 2048,
                                      Bytes cpu_swap_bytes = 0) {
  AllocatorOptions o;
  o.kind = kind;
  o.capacity_bytes = static_cast<Bytes>(capacity);
  o.bytes_per_slot = 1;
  o.placement = placement;
  o.max_seq_len = max_seq_len;
  o.cpu_swap_bytes = cpu_swap_bytes;
  return make_allocator(o);
}

// token_states, reservation, internal, external, free.
struct Five {
  std::int64_t t, r, i, e, f;
};

void require_slots(const Allocator& a, const SeqInfo* head, Five want) {
  const SlotAccounting s = a.accounting(head);
  CHECK(s.token_states == want.t);
  CHECK(s.reservation == want.r);
  CHECK(s.internal_fragmentation == want.i);
  CHECK(s.external_fragmentation == want.e);
  CHECK(s.free == want.f);
  REQUIRE(s.token_states + s.reservation + s.internal_fragmentation + s.external_fragmentation +
              s.free ==
          s.capacity);
  const ByteAccounting b = a.byte_accounting(head);
  CHECK(b.capacity == static_cast<Bytes>(s.capacity));
  CHECK(b.token_states == static_cast<Bytes>(want.t));
  CHECK(b.external_fragmentation == static_cast<Bytes>(want.e));
  CHECK(b.free == static_cast<Bytes>(want.f));
}

const ContiguousAllocator& as_contiguous(const Allocator& a) {
  return dynamic_cast<const ContiguousAllocator&>(a);
}

TEST_CASE("contiguous-max, C=100, three requests: exact fractions after each step",
          "[memory][contiguous]") {
  // max_seq_len 30: every request reserves 30 slots, first-fit (exact extents, no rounding).
  auto a = contiguous(AllocatorKind::kContiguousMax, 100, Placement::kFirstFit, 30);
  const SeqInfo A = req(1, 10, 15), B = req(2, 5, 25), C = req(3, 20, 28), D = req(4, 4, 8);

  require_slots(*a, nullptr, {0, 0, 0, 0, 100});

  REQUIRE(a->admit(A, 10));  // [0, 30): 10 stored, 5 to come, 15 never written
  require_slots(*a, nullptr, {10, 5, 15, 0, 70});
  REQUIRE(a->admit(B, 5));  // [30, 60): 5 stored, 20 to come, 5 never
  require_slots(*a, nullptr, {15, 25, 20, 0, 40});
  REQUIRE(a->admit(C, 20));  // [60, 90): 20 stored, 8 to come, 2 never
  require_slots(*a, nullptr, {35, 33, 22, 0, 10});
  {
    const Fractions f = fractions_of(a->byte_accounting(nullptr));
    CHECK(f.token_states == 0.35);
    CHECK(f.reservation == 0.33);
    CHECK(f.internal_fragmentation == 0.22);
    CHECK(f.external_fragmentation == 0.0);
    CHECK(f.free == 0.10);
    CHECK(f.token_states + f.reservation + f.internal_fragmentation + f.external_fragmentation +
              f.free ==
          Approx(1.0).margin(1e-15));
  }

  // One decode step: every sequence writes one token into its reservation.
  for (SeqId id : {1, 2, 3}) REQUIRE(a->grow(id, 1));
  require_slots(*a, nullptr, {38, 30, 22, 0, 10});

  // D waits: it needs 30 contiguous slots, only a hole of 10 is left. Those 10 are external.
  REQUIRE_FALSE(a->admit(D, 4));
  require_slots(*a, &D, {38, 30, 22, 10, 0});
  {
    const Fractions f = fractions_of(a->byte_accounting(&D));
    CHECK(f.external_fragmentation == 0.10);
    CHECK(f.free == 0.0);
  }

  // A finishes (15 tokens) and leaves: its 30 slots are a hole that fits D.
  REQUIRE(a->grow(1, 4));
  require_slots(*a, &D, {42, 26, 22, 10, 0});
  a->free(1);
  require_slots(*a, &D, {27, 26, 7, 0, 40});
  CHECK(a->accounting(&D).largest_free_extent == 30);

  REQUIRE(a->admit(D, 4));  // first fit: [0, 30)
  require_slots(*a, nullptr, {31, 30, 29, 0, 10});
  as_contiguous(*a).check_invariants();
}

TEST_CASE("a sequence cannot outgrow its extent, the reservation covers the final length",
          "[memory][contiguous]") {
  auto a = contiguous(AllocatorKind::kContiguousOracle, 100, Placement::kFirstFit);
  REQUIRE(a->admit(req(1, 10, 12), 10));
  CHECK(a->grow(1, 2));
  CHECK_FALSE(a->grow(1, 1));  // 13 > the 12-slot extent
  require_slots(*a, nullptr, {12, 0, 0, 0, 88});
  CHECK(a->stats().grows_refused == 1);
  // Contiguous growth is not deferred: every token is told (no in-place room is offered).
  CHECK_FALSE(a->in_place_room(1).has_value());
}

TEST_CASE("reservation policies: max, pow2 (output rounded up), oracle", "[memory][contiguous]") {
  const auto policy = [](AllocatorKind kind) {
    return contiguous(kind, 4096, Placement::kFirstFit, 2048);
  };
  auto max = policy(AllocatorKind::kContiguousMax);
  auto pow2 = policy(AllocatorKind::kContiguousPow2);
  auto oracle = policy(AllocatorKind::kContiguousOracle);
  // Prompt 10, true output 25: max reserves 2,048, pow2 10 + 32 = 42, oracle 35.
  CHECK(as_contiguous(*max).reservation_slots(10, 35) == 2048);
  CHECK(as_contiguous(*pow2).reservation_slots(10, 35) == 42);
  CHECK(as_contiguous(*oracle).reservation_slots(10, 35) == 35);
  // Output 32 is already a power of two; output 33 rounds to 64.
  CHECK(as_contiguous(*pow2).reservation_slots(10, 42) == 42);
  CHECK(as_contiguous(*pow2).reservation_slots(10, 43) == 74);
  // A request longer than max_seq_len reserves its own length.
  CHECK(as_contiguous(*max).reservation_slots(2000, 3000) == 3000);

  REQUIRE(pow2->admit(req(1, 10, 35), 10));
  require_slots(*pow2, nullptr, {10, 25, 7, 0, 4096 - 42});
}

TEST_CASE("buddy rounding is internal fragmentation", "[memory][contiguous][buddy]") {
  // Oracle asks for 35 slots; the buddy gives a 64-slot block: 29 slots will never be written.
  auto a = contiguous(AllocatorKind::kContiguousOracle, 128, Placement::kBuddy);
  REQUIRE(a->admit(req(1, 10, 35), 10));
  require_slots(*a, nullptr, {10, 25, 29, 0, 64});
  // pow2 on a buddy: 10 + 32 = 42 → 64.
  auto p = contiguous(AllocatorKind::kContiguousPow2, 128, Placement::kBuddy);
  REQUIRE(p->admit(req(1, 10, 35), 35));
  require_slots(*p, nullptr, {35, 0, 29, 0, 64});
}

TEST_CASE("buddy placement refuses a request that fits in total free space but in no block",
          "[memory][contiguous][buddy]") {
  auto a = contiguous(AllocatorKind::kContiguousOracle, 100, Placement::kBuddy);
  REQUIRE(a->admit(req(1, 32, 32), 32));  // [64, 96)
  REQUIRE(a->admit(req(2, 32, 32), 32));  // [0, 32)
  REQUIRE(a->admit(req(3, 4, 4), 4));     // [96, 100)
  REQUIRE(a->admit(req(4, 16, 16), 16));  // [32, 48)
  a->free(1);                             // free blocks: [48, 64) and [64, 96): 48 slots
  const SeqInfo E = req(5, 33, 33);       // needs a 64-block
  CHECK_FALSE(a->admit(E, 33));
  require_slots(*a, &E, {52, 0, 0, 48, 0});
  CHECK(a->accounting(&E).largest_free_extent == 32);
  // Without a waiting head nothing is external.
  require_slots(*a, nullptr, {52, 0, 0, 0, 48});
  // A head that fits (≤ 32) sees no external fragmentation either.
  const SeqInfo small = req(6, 20, 30);
  require_slots(*a, &small, {52, 0, 0, 0, 48});

  // Once [32, 48) is released, its buddy [48, 64) merges and the root [0, 64) still holds the
  // [0, 32) sequence: a 64-block needs sequence 2 gone too.
  a->free(4);
  CHECK_FALSE(a->admit(E, 33));
  a->free(2);
  CHECK(a->accounting(&E).largest_free_extent == 64);
  REQUIRE(a->admit(E, 33));
  require_slots(*a, nullptr, {37, 0, 31, 0, 32});
  as_contiguous(*a).check_invariants();
}

TEST_CASE("first-fit: holes split by a live extent are external fragmentation",
          "[memory][contiguous]") {
  auto a = contiguous(AllocatorKind::kContiguousOracle, 100, Placement::kFirstFit);
  REQUIRE(a->admit(req(1, 30, 30), 30));  // [0, 30)
  REQUIRE(a->admit(req(2, 20, 20), 20));  // [30, 50)
  REQUIRE(a->admit(req(3, 30, 30), 30));  // [50, 80)
  REQUIRE(a->admit(req(4, 20, 20), 20));  // [80, 100)
  a->free(1);
  a->free(3);
  const SeqInfo big = req(5, 40, 40);
  CHECK_FALSE(a->admit(big, 40));  // 60 free, but the largest hole is 30
  require_slots(*a, &big, {40, 0, 0, 60, 0});
  a->free(2);  // holes coalesce: [0, 80)
  CHECK(a->accounting(&big).largest_free_extent == 80);
  require_slots(*a, &big, {20, 0, 0, 0, 80});
  REQUIRE(a->admit(big, 40));
  as_contiguous(*a).check_invariants();
}

TEST_CASE("contiguous fork copies into a new extent, swap moves the stored tokens",
          "[memory][contiguous][swap]") {
  auto a = contiguous(AllocatorKind::kContiguousOracle, 100, Placement::kFirstFit, 2048, 40);
  REQUIRE(a->admit(req(1, 20, 40), 30));
  REQUIRE(a->fork(1, req(2, 0, 35)));  // [40, 75): 30 stored, 5 to come
  require_slots(*a, nullptr, {60, 15, 0, 0, 25});
  CHECK_FALSE(a->fork(1, req(3, 0, 40)));  // no 40-slot hole left
  CHECK(a->stats().forks == 1);

  const auto out = a->swap_out(1);
  REQUIRE(out);
  CHECK(*out == 30);  // 30 stored tokens × 1 byte
  require_slots(*a, nullptr, {30, 5, 0, 0, 65});
  CHECK(a->stats().cpu_bytes_in_use == 30);
  CHECK_FALSE(a->swap_out(2));            // 30 + 30 > 40 slots of CPU space
  REQUIRE(a->admit(req(4, 40, 40), 40));  // takes [0, 40)
  REQUIRE(a->admit(req(5, 25, 25), 25));  // takes [75, 100)
  CHECK_FALSE(a->swap_in(1));             // no 40-slot hole
  a->free(4);
  const auto in = a->swap_in(1);
  REQUIRE(in);
  CHECK(*in == 30);
  require_slots(*a, nullptr, {85, 15, 0, 0, 0});
  const AllocatorStats st = a->stats();
  CHECK(st.swap_outs == 1);
  CHECK(st.swap_ins == 1);
  CHECK(st.swaps_refused == 2);
  CHECK(st.swapped_out_bytes == 30);
  CHECK(st.cpu_bytes_in_use == 0);
  as_contiguous(*a).check_invariants();
  a->free(1);
  a->free(2);
  a->free(5);
  require_slots(*a, nullptr, {0, 0, 0, 0, 100});
}

TEST_CASE("a swapped-out contiguous sequence is freed from the CPU", "[memory][contiguous][swap]") {
  auto a = contiguous(AllocatorKind::kContiguousMax, 100, Placement::kBuddy, 32, 100);
  REQUIRE(a->admit(req(1, 8, 20), 8));
  require_slots(*a, nullptr, {8, 12, 12, 0, 68});
  REQUIRE(a->swap_out(1) == Bytes{8});
  require_slots(*a, nullptr, {0, 0, 0, 0, 100});
  a->free(1);
  CHECK(a->stats().cpu_bytes_in_use == 0);
  as_contiguous(*a).check_invariants();
}

}  // namespace
}  // namespace kvsim::memory
