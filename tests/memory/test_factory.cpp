// make_allocator: options → allocator, names, and located errors for invalid options.

#include <catch2/catch.hpp>

#include "common/error.h"
#include "memory/allocator.h"

namespace kvsim::memory {
namespace {

AllocatorOptions valid(AllocatorKind kind) {
  AllocatorOptions o;
  o.kind = kind;
  o.bytes_per_slot = 819'200;  // OPT-13B, FP16
  o.capacity_bytes = 12'000'000'000ULL;
  return o;
}

std::string error_field(const AllocatorOptions& o) {
  try {
    make_allocator(o);
  } catch (const Error& e) {
    return e.location().field + ": " + e.message();
  }
  return "no error";
}

TEST_CASE("the factory builds every kind with the capacity the budget holds", "[memory][factory]") {
  // 12 GB / (16 × 819,200 B) = 915 blocks; / 819,200 = 14,648 slots.
  auto paged = make_allocator(valid(AllocatorKind::kPaged));
  CHECK(paged->accounting(nullptr).capacity == 915 * 16);
  CHECK(paged->byte_accounting(nullptr).capacity == 915ULL * 16 * 819'200);
  CHECK(paged->bytes_per_slot() == 819'200);
  for (AllocatorKind kind : {AllocatorKind::kContiguousMax, AllocatorKind::kContiguousPow2,
                             AllocatorKind::kContiguousOracle}) {
    auto a = make_allocator(valid(kind));
    CHECK(a->accounting(nullptr).capacity == 14'648);
    CHECK(a->accounting(nullptr).free == 14'648);
  }
}

TEST_CASE("names round-trip, unknown names are nullopt", "[memory][factory]") {
  for (const std::string& name : allocator_kind_names()) {
    const auto kind = parse_allocator_kind(name);
    REQUIRE(kind);
    CHECK(allocator_kind_name(*kind) == name);
  }
  for (const std::string& name : placement_names()) {
    const auto p = parse_placement(name);
    REQUIRE(p);
    CHECK(placement_name(*p) == name);
  }
  CHECK(allocator_kind_names() == std::vector<std::string>{"paged", "contiguous-max",
                                                           "contiguous-pow2", "contiguous-oracle"});
  CHECK_FALSE(parse_allocator_kind("contiguous"));
  CHECK_FALSE(parse_placement("worst-fit"));
}

TEST_CASE("invalid options throw kvsim::Error naming the option", "[memory][factory]") {
  AllocatorOptions o = valid(AllocatorKind::kPaged);
  o.block_size = 0;
  CHECK(error_field(o) == "block_size: expected a positive number of tokens per block, got 0");
  o = valid(AllocatorKind::kPaged);
  o.watermark = 1.0;
  CHECK(error_field(o) == "watermark: expected a fraction in [0, 1), got 1.000000");
  o = valid(AllocatorKind::kPaged);
  o.capacity_bytes = 1000;
  CHECK(error_field(o) ==
        "capacity_bytes: a KV budget of 1000 bytes holds no block of 13107200 bytes");
  o = valid(AllocatorKind::kContiguousMax);
  o.bytes_per_slot = 0;
  CHECK(error_field(o) == "bytes_per_slot: expected a positive byte count, got 0");
  o = valid(AllocatorKind::kContiguousMax);
  o.max_seq_len = 0;
  CHECK(error_field(o) == "max_seq_len: expected a positive token count, got 0");
  o = valid(AllocatorKind::kPaged);
  o.groups = {{1000, 0}, {1000, -5}};
  CHECK(error_field(o) ==
        "groups[1].sliding_window: expected 0 (full attention) or a positive window, got -5");
  o.groups = {{0, 0}};
  CHECK(error_field(o) == "groups[0].bytes_per_slot: expected a positive byte count, got 0");
}

TEST_CASE("contiguous allocators keep every layer: their slot is the sum of the groups",
          "[memory][factory][hybrid]") {
  AllocatorOptions o;
  o.kind = AllocatorKind::kContiguousOracle;
  o.groups = {{300, 0}, {500, 4096}};
  o.capacity_bytes = 8000 * 10 + 7;
  auto a = make_allocator(o);
  CHECK(a->bytes_per_slot() == 800);
  CHECK(a->accounting(nullptr).capacity == 100);
  CHECK(a->byte_accounting(nullptr).capacity == 80'000);
}

}  // namespace
}  // namespace kvsim::memory

namespace kvsim::memory {
namespace {

AllocatorOptions tiny(AllocatorKind kind, std::int64_t capacity, Placement placement) {
  AllocatorOptions o;
  o.kind = kind;
  o.bytes_per_slot = 1;
  o.capacity_bytes = static_cast<Bytes>(capacity);
  o.placement = placement;
  o.watermark = 0;
  return o;
}

TEST_CASE("fits_alone: whether a request could ever run, to reject instead of waiting forever",
          "[memory][factory]") {
  // Buddy over 100 slots: the largest block is the 64-slot root.
  auto buddy = make_allocator(tiny(AllocatorKind::kContiguousOracle, 100, Placement::kBuddy));
  CHECK(buddy->fits_alone(SeqInfo{1, 10, 64, {}}));
  CHECK_FALSE(buddy->fits_alone(SeqInfo{1, 10, 65, {}}));
  auto first = make_allocator(tiny(AllocatorKind::kContiguousOracle, 100, Placement::kFirstFit));
  CHECK(first->fits_alone(SeqInfo{1, 10, 100, {}}));
  CHECK_FALSE(first->fits_alone(SeqInfo{1, 10, 101, {}}));
  AllocatorOptions max = tiny(AllocatorKind::kContiguousMax, 1500, Placement::kFirstFit);
  max.max_seq_len = 2048;  // every request reserves more than the space
  CHECK_FALSE(make_allocator(max)->fits_alone(SeqInfo{1, 10, 20, {}}));

  // Paged, 10 blocks of 16, 1 kept back at admission.
  AllocatorOptions p = tiny(AllocatorKind::kPaged, 160, Placement::kBuddy);
  p.watermark = 0.1;
  auto paged = make_allocator(p);
  CHECK(paged->fits_alone(SeqInfo{1, 144, 160, {}}));
  CHECK_FALSE(paged->fits_alone(SeqInfo{1, 145, 150, {}}));  // 10 blocks at admission
  CHECK_FALSE(paged->fits_alone(SeqInfo{1, 10, 161, {}}));   // 11 blocks at the end
  // A sliding window bounds what a sequence holds: 3 blocks for a window of 32.
  p.groups = {{1, 32}};
  p.capacity_bytes = 4 * 16;
  p.watermark = 0;
  auto window = make_allocator(p);
  CHECK(window->fits_alone(SeqInfo{1, 16, 10'000, {}}));
  CHECK_FALSE(window->fits_alone(SeqInfo{1, 80, 100, {}}));  // 5 blocks for the prompt
}

}  // namespace
}  // namespace kvsim::memory
