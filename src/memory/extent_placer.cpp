#include "memory/extent_placer.h"

#include <algorithm>
#include <bit>

#include "common/assert.h"

namespace kvsim::memory {

std::int64_t next_pow2(std::int64_t n) {
  KVSIM_ASSERT(n >= 1 && n <= (std::int64_t{1} << 62), "next_pow2 of a size out of range");
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(n)));
}

namespace {

int order_of(std::int64_t pow2) {
  return std::countr_zero(static_cast<std::uint64_t>(pow2));
}

}  // namespace

// ---- BuddyPlacer -------------------------------------------------------------------------

BuddyPlacer::BuddyPlacer(std::int64_t capacity)
    : capacity_(capacity), free_slots_(capacity), free_blocks_(kMaxOrder + 1) {
  KVSIM_ASSERT(capacity >= 1, "a buddy space needs at least one slot");
  std::int64_t offset = 0;
  for (int order = kMaxOrder; order >= 0; --order) {
    const std::int64_t size = std::int64_t{1} << order;
    if ((capacity - offset) >= size) {
      roots_.emplace_back(offset, order);
      free_blocks_[static_cast<std::size_t>(order)].insert(offset);
      offset += size;
    }
  }
}

std::int64_t BuddyPlacer::extent_size(std::int64_t slots) const {
  return next_pow2(slots);
}

int BuddyPlacer::root_order_at(std::int64_t offset) const {
  auto it = std::upper_bound(roots_.begin(), roots_.end(), std::make_pair(offset, kMaxOrder + 1));
  KVSIM_ASSERT(it != roots_.begin(), "offset before the first root");
  --it;
  return it->second;
}

std::optional<std::int64_t> BuddyPlacer::allocate(std::int64_t slots) {
  const std::int64_t size = extent_size(slots);
  const int want = order_of(size);
  if (want > kMaxOrder) return std::nullopt;
  int order = want;
  while (order <= kMaxOrder && free_blocks_[static_cast<std::size_t>(order)].empty()) ++order;
  if (order > kMaxOrder) return std::nullopt;
  auto& list = free_blocks_[static_cast<std::size_t>(order)];
  const std::int64_t offset = *list.begin();
  list.erase(list.begin());
  while (order > want) {
    --order;
    free_blocks_[static_cast<std::size_t>(order)].insert(offset + (std::int64_t{1} << order));
  }
  free_slots_ -= size;
  return offset;
}

void BuddyPlacer::release(std::int64_t offset, std::int64_t slots) {
  const std::int64_t size = extent_size(slots);
  int order = order_of(size);
  const int root_order = root_order_at(offset);
  KVSIM_ASSERT(order <= root_order && offset % size == 0, "release of a block never allocated");
  free_slots_ += size;
  while (order < root_order) {
    const std::int64_t buddy = offset ^ (std::int64_t{1} << order);
    auto& list = free_blocks_[static_cast<std::size_t>(order)];
    const auto it = list.find(buddy);
    if (it == list.end()) break;
    list.erase(it);
    offset = std::min(offset, buddy);
    ++order;
  }
  const bool inserted = free_blocks_[static_cast<std::size_t>(order)].insert(offset).second;
  KVSIM_ASSERT(inserted, "double release of a buddy block");
  KVSIM_ASSERT(free_slots_ <= capacity_, "more free than capacity (double release)");
}

std::int64_t BuddyPlacer::largest_free_extent() const {
  for (int order = kMaxOrder; order >= 0; --order) {
    if (!free_blocks_[static_cast<std::size_t>(order)].empty()) return std::int64_t{1} << order;
  }
  return 0;
}

std::int64_t BuddyPlacer::max_extent() const {
  return std::int64_t{1} << roots_.front().second;
}

std::vector<Extent> BuddyPlacer::free_extents() const {
  std::vector<Extent> out;
  for (int order = 0; order <= kMaxOrder; ++order) {
    for (std::int64_t offset : free_blocks_[static_cast<std::size_t>(order)]) {
      out.push_back({offset, std::int64_t{1} << order});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
  return out;
}

// ---- FreeListPlacer ----------------------------------------------------------------------

FreeListPlacer::FreeListPlacer(std::int64_t capacity, bool best_fit)
    : capacity_(capacity), best_fit_(best_fit), free_slots_(capacity) {
  KVSIM_ASSERT(capacity >= 1, "an extent space needs at least one slot");
  add_hole(0, capacity);
}

void FreeListPlacer::add_hole(std::int64_t offset, std::int64_t size) {
  holes_.emplace(offset, size);
  by_size_.emplace(size, offset);
}

void FreeListPlacer::remove_hole(std::map<std::int64_t, std::int64_t>::iterator it) {
  by_size_.erase({it->second, it->first});
  holes_.erase(it);
}

std::optional<std::int64_t> FreeListPlacer::allocate(std::int64_t slots) {
  KVSIM_ASSERT(slots >= 1, "an extent needs at least one slot");
  std::map<std::int64_t, std::int64_t>::iterator hole = holes_.end();
  if (best_fit_) {
    const auto it = by_size_.lower_bound({slots, 0});
    if (it != by_size_.end()) hole = holes_.find(it->second);
  } else {
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second >= slots) {
        hole = it;
        break;
      }
    }
  }
  if (hole == holes_.end()) return std::nullopt;
  const std::int64_t offset = hole->first;
  const std::int64_t size = hole->second;
  remove_hole(hole);
  if (size > slots) add_hole(offset + slots, size - slots);
  free_slots_ -= slots;
  return offset;
}

void FreeListPlacer::release(std::int64_t offset, std::int64_t slots) {
  KVSIM_ASSERT(slots >= 1 && offset >= 0 && offset + slots <= capacity_, "extent out of range");
  std::int64_t begin = offset;
  std::int64_t end = offset + slots;
  auto next = holes_.lower_bound(offset);
  KVSIM_ASSERT(next == holes_.end() || next->first >= end, "release overlaps a hole (double free)");
  if (next != holes_.begin()) {
    auto prev = std::prev(next);
    KVSIM_ASSERT(prev->first + prev->second <= begin, "release overlaps a hole (double free)");
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      remove_hole(prev);
    }
  }
  if (next != holes_.end() && next->first == end) {
    end += next->second;
    remove_hole(next);
  }
  add_hole(begin, end - begin);
  free_slots_ += slots;
}

std::int64_t FreeListPlacer::largest_free_extent() const {
  return by_size_.empty() ? 0 : by_size_.rbegin()->first;
}

std::vector<Extent> FreeListPlacer::free_extents() const {
  std::vector<Extent> out;
  out.reserve(holes_.size());
  for (const auto& [offset, size] : holes_) out.push_back({offset, size});
  return out;
}

}  // namespace kvsim::memory
