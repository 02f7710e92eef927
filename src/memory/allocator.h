#pragma once
// The KV-cache allocator interface the scheduler drives. Allocators count token slots; the bytes
// per slot are handed in at construction, so an allocator knows nothing of models or time.
// Running out of space is a return value (nullopt / false), never an exception: the scheduler
// decides whom to preempt.

#include <cstdint>
#include <optional>
#include <span>

#include "common/units.h"

namespace kvsim::memory {

using SeqId = std::uint64_t;

// What an allocator may know about a sequence when it is admitted.
struct SeqInfo {
  SeqId id = 0;
  std::int64_t prompt_tokens = 0;  // prompt length
  std::int64_t final_tokens = 0;   // prompt + output: the length it will reach (f_s)
  // Content id of each leading full block of the prompt, in order, for prefix caching (already
  // at the allocator's block size). Empty: the prompt shares nothing.
  std::span<const std::uint64_t> block_content_ids;
};

struct AdmitResult {
  std::int64_t cached_tokens = 0;  // leading prompt tokens found in the prefix cache (no compute)
};

// The five quantities of DESIGN.md "Definitions", in token slots, at one instant.
// Invariant: token_states + reservation + internal_fragmentation + external_fragmentation + free
//            == capacity.
struct SlotAccounting {
  std::int64_t capacity = 0;
  std::int64_t token_states = 0;
  std::int64_t reservation = 0;
  std::int64_t internal_fragmentation = 0;
  std::int64_t external_fragmentation = 0;
  std::int64_t free = 0;
  std::int64_t largest_free_extent = 0;  // contiguous: biggest hole; paged: free blocks × block size
  std::int64_t blocks_in_use = 0;        // paged only
  std::int64_t shared_blocks = 0;        // paged: blocks referenced by more than one sequence
  std::int64_t cached_blocks = 0;        // paged: evictable blocks kept for the prefix cache
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Admits a new sequence and makes room for its first `num_tokens` tokens (the whole prompt, or
  // the first chunk under chunked prefill). nullopt, with nothing changed, when it does not fit.
  virtual std::optional<AdmitResult> admit(const SeqInfo& seq, std::int64_t num_tokens) = 0;
  // Room for `num_tokens` more tokens of an admitted sequence; they count as stored from now on.
  // false, with nothing changed, when there is no room.
  virtual bool grow(SeqId id, std::int64_t num_tokens) = 0;
  // Releases all the sequence holds (prefix-cached blocks stay, evictable).
  virtual void free(SeqId id) = 0;
  // Accounting now. `waiting_head`, when a request waits at the head of the queue, is what it
  // would ask for; free slots that cannot serve it count as external fragmentation.
  virtual SlotAccounting accounting(const SeqInfo* waiting_head) const = 0;
  // Bytes of KV per slot (per GPU), as handed in.
  virtual Bytes bytes_per_slot() const = 0;
};

}  // namespace kvsim::memory
