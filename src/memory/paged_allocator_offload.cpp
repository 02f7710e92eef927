// The paged allocator's prefix-cache lookups that reach past the GPU: the CPU offload tier
// (cpu_tier.h), what a lookup would find, and the counters of each admission's lookup.
#include <algorithm>

#include "common/assert.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {

std::int64_t PagedAllocator::cpu_hit_blocks(const std::vector<std::uint64_t>& hashes,
                                            std::int64_t first, std::int64_t cap) const {
  if (!cpu_tier_) return 0;
  const std::int64_t end = std::min(static_cast<std::int64_t>(hashes.size()),
                                    std::max<std::int64_t>(0, cap) / base_block_size_);
  std::int64_t j = first;
  while (j < end && cpu_tier_->contains(hashes[static_cast<std::size_t>(j)])) ++j;
  return std::max<std::int64_t>(0, j - first);
}

void PagedAllocator::count_prefix_query(const SeqInfo& seq, std::int64_t num_hashes,
                                        std::int64_t hit_tokens, std::int64_t loaded_blocks) {
  if (!prefix_caching_) return;
  PrefixCacheStats& p = stats_.prefix_cache;
  ++p.queries;
  p.query_tokens += seq.prompt_tokens;
  p.hit_tokens += hit_tokens;
  p.query_blocks +=
      std::min(std::max<std::int64_t>(0, seq.prompt_tokens - 1), num_hashes * base_block_size_) /
      base_block_size_;
  p.hit_blocks += hit_tokens / base_block_size_;
  p.cpu_hit_blocks += loaded_blocks;
  p.cpu_hit_tokens += loaded_blocks * base_block_size_;
  stats_.offload.loaded_blocks += loaded_blocks;
  stats_.offload.loaded_bytes += static_cast<Bytes>(loaded_blocks) * page_bytes_;
}

std::int64_t PagedAllocator::cached_prefix_tokens(const SeqInfo& seq,
                                                  std::int64_t num_tokens) const {
  if (!prefix_caching_) return 0;
  const std::vector<std::uint64_t> hashes = chain_hashes(seq);
  const std::int64_t cap = std::min(num_tokens, seq.prompt_tokens - 1);
  const std::int64_t gpu = find_hit(hashes, cap).tokens;
  return gpu + cpu_hit_blocks(hashes, gpu / base_block_size_, cap) * base_block_size_;
}

}  // namespace kvsim::memory
