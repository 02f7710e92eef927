#pragma once
// The paged allocator's pool of KV blocks (pages): reference counts, the number of token slots
// each block has filled, a plain free list, an LRU of evictable prefix-cached blocks and one
// content-hash → block map per layer group.
//
// Invariants:
//  - every block is in exactly one state: in use (ref > 0), plain free (ref 0, no hash, on the
//    free list) or evictable (ref 0, hashed, on the LRU);
//  - num_in_use() + free list size + num_evictable() == num_blocks();
//  - a hashed block is the value of its group's map at its hash, and a map entry points at a
//    hashed block of that group (in use or evictable);
//  - filled_in_use(g) is the sum of fill() over the in-use blocks of group g;
//  - shared_blocks() counts the blocks with ref > 1.
// Allocation takes a plain free block first (the most recently freed) and evicts the LRU's
// oldest block only when no plain one is left, so a cached block is evicted only when a fresh
// block is needed and nothing else is free. Released hashed blocks join the LRU's young end.
// With an offload tier (set_offload_tier), every evicted block's hash is stored there.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/assert.h"
#include "memory/cpu_tier.h"

namespace kvsim::memory {

using BlockId = std::int32_t;
inline constexpr BlockId kNoBlock = -1;

class BlockPool {
 public:
  BlockPool(std::int64_t num_blocks, int num_groups);

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(blocks_.size()); }
  // Blocks an allocation may take: plain free plus evictable.
  std::int64_t num_free() const {
    return static_cast<std::int64_t>(free_list_.size()) + num_evictable_;
  }
  std::int64_t num_evictable() const { return num_evictable_; }
  std::int64_t num_in_use() const { return num_blocks() - num_free(); }
  std::int64_t num_in_use(int group) const { return in_use_[static_cast<std::size_t>(group)]; }
  std::int64_t filled_in_use(int group) const {
    return filled_in_use_[static_cast<std::size_t>(group)];
  }
  std::int64_t shared_blocks() const { return shared_blocks_; }
  std::int64_t evictions() const { return evictions_; }
  // From now on, a cached block evicted by allocate() is stored in `tier` (KV offload); nullptr:
  // evicted blocks are dropped. The tier must outlive the pool's use of it.
  void set_offload_tier(CpuTier* tier) { offload_tier_ = tier; }

  // A fresh block for `group`: ref 1, fill 0, no hash. Evicts the LRU's oldest block (dropping it
  // from the cache) when the free list is empty. Requires num_free() > 0.
  BlockId allocate(int group);
  // One more reference. A block at ref 0 (evictable) leaves the LRU and counts as in use again.
  void add_ref(BlockId b);
  // One reference less. At 0 a hashed block becomes evictable (LRU young end), another one
  // plain free. Requires ref(b) > 0.
  void release(BlockId b);

  std::int32_t ref(BlockId b) const { return blocks_[static_cast<std::size_t>(b)].ref; }
  std::int32_t fill(BlockId b) const { return blocks_[static_cast<std::size_t>(b)].fill; }
  int group(BlockId b) const { return blocks_[static_cast<std::size_t>(b)].group; }
  // Sets the slots filled of an in-use block.
  void set_fill(BlockId b, std::int32_t fill);

  // The block caching `hash` in `group`, or kNoBlock.
  BlockId lookup(int group, std::uint64_t hash) const;
  // Caches in-use block b under `hash` in its group unless the group already caches that hash
  // (another block with the same content) or b is already hashed. Returns whether it did.
  bool register_hash(BlockId b, std::uint64_t hash);

  // Evictable blocks from oldest (next to evict) to youngest.
  std::vector<BlockId> lru_order() const;
  // Recounts every invariant above in O(num_blocks); KVSIM_ASSERT on a violation (tests).
  void check_invariants() const;

 private:
  struct Block {
    std::int32_t ref = 0;
    std::int32_t fill = 0;
    std::int32_t group = 0;
    bool hashed = false;
    std::uint64_t hash = 0;
    BlockId lru_prev = kNoBlock;  // towards the oldest
    BlockId lru_next = kNoBlock;  // towards the youngest
  };

  // Takes the LRU's oldest block out of the cache (allocate() with no plain free block).
  BlockId evict_oldest();
  void lru_push_young(BlockId b);
  void lru_unlink(BlockId b);
  void enter_use(BlockId b);

  std::vector<Block> blocks_;
  std::vector<BlockId> free_list_;  // stack: the most recently freed on top
  BlockId lru_oldest_ = kNoBlock;
  BlockId lru_youngest_ = kNoBlock;
  std::int64_t num_evictable_ = 0;
  std::vector<std::int64_t> in_use_;
  std::vector<std::int64_t> filled_in_use_;
  std::int64_t shared_blocks_ = 0;
  std::int64_t evictions_ = 0;
  CpuTier* offload_tier_ = nullptr;
  std::vector<std::unordered_map<std::uint64_t, BlockId>> cache_;  // per group
};

// The hot paths, inline: every block of every sequence passes through them.
inline BlockId BlockPool::allocate(int group) {
  KVSIM_ASSERT(num_free() > 0, "allocate from an empty pool");
  BlockId b;
  if (!free_list_.empty()) {
    b = free_list_.back();
    free_list_.pop_back();
  } else {
    b = evict_oldest();
  }
  Block& block = blocks_[static_cast<std::size_t>(b)];
  block.ref = 1;
  block.fill = 0;
  block.group = group;
  ++in_use_[static_cast<std::size_t>(group)];
  return b;
}

inline void BlockPool::release(BlockId b) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  KVSIM_ASSERT(block.ref > 0, "release of a block nobody holds (double free)");
  --block.ref;
  if (block.ref == 1) --shared_blocks_;
  if (block.ref > 0) return;
  --in_use_[static_cast<std::size_t>(block.group)];
  filled_in_use_[static_cast<std::size_t>(block.group)] -= block.fill;
  if (block.hashed) {
    lru_push_young(b);
  } else {
    free_list_.push_back(b);
  }
}

inline void BlockPool::set_fill(BlockId b, std::int32_t fill) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  KVSIM_ASSERT(block.ref > 0, "fill of a block not in use");
  filled_in_use_[static_cast<std::size_t>(block.group)] += fill - block.fill;
  block.fill = fill;
}

}  // namespace kvsim::memory
