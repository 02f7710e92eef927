#pragma once
// The paged allocator (PagedAttention / vLLM): per-sequence block tables over a shared BlockPool,
// one table per layer group (see AllocatorOptions for how hybrid groups share pages).
//
// Semantics, following vLLM's KV cache manager:
//  - admit allocates the blocks of the first num_tokens tokens, after taking the longest
//    prefix-cache hit (full blocks only, at most prompt − 1 tokens, at most num_tokens); it is
//    refused when fewer than the watermark's blocks would stay free (evictable cached blocks
//    count as free; a hit on an evictable block uses one up);
//  - grow allocates blocks as the sequence crosses block boundaries; a sliding-window group
//    first frees the blocks that lie entirely before position (tokens − window + 1), counting
//    the tokens stored before this growth;
//  - a full prompt block whose content id is known is cached (chained hash) as soon as it is
//    full, unless another block already caches the same content;
//  - fork shares every block (reference counts); the first sequence to write into a shared
//    partial block copies it (copy-on-write);
//  - free releases blocks tail first, so a sequence's last blocks are evicted first;
//  - a model with a per-sequence state (state_blocks_per_seq) takes that many more pages at
//    admission, in a pool group of their own, and holds them until it is freed (or swapped out
//    with the rest); they count as admission blocks against the watermark;
//  - with a CPU offload tier (cpu_offload_bytes), an evicted cached block's hash moves to the
//    tier (CpuTier, LRU), and admit continues the GPU hit with the consecutive prompt blocks the
//    tier holds (same cap): fresh GPU blocks, counted as loaded (AdmitResult::loaded_tokens) and
//    cached on the GPU again at once. The tier is host memory, outside the accounting.
//
// Accounting: a sequence's state is token states (its bytes; the rest of its pages internal
// fragmentation). A block's filled slots are token states, counted once however many sequences
// share it. Only a table's last block can be partial; its unfilled slots are reservation up to
// the sequence's final length and internal fragmentation beyond (a shared partial block takes
// the largest final length of the sequences that end in it). Evictable cached blocks are free.
//
// Invariants (check_invariants): the BlockPool's; every in-use block is referenced exactly
// ref() times by the tables of resident sequences; a table covers blocks
// [first, ceil(tokens / block size)) with fill(j) = clamp(tokens − j × block size, 0, block size);
// CPU blocks in use == Σ blocks of swapped-out sequences <= the CPU pool; until the first fork,
// reservation_[g] == Σ own_reservation(s, g) over resident sequences (a partial tail block can be
// shared only through fork, so that sum is the exact reservation; after a fork it is recounted).

#include <memory>
#include <unordered_map>
#include <vector>

#include "memory/allocator.h"
#include "memory/block_pool.h"
#include "memory/cpu_tier.h"

namespace kvsim::memory {

// A layer group's block layout in the shared pool.
struct GroupGeometry {
  Bytes bytes_per_slot = 0;
  std::int64_t block_size = 0;      // tokens per block
  std::int64_t sliding_window = 0;  // 0: full attention
  Bytes padding = 0;                // bytes of a page no token fills (page − block × slot)
  std::int64_t hash_stride = 0;     // base blocks per block (prefix caching); 0: not cacheable
};

class PagedAllocator final : public Allocator {
 public:
  // `options` already validated by make_allocator (KVSIM_ASSERT otherwise).
  explicit PagedAllocator(const AllocatorOptions& options);

  std::optional<AdmitResult> admit(const SeqInfo& seq, std::int64_t num_tokens) override;
  bool grow(SeqId id, std::int64_t num_tokens) override;
  void free(SeqId id) override;
  SlotAccounting accounting(const SeqInfo* waiting_head) const override;
  Bytes bytes_per_slot() const override { return bytes_per_slot_; }
  ByteAccounting byte_accounting(const SeqInfo* waiting_head) const override;
  bool fork(SeqId parent, const SeqInfo& child) override;
  std::optional<Bytes> swap_out(SeqId id) override;
  std::optional<Bytes> swap_in(SeqId id) override;
  std::int64_t cached_prefix_tokens(const SeqInfo& seq, std::int64_t num_tokens) const override;
  AllocatorStats stats() const override;
  // Up to the tail block's last slot, or the slot before it when the block is a full prompt
  // block the prefix cache registers once full (the filling token is then grown here), within
  // the final length; one full-attention group, an unshared tail, no fork yet.
  std::optional<std::int64_t> in_place_room(SeqId id) const override;
  Bytes in_place_token_bytes() const override { return groups_[0].bytes_per_slot; }
  // The blocks an allocation may take (free or evictable), with one full-attention group and no
  // fork: a tail grow then takes a new block, a copy of a shared tail, or none.
  std::int64_t sure_tail_grows() const override;
  bool fits_alone(const SeqInfo& seq) const override;

  std::int64_t num_blocks() const { return pool_.num_blocks(); }
  Bytes page_bytes() const { return page_bytes_; }
  std::int64_t watermark_blocks() const { return watermark_blocks_; }
  const std::vector<GroupGeometry>& groups() const { return groups_; }
  const BlockPool& pool() const { return pool_; }
  // The CPU offload tier; nullptr without one.
  const CpuTier* cpu_tier() const { return cpu_tier_.get(); }
  // The block table of a resident sequence in `group` (block ids from its first held block) and
  // the index of that first block.
  const std::vector<BlockId>& block_table(SeqId id, int group = 0) const;
  std::int64_t first_block(SeqId id, int group = 0) const;
  // Recounts the invariants above; KVSIM_ASSERT on a violation (tests).
  void check_invariants() const;

