// The block pool under the paged allocator: states, reference counts, LRU, content map.

#include <catch2/catch.hpp>

#include "memory/block_pool.h"

namespace kvsim::memory {
namespace {

TEST_CASE("a fresh pool hands out blocks 0, 1, 2, ... and takes them back",
          "[memory][block_pool]") {
  BlockPool pool(4, 1);
  CHECK(pool.num_free() == 4);
  CHECK(pool.allocate(0) == 0);
  CHECK(pool.allocate(0) == 1);
  CHECK(pool.num_in_use() == 2);
  pool.set_fill(1, 7);
  CHECK(pool.filled_in_use(0) == 7);
  pool.release(1);
  CHECK(pool.filled_in_use(0) == 0);
  CHECK(pool.allocate(0) == 1);  // the most recently freed plain block comes back first
  CHECK(pool.fill(1) == 0);
  pool.check_invariants();
}

TEST_CASE("reference counts: shared blocks, release order, ref never below zero",
          "[memory][block_pool]") {
  BlockPool pool(3, 1);
  const BlockId b = pool.allocate(0);
  pool.add_ref(b);
  pool.add_ref(b);
  CHECK(pool.ref(b) == 3);
  CHECK(pool.shared_blocks() == 1);
  pool.release(b);
  pool.release(b);
  CHECK(pool.shared_blocks() == 0);
  CHECK(pool.num_in_use() == 1);
  pool.release(b);
  CHECK(pool.num_in_use() == 0);
  CHECK(pool.ref(b) == 0);
  pool.check_invariants();
}

TEST_CASE("hashed blocks: cached once per content, evictable at ref 0, evicted oldest first",
          "[memory][block_pool][lru]") {
  BlockPool pool(3, 2);
  const BlockId a = pool.allocate(0), b = pool.allocate(0), c = pool.allocate(1);
  CHECK(pool.register_hash(a, 100));
  CHECK_FALSE(pool.register_hash(b, 100));  // same content already cached in group 0
  CHECK(pool.register_hash(c, 100));        // another group has its own map
  CHECK(pool.lookup(0, 100) == a);
  CHECK(pool.lookup(1, 100) == c);
  pool.release(c);
  pool.release(a);
  pool.release(b);  // unhashed: plain free
  CHECK(pool.lru_order() == std::vector<BlockId>{c, a});
  CHECK(pool.num_evictable() == 2);
  CHECK(pool.num_free() == 3);
  CHECK(pool.allocate(0) == b);  // plain first
  CHECK(pool.evictions() == 0);
  CHECK(pool.allocate(0) == c);  // then the oldest evictable, which leaves the cache
  CHECK(pool.evictions() == 1);
  CHECK(pool.lookup(1, 100) == kNoBlock);
  pool.add_ref(a);  // a cache hit on an evictable block
  CHECK(pool.ref(a) == 1);
  CHECK(pool.num_evictable() == 0);
  CHECK(pool.num_in_use(0) == 3);
  pool.check_invariants();
}

}  // namespace
}  // namespace kvsim::memory
