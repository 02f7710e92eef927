#include "memory/cpu_tier.h"

#include "common/assert.h"

namespace kvsim::memory {

CpuTier::CpuTier(std::int64_t capacity_blocks) : capacity_(capacity_blocks) {
  KVSIM_ASSERT(capacity_blocks >= 0, "a CPU tier has a non-negative capacity");
}

bool CpuTier::store(std::uint64_t hash) {
  if (capacity_ == 0) return false;
  if (const auto it = index_.find(hash); it != index_.end()) {
    lru_.splice(lru_.end(), lru_, it->second);
    return false;
  }
  if (size() == capacity_) {
    index_.erase(lru_.front());
    lru_.pop_front();
    ++dropped_;
  }
  lru_.push_back(hash);
  index_.emplace(hash, std::prev(lru_.end()));
  ++stored_;
  return true;
}

void CpuTier::touch(std::uint64_t hash) {
  const auto it = index_.find(hash);
  KVSIM_ASSERT(it != index_.end(), "touch of a block the CPU tier does not hold");
  lru_.splice(lru_.end(), lru_, it->second);
}

std::vector<std::uint64_t> CpuTier::lru_order() const {
  return {lru_.begin(), lru_.end()};
}

void CpuTier::check_invariants() const {
  KVSIM_ASSERT(size() <= capacity_, "the CPU tier holds more than its capacity");
  KVSIM_ASSERT(lru_.size() == index_.size(), "CPU tier LRU and index disagree");
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const auto found = index_.find(*it);
    KVSIM_ASSERT(found != index_.end() && found->second == it, "CPU tier index entry");
  }
  KVSIM_ASSERT(stored_ - dropped_ == size(), "CPU tier counters");
}

}  // namespace kvsim::memory
