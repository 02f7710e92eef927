#pragma once
// The CPU offload tier (vLLM's OffloadingConnector CPU backend, LMCache's local CPU cache): host
// memory that holds copies of prefix blocks evicted from the GPU prefix cache, by content hash,
// so that a later request with the same prefix loads them over PCIe instead of recomputing them.
// It counts blocks only; the paged allocator hands it the capacity in blocks (host bytes / page
// bytes) and the bytes per block for its counters.
//
// Invariants: size() <= capacity(); a hash is held at most once; lru_order() lists every held
// hash from the oldest (next to drop) to the youngest; stored_blocks() − dropped_blocks() ==
// size().

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace kvsim::memory {

class CpuTier {
 public:
  // A tier of `capacity_blocks` blocks (0: a tier that holds nothing).
  explicit CpuTier(std::int64_t capacity_blocks);

  // A block with content `hash` was evicted from the GPU: its copy becomes the youngest. Returns
  // whether a copy was made (false when the tier already held it, which is then only made the
  // youngest, or when the capacity is 0). A full tier drops its oldest block first.
  bool store(std::uint64_t hash);
  bool contains(std::uint64_t hash) const { return index_.contains(hash); }
  // A held block was read (a hit): it becomes the youngest. Requires contains(hash).
  void touch(std::uint64_t hash);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t size() const { return static_cast<std::int64_t>(index_.size()); }
  std::int64_t stored_blocks() const { return stored_; }    // copies made, since construction
  std::int64_t dropped_blocks() const { return dropped_; }  // dropped when full
  // Held hashes from the oldest to the youngest.
  std::vector<std::uint64_t> lru_order() const;
  // Recounts the invariants above; KVSIM_ASSERT on a violation (tests).
  void check_invariants() const;

 private:
  std::int64_t capacity_;
  std::list<std::uint64_t> lru_;  // front: oldest
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
  std::int64_t stored_ = 0;
  std::int64_t dropped_ = 0;
};

}  // namespace kvsim::memory
