// The CPU offload tier: an LRU of block content hashes with a capacity in blocks.

#include <vector>

#include <catch2/catch.hpp>

#include "memory/cpu_tier.h"

namespace kvsim::memory {
namespace {

using Order = std::vector<std::uint64_t>;

TEST_CASE("the CPU tier keeps evicted blocks in LRU order and drops its oldest when full",
          "[memory][offload]") {
  CpuTier t(3);
  CHECK(t.store(10));
  CHECK(t.store(20));
  CHECK(t.store(30));
  CHECK(t.lru_order() == Order{10, 20, 30});
  // Stored again (evicted from the GPU after a load): no copy, only the youngest.
  CHECK_FALSE(t.store(10));
  CHECK(t.lru_order() == Order{20, 30, 10});
  // A hit makes a block the youngest.
  t.touch(20);
  CHECK(t.lru_order() == Order{30, 10, 20});
  // Full: 30, the oldest, is dropped.
  CHECK(t.store(40));
  CHECK(t.lru_order() == Order{10, 20, 40});
  CHECK_FALSE(t.contains(30));
  CHECK(t.contains(40));
  CHECK(t.size() == 3);
  CHECK(t.stored_blocks() == 4);
  CHECK(t.dropped_blocks() == 1);
  t.check_invariants();
}

TEST_CASE("a CPU tier of 0 blocks holds nothing", "[memory][offload]") {
  CpuTier t(0);
  CHECK_FALSE(t.store(1));
  CHECK_FALSE(t.contains(1));
  CHECK(t.size() == 0);
  CHECK(t.stored_blocks() == 0);
  t.check_invariants();
}

}  // namespace
}  // namespace kvsim::memory
