// memory/extent_placer.cpp: buddy and free-list placement of contiguous extents, by offset.
#include <catch2/catch.hpp>

#include "memory/extent_placer.h"

namespace kvsim::memory {
namespace {

TEST_CASE("buddy placement over C=100: roots 64+32+4, lowest block of the smallest order",
          "[memory][contiguous][buddy]") {
  BuddyPlacer b(100);
  CHECK(b.free_extents() == std::vector<Extent>{{0, 64}, {64, 32}, {96, 4}});
  CHECK(b.largest_free_extent() == 64);
  CHECK(b.allocate(20) == 64);  // a 32-block: the root of order 5
  CHECK(b.allocate(32) == 0);   // splits the 64 root: [0, 32) taken, [32, 64) free
  CHECK(b.allocate(3) == 96);   // the 4-slot root
  CHECK(b.allocate(9) == 32);   // a 16-block from [32, 64)
  CHECK(b.free_extents() == std::vector<Extent>{{48, 16}});
  CHECK_FALSE(b.allocate(17));  // needs a 32-block
  b.release(64, 20);
  // [64, 96) is free next to [48, 64), but they are not buddies (different roots): no merge.
  CHECK(b.free_extents() == std::vector<Extent>{{48, 16}, {64, 32}});
  b.release(32, 9);
  CHECK(b.free_extents() == std::vector<Extent>{{32, 32}, {64, 32}});
  b.release(0, 32);  // buddies [0, 32) and [32, 64) merge back into the 64 root
  CHECK(b.free_extents() == std::vector<Extent>{{0, 64}, {64, 32}});
  CHECK(b.free_slots() == 96);
}

TEST_CASE("best-fit takes the smallest hole that fits, first-fit the lowest",
          "[memory][contiguous]") {
  FreeListPlacer best(100, true), first(100, false);
  for (FreeListPlacer* p : {&best, &first}) {
    REQUIRE(p->allocate(10) == 0);
    REQUIRE(p->allocate(30) == 10);
    REQUIRE(p->allocate(10) == 40);
    REQUIRE(p->allocate(10) == 50);
    p->release(10, 30);  // holes: [10, 40) of 30 and [60, 100) of 40
    p->release(50, 10);  // [50, 100) of 50 after coalescing
    CHECK(p->free_extents() == std::vector<Extent>{{10, 30}, {50, 50}});
  }
  CHECK(best.allocate(25) == 10);
  CHECK(first.allocate(25) == 10);
  CHECK(best.allocate(5) == 35);    // the 5-slot remainder is the smallest hole
  CHECK(first.allocate(45) == 50);  // only the big hole fits
  CHECK(best.allocate(50) == 50);
  CHECK_FALSE(first.allocate(6));
}

TEST_CASE("extent placer: sizes, running out as a value, release coalescing both sides",
          "[memory][contiguous]") {
  CHECK(next_pow2(1) == 1);
  CHECK(next_pow2(5) == 8);
  CHECK(next_pow2(64) == 64);
  CHECK(next_pow2(65) == 128);
  BuddyPlacer b(100);
  CHECK(b.extent_size(5) == 8);
  CHECK(b.extent_size(33) == 64);
  CHECK(b.max_extent() == 64);
  CHECK(b.capacity() == 100);
  CHECK_FALSE(b.allocate(65));  // larger than any root: nullopt, nothing changed
  CHECK(b.free_slots() == 100);

  FreeListPlacer f(100, false);
  CHECK(f.extent_size(5) == 5);
  CHECK(f.max_extent() == 100);
  REQUIRE(f.allocate(30) == 0);
  REQUIRE(f.allocate(10) == 30);
  REQUIRE(f.allocate(60) == 40);
  CHECK(f.free_slots() == 0);
  CHECK(f.largest_free_extent() == 0);
  CHECK_FALSE(f.allocate(1));
  f.release(0, 30);
  f.release(40, 60);
  CHECK(f.free_extents() == std::vector<Extent>{{0, 30}, {40, 60}});
  CHECK(f.largest_free_extent() == 60);
  f.release(30, 10);  // joins the holes on both sides
  CHECK(f.free_extents() == std::vector<Extent>{{0, 100}});
  CHECK(f.free_slots() == 100);
}

}  // namespace
}  // namespace kvsim::memory
