#include "memory/block_pool.h"

#include "common/assert.h"

namespace kvsim::memory {

BlockPool::BlockPool(std::int64_t num_blocks, int num_groups)
    : blocks_(static_cast<std::size_t>(num_blocks)),
      in_use_(static_cast<std::size_t>(num_groups), 0),
      filled_in_use_(static_cast<std::size_t>(num_groups), 0),
      cache_(static_cast<std::size_t>(num_groups)) {
  KVSIM_ASSERT(num_blocks > 0 && num_groups > 0, "a pool needs blocks and groups");
  free_list_.reserve(static_cast<std::size_t>(num_blocks));
  // Block 0 on top: allocation order is 0, 1, 2, ... on a fresh pool.
  for (std::int64_t b = num_blocks - 1; b >= 0; --b) free_list_.push_back(static_cast<BlockId>(b));
}

BlockId BlockPool::evict_oldest() {
  const BlockId b = lru_oldest_;
  lru_unlink(b);
  Block& victim = blocks_[static_cast<std::size_t>(b)];
  cache_[static_cast<std::size_t>(victim.group)].erase(victim.hash);
  if (offload_tier_ != nullptr) offload_tier_->store(victim.hash);
  victim.hashed = false;
  victim.hash = 0;
  ++evictions_;
  return b;
}

void BlockPool::enter_use(BlockId b) {
  const Block& block = blocks_[static_cast<std::size_t>(b)];
  ++in_use_[static_cast<std::size_t>(block.group)];
  filled_in_use_[static_cast<std::size_t>(block.group)] += block.fill;
}

void BlockPool::add_ref(BlockId b) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  if (block.ref == 0) {
    KVSIM_ASSERT(block.hashed, "only a cached block is referenced again from ref 0");
    lru_unlink(b);
    enter_use(b);
  } else if (block.ref == 1) {
    ++shared_blocks_;
  }
  ++block.ref;
}

BlockId BlockPool::lookup(int group, std::uint64_t hash) const {
  const auto& map = cache_[static_cast<std::size_t>(group)];
  const auto it = map.find(hash);
  return it == map.end() ? kNoBlock : it->second;
}

bool BlockPool::register_hash(BlockId b, std::uint64_t hash) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  KVSIM_ASSERT(block.ref > 0, "only an in-use block is registered");
  if (block.hashed) return false;
  const auto [it, inserted] = cache_[static_cast<std::size_t>(block.group)].try_emplace(hash, b);
  if (!inserted) return false;
  block.hashed = true;
  block.hash = hash;
  return true;
}

void BlockPool::lru_push_young(BlockId b) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  block.lru_prev = lru_youngest_;
  block.lru_next = kNoBlock;
  if (lru_youngest_ != kNoBlock) {
    blocks_[static_cast<std::size_t>(lru_youngest_)].lru_next = b;
  } else {
    lru_oldest_ = b;
  }
  lru_youngest_ = b;
  ++num_evictable_;
}

void BlockPool::lru_unlink(BlockId b) {
  Block& block = blocks_[static_cast<std::size_t>(b)];
  if (block.lru_prev != kNoBlock) {
    blocks_[static_cast<std::size_t>(block.lru_prev)].lru_next = block.lru_next;
  } else {
    lru_oldest_ = block.lru_next;
  }
  if (block.lru_next != kNoBlock) {
    blocks_[static_cast<std::size_t>(block.lru_next)].lru_prev = block.lru_prev;
  } else {
    lru_youngest_ = block.lru_prev;
  }
  block.lru_prev = block.lru_next = kNoBlock;
  --num_evictable_;
}

std::vector<BlockId> BlockPool::lru_order() const {
  std::vector<BlockId> order;
  for (BlockId b = lru_oldest_; b != kNoBlock; b = blocks_[static_cast<std::size_t>(b)].lru_next) {
    order.push_back(b);
  }
  return order;
}

void BlockPool::check_invariants() const {
  const std::size_t n = blocks_.size();
  std::vector<int> where(n, 0);  // 1 in use, 2 free list, 3 LRU
  std::vector<std::int64_t> in_use(in_use_.size(), 0), filled(in_use_.size(), 0);
  std::int64_t shared = 0;
  for (std::size_t b = 0; b < n; ++b) {
    const Block& block = blocks_[b];
    KVSIM_ASSERT(block.ref >= 0, "negative reference count");
    if (block.ref > 0) {
      where[b] = 1;
      ++in_use[static_cast<std::size_t>(block.group)];
      filled[static_cast<std::size_t>(block.group)] += block.fill;
      if (block.ref > 1) ++shared;
    }
  }
  for (BlockId b : free_list_) {
    KVSIM_ASSERT(where[static_cast<std::size_t>(b)] == 0, "free-list block also elsewhere");
    KVSIM_ASSERT(!blocks_[static_cast<std::size_t>(b)].hashed, "hashed block on the free list");
    where[static_cast<std::size_t>(b)] = 2;
  }
  std::int64_t lru = 0;
  BlockId prev = kNoBlock;
  for (BlockId b = lru_oldest_; b != kNoBlock; b = blocks_[static_cast<std::size_t>(b)].lru_next) {
    KVSIM_ASSERT(where[static_cast<std::size_t>(b)] == 0, "LRU block also elsewhere");
    KVSIM_ASSERT(blocks_[static_cast<std::size_t>(b)].hashed, "unhashed block on the LRU");
    KVSIM_ASSERT(blocks_[static_cast<std::size_t>(b)].lru_prev == prev, "broken LRU links");
    where[static_cast<std::size_t>(b)] = 3;
    prev = b;
    ++lru;
  }
  KVSIM_ASSERT(prev == lru_youngest_, "broken LRU tail");
  KVSIM_ASSERT(lru == num_evictable_, "evictable count");
  for (std::size_t b = 0; b < n; ++b) {
    KVSIM_ASSERT(where[b] != 0, "a block is leaked (in no state)");
  }
  KVSIM_ASSERT(in_use == in_use_ && filled == filled_in_use_, "per-group in-use counters");
  KVSIM_ASSERT(shared == shared_blocks_, "shared-block count");
  std::size_t hashed = 0;
  for (std::size_t b = 0; b < n; ++b) {
    const Block& block = blocks_[b];
    if (!block.hashed) continue;
    ++hashed;
    KVSIM_ASSERT(lookup(block.group, block.hash) == static_cast<BlockId>(b), "cache map entry");
  }
  std::size_t entries = 0;
  for (const auto& map : cache_) entries += map.size();
  KVSIM_ASSERT(entries == hashed, "cache map holds stale entries");
}

}  // namespace kvsim::memory