 private:
  struct Table {
    std::int64_t first = 0;           // index of blocks[0] in the sequence
    std::vector<BlockId> blocks;      // held blocks, in order
    std::int64_t next_register = 0;   // first block index not yet offered to the cache
    std::int64_t swapped_blocks = 0;  // blocks held on the CPU while swapped out
  };
  struct Seq {
    std::int64_t prompt = 0;
    std::int64_t final_tokens = 0;
    std::int64_t num_tokens = 0;
    bool swapped = false;
    std::vector<std::uint64_t> hashes;  // chained hashes of the prompt's base blocks
    std::vector<Table> tables;          // one per group
    std::vector<BlockId> state;         // its state pages (state_blocks_ of them when resident)
    std::int64_t swapped_state = 0;     // state pages held on the CPU while swapped out
  };
  struct Hit {
    std::int64_t tokens = 0;
    std::vector<std::int64_t> first;           // per group: index of the first hit block
    std::vector<std::vector<BlockId>> blocks;  // per group: hit blocks from `first`
    std::int64_t evictable = 0;                // hit blocks now at ref 0
  };

  std::vector<std::uint64_t> chain_hashes(const SeqInfo& seq) const;
  // The longest usable prefix-cache hit of at most `cap` tokens.
  Hit find_hit(const std::vector<std::uint64_t>& hashes, std::int64_t cap) const;
  // Consecutive prompt blocks from block `first` on that the CPU tier holds, within `cap`
  // tokens (0 without a tier).
  std::int64_t cpu_hit_blocks(const std::vector<std::uint64_t>& hashes, std::int64_t first,
                              std::int64_t cap) const;
  // Counts an admission's prefix-cache lookup (GPU hit `hit_tokens`, CPU `loaded_blocks`).
  void count_prefix_query(const SeqInfo& seq, std::int64_t num_hashes, std::int64_t hit_tokens,
                          std::int64_t loaded_blocks);
  std::uint64_t group_hash(const Seq& s, int g, std::int64_t j) const;
  // Sets fills of the table's blocks from index `from` on, and caches newly full prompt blocks.
  void settle(Seq& s, int g, std::int64_t from);
  std::int64_t skipped_first(int g, std::int64_t tokens) const;
  // grow()'s steps. The fast path (every decode step but one per block): one full-attention
  // group, growth within an unshared partial tail block; false (nothing changed) otherwise.
  bool grow_tail_in_place(Seq& s, std::int64_t grown);
  // Whether the pool (with the blocks the window skip would return) has the blocks to grow `s`
  // to `grown` tokens, copy-on-write of shared tails included.
  bool can_grow(const Seq& s, std::int64_t grown) const;
  // Releases group g's blocks that fell out of its sliding window at `old_tokens`.
  void skip_window(Table& t, int g, std::int64_t old_tokens);
  // Copies a shared partial tail, allocates group g's blocks up to s.num_tokens and settles them.
  void extend_table(Seq& s, int g);
  void release_table(Table& t);
  // Takes (releases) a resident sequence's state pages.
  void allocate_state(Seq& s);
  void release_state(Seq& s);
  Seq& resident(SeqId id);
  // The live sequence `id` (nullptr if none), through a one-entry cache: the simulator asks
  // about the same sequence several times in a row (grow, then its in-place room). Map nodes
  // keep their address until erased (free() forgets it).
  Seq* find_seq(SeqId id) const;
  // Reservation slots of group g's tail block of `s`, as if no other sequence shared it.
  std::int64_t own_reservation(const Seq& s, std::size_t g) const;
  // Adds (sign +1) or removes (-1) a resident sequence's own reservation from reservation_.
  void account(const Seq& s, std::int64_t sign);
  // Reservation per group, recounted from every table (shared tails counted once).
  std::vector<std::int64_t> recount_reservation() const;
  ByteAccounting bytes_from(const std::vector<std::int64_t>& reservation) const;
  ByteAccounting bytes_now() const;

  std::vector<GroupGeometry> groups_;
  std::int64_t base_block_size_;
  Bytes page_bytes_;
  Bytes widest_bytes_per_slot_;
  Bytes bytes_per_slot_;
  std::int64_t hit_unit_ = 0;  // lcm of the groups' block sizes (0: prefix caching impossible)
  bool prefix_caching_;
  std::int64_t watermark_blocks_;
  std::int64_t cpu_blocks_;
  std::int64_t cpu_blocks_used_ = 0;
  std::int64_t state_blocks_;  // state pages per sequence (AllocatorOptions::state_blocks_per_seq)
  Bytes state_bytes_;          // the state's bytes in them
  int state_group_;            // the pool group the state pages are counted in
  BlockPool pool_;
  std::unique_ptr<CpuTier> cpu_tier_;  // on the heap: pool_ points at it
  std::unordered_map<SeqId, Seq> seqs_;
  mutable SeqId last_id_ = 0;
  mutable Seq* last_seq_ = nullptr;  // seqs_'s node of last_id_, or nullptr
  AllocatorStats stats_;
  std::vector<std::int64_t> reservation_;  // per group, kept incrementally (see Invariants)
  bool forked_ = false;                    // a fork happened: recount the reservation
};

}  // namespace kvsim::memory
