// PagedAllocator's slot and byte accounting and its invariant check (paged_allocator.h):
// the reservation recounted from the tables, the byte split, and check_invariants().
#include <algorithm>

#include "common/assert.h"
#include "common/int_math.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {

std::vector<std::int64_t> PagedAllocator::recount_reservation() const {
  const std::size_t num_groups = groups_.size();
  std::vector<std::int64_t> reservation(num_groups, 0);
  struct SharedTail {
    BlockId block;
    std::int64_t end;  // position after the block
    std::int64_t tokens;
    std::int64_t final_tokens;
    std::size_t group;
  };
  std::vector<SharedTail> shared;
  for (const auto& [id, s] : seqs_) {
    if (s.swapped) continue;
    for (std::size_t g = 0; g < num_groups; ++g) {
      const Table& t = s.tables[g];
      if (t.blocks.empty()) continue;
      const BlockId tail = t.blocks.back();
      const std::int64_t end =
          (t.first + static_cast<std::int64_t>(t.blocks.size())) * groups_[g].block_size;
      if (pool_.ref(tail) == 1) {
        reservation[g] += std::max<std::int64_t>(0, std::min(end, s.final_tokens) - s.num_tokens);
      } else if (end > s.num_tokens) {
        shared.push_back({tail, end, s.num_tokens, s.final_tokens, g});
      }
    }
  }
  if (!shared.empty()) {
    std::sort(shared.begin(), shared.end(), [](const SharedTail& a, const SharedTail& b) {
      return a.block != b.block ? a.block < b.block : a.final_tokens > b.final_tokens;
    });
    for (std::size_t i = 0; i < shared.size(); ++i) {
      if (i > 0 && shared[i].block == shared[i - 1].block) continue;  // counted once, max f
      const SharedTail& t = shared[i];
      reservation[t.group] += std::max<std::int64_t>(0, std::min(t.end, t.final_tokens) - t.tokens);
    }
  }
  return reservation;
}

ByteAccounting PagedAllocator::bytes_from(const std::vector<std::int64_t>& reservation) const {
  ByteAccounting b;
  b.capacity = static_cast<Bytes>(pool_.num_blocks()) * page_bytes_;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const GroupGeometry& geo = groups_[g];
    const std::int64_t in_use = pool_.num_in_use(static_cast<int>(g));
    const std::int64_t tokens = pool_.filled_in_use(static_cast<int>(g));
    const std::int64_t internal = in_use * geo.block_size - tokens - reservation[g];
    KVSIM_ASSERT(internal >= 0, "paged accounting: negative internal fragmentation");
    b.token_states += static_cast<Bytes>(tokens) * geo.bytes_per_slot;
    b.reservation += static_cast<Bytes>(reservation[g]) * geo.bytes_per_slot;
    b.internal_fragmentation += static_cast<Bytes>(internal) * geo.bytes_per_slot +
                                static_cast<Bytes>(in_use) * geo.padding;
  }
  if (state_blocks_ > 0) {
    const std::int64_t in_use = pool_.num_in_use(state_group_);
    const Bytes state = static_cast<Bytes>(in_use / state_blocks_) * state_bytes_;
    b.token_states += state;
    b.internal_fragmentation += static_cast<Bytes>(in_use) * page_bytes_ - state;
  }
  b.free = static_cast<Bytes>(pool_.num_free()) * page_bytes_;
  return b;
}

ByteAccounting PagedAllocator::bytes_now() const {
  // Without forks no partial tail is shared: the incremental sum is exact, O(1).
  return forked_ ? bytes_from(recount_reservation()) : bytes_from(reservation_);
}

ByteAccounting PagedAllocator::byte_accounting(const SeqInfo*) const {
  return bytes_now();
}

SlotAccounting PagedAllocator::accounting(const SeqInfo*) const {
  const ByteAccounting b = bytes_now();
  const auto slots = [&](Bytes bytes) {
    return static_cast<std::int64_t>(bytes / widest_bytes_per_slot_);
  };
  SlotAccounting a;
  a.capacity = pool_.num_blocks() * base_block_size_;
  a.token_states = slots(b.token_states);
  a.reservation = slots(b.reservation);
  a.internal_fragmentation = slots(b.internal_fragmentation);
  a.external_fragmentation = 0;
  a.free = a.capacity - a.token_states - a.reservation - a.internal_fragmentation;
  a.largest_free_extent = pool_.num_free() * base_block_size_;
  a.blocks_in_use = pool_.num_in_use();
  a.shared_blocks = pool_.shared_blocks();
  a.cached_blocks = pool_.num_evictable();
  return a;
}

void PagedAllocator::check_invariants() const {
  pool_.check_invariants();
  std::vector<std::int32_t> refs(static_cast<std::size_t>(pool_.num_blocks()), 0);
  std::int64_t cpu = 0;
  for (const auto& [id, s] : seqs_) {
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const Table& t = s.tables[g];
      const std::int64_t bs = groups_[g].block_size;
      if (s.swapped) {
        KVSIM_ASSERT(t.blocks.empty(), "a swapped-out sequence holds GPU blocks");
        cpu += t.swapped_blocks;
        continue;
      }
      const std::int64_t end = t.first + static_cast<std::int64_t>(t.blocks.size());
      KVSIM_ASSERT(end == std::max(t.first, ceil_div(s.num_tokens, bs)), "table length");
      KVSIM_ASSERT(t.first >= 0 && t.first <= std::max<std::int64_t>(0, s.num_tokens) / bs + 1,
                   "table start");
      for (std::int64_t j = t.first; j < end; ++j) {
        const BlockId b = t.blocks[static_cast<std::size_t>(j - t.first)];
        ++refs[static_cast<std::size_t>(b)];
        KVSIM_ASSERT(pool_.group(b) == static_cast<int>(g), "a block in another group's table");
        KVSIM_ASSERT(pool_.fill(b) == std::clamp<std::int64_t>(s.num_tokens - j * bs, 0, bs),
                     "block fill disagrees with the sequence length");
      }
      // Per-sequence internal fragmentation stays below one block.
      const std::int64_t internal = end * bs - std::max(s.num_tokens, s.final_tokens);
      KVSIM_ASSERT(internal < bs, "a sequence wastes a whole block");
    }
    if (s.swapped) {
      KVSIM_ASSERT(s.state.empty() && s.swapped_state == state_blocks_, "swapped state pages");
      cpu += s.swapped_state;
      continue;
    }
    KVSIM_ASSERT(static_cast<std::int64_t>(s.state.size()) == state_blocks_, "state pages");
    for (BlockId b : s.state) {
      ++refs[static_cast<std::size_t>(b)];
      KVSIM_ASSERT(pool_.group(b) == state_group_, "a state page in another group");
    }
  }
  for (std::int64_t b = 0; b < pool_.num_blocks(); ++b) {
    KVSIM_ASSERT(refs[static_cast<std::size_t>(b)] == pool_.ref(static_cast<BlockId>(b)),
                 "reference count disagrees with the block tables (leak or double free)");
  }
  KVSIM_ASSERT(cpu == cpu_blocks_used_ && cpu_blocks_used_ <= cpu_blocks_, "CPU blocks");
  if (!forked_) {
    KVSIM_ASSERT(recount_reservation() == reservation_, "incremental reservation disagrees");
  }
}

}  // namespace kvsim::memory
