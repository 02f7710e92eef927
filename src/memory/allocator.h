#pragma once
// The KV-cache allocator interface the scheduler drives. Allocators count token slots; the bytes
// per slot are handed in at construction, so an allocator knows nothing of models or time.
// Running out of space is a return value (nullopt / false, nothing changed but the refusal
// counters of stats()), never an exception: the scheduler decides whom to preempt.
//
// Two families, built by make_allocator() from AllocatorOptions:
//  - paged (PagedAttention / vLLM): a pool of fixed-size blocks, a block table per sequence,
//    reference counts, copy-on-write fork, a free-block watermark at admission, and optional
//    prefix caching (full prompt blocks shared across sequences, kept after release in an LRU
//    of evictable blocks). External fragmentation is always 0.
//  - contiguous (the Orca baselines of the PagedAttention paper): one linear space of C slots;
//    each sequence gets one extent sized by a reservation policy (max | pow2 | oracle), placed
//    by a buddy allocator (or first-fit / best-fit). Refusals caused by placement are external
//    fragmentation; buddy rounding is internal fragmentation.
//
// A sequence is admitted once (admit), grows (grow), may be forked, swapped out and in, and is
// finally freed (free). Ids are the caller's and must be unique among live sequences.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.h"
#include "memory/accounting.h"

namespace kvsim::memory {

using SeqId = std::uint64_t;

// What an allocator may know about a sequence when it is admitted.
struct SeqInfo {
  SeqId id = 0;
  std::int64_t prompt_tokens = 0;  // prompt length
  std::int64_t final_tokens = 0;   // prompt + output: the length it will reach (f_s)
  // Content id of each leading full block of the prompt, in order, for prefix caching (already
  // at the allocator's block size, AllocatorOptions::block_size). Empty: the prompt shares
  // nothing. Two prompts share block j iff their ids agree at every position <= j (the allocator
  // chains them: hash_j = hash_combine(hash_{j-1}, id_j)). Ids may go on past the prompt, up to
  // final_tokens: the output's blocks, cached as they fill (a multi-turn conversation's next
  // prompt begins with this one's prompt and output); hits stay within the prompt. Copied at
  // admit; the span need not outlive the call.
  std::span<const std::uint64_t> block_content_ids;
};

struct AdmitResult {
  // Leading prompt tokens found in the prefix cache (no compute needed): a multiple of the block
  // size, < prompt_tokens (the last prompt token is always computed) and <= the num_tokens
  // admitted. 0 without prefix caching.
  std::int64_t cached_tokens = 0;
  // Of cached_tokens, those found in the CPU offload tier rather than on the GPU
  // (AllocatorOptions::cpu_offload_bytes): fresh GPU blocks were allocated for them and their
  // content must be copied host → device (loaded_bytes, whole blocks) before they are usable.
  std::int64_t loaded_tokens = 0;
  Bytes loaded_bytes = 0;
};

// Prefix-cache counters, counted at successful admissions only (a refused admit counts nothing).
struct PrefixCacheStats {
  std::int64_t queries = 0;       // admissions (with prefix caching on), with or without ids
  std::int64_t query_blocks = 0;  // full prompt blocks looked up (those a hit could cover)
  std::int64_t hit_blocks = 0;    // of those, found in the GPU cache
  std::int64_t query_tokens = 0;  // prompt tokens of those admissions
  // AdmitResult::cached_tokens summed, less the CPU tier's part (cpu_hit_tokens): the GPU hits.
  std::int64_t hit_tokens = 0;
  std::int64_t cpu_hit_blocks = 0;  // found in the CPU offload tier after the GPU hit (loaded)
  std::int64_t cpu_hit_tokens = 0;  // AdmitResult::loaded_tokens summed
  // hit_tokens / query_tokens (vLLM's GPU prefix-cache hit rate); 0 when nothing was queried.
  double hit_rate() const {
    return query_tokens > 0 ? static_cast<double>(hit_tokens) / static_cast<double>(query_tokens)
                            : 0.0;
  }
  // cpu_hit_tokens / query_tokens: the CPU offload tier's hit rate; 0 when nothing was queried.
  double cpu_hit_rate() const {
    return query_tokens > 0
               ? static_cast<double>(cpu_hit_tokens) / static_cast<double>(query_tokens)
               : 0.0;
  }
};

// The CPU offload tier (AllocatorOptions::cpu_offload_bytes), per GPU. Outside the GPU
// accounting: its blocks are host memory.
struct OffloadStats {
  std::int64_t capacity_blocks = 0;  // host bytes / page bytes; 0: no tier
  std::int64_t blocks_held = 0;      // now
  std::int64_t stored_blocks = 0;    // GPU → CPU copies of evicted cached blocks
  Bytes stored_bytes = 0;
  std::int64_t dropped_blocks = 0;  // dropped from the full tier (its LRU's oldest)
  std::int64_t loaded_blocks = 0;   // CPU → GPU copies at admission (PrefixCacheStats::cpu_hit_*)
  Bytes loaded_bytes = 0;
  // Sums every counter (several allocators' tiers).
  OffloadStats& operator+=(const OffloadStats& o) {
    capacity_blocks += o.capacity_blocks;
    blocks_held += o.blocks_held;
    stored_blocks += o.stored_blocks;
    stored_bytes += o.stored_bytes;
    dropped_blocks += o.dropped_blocks;
    loaded_blocks += o.loaded_blocks;
    loaded_bytes += o.loaded_bytes;
    return *this;
  }
};

// Counters since construction.
struct AllocatorStats {
  std::int64_t admits = 0;          // successful admit() calls
  std::int64_t admits_refused = 0;  // admit() returned nullopt
  std::int64_t grows_refused = 0;   // grow() returned false
  std::int64_t forks = 0;           // successful fork() calls
  std::int64_t cow_copies = 0;      // paged: shared partial blocks copied on write
  std::int64_t evictions = 0;       // paged: cached blocks evicted to make room
  std::int64_t swap_outs = 0;
  std::int64_t swap_ins = 0;
  std::int64_t swaps_refused = 0;  // swap_out (CPU full) or swap_in (GPU full) returned nullopt
  Bytes swapped_out_bytes = 0;     // GPU → CPU, summed
  Bytes swapped_in_bytes = 0;      // CPU → GPU, summed
  Bytes cpu_bytes_in_use = 0;      // CPU swap space held now
  PrefixCacheStats prefix_cache;
  OffloadStats offload;
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Admits a new sequence and makes room for its first `num_tokens` tokens (the whole prompt, or
  // the first chunk under chunked prefill), prefix-cache hits included: afterwards the sequence
  // holds num_tokens tokens, of which the first AdmitResult::cached_tokens need no compute.
  // nullopt, with nothing changed, when it does not fit (paged: also when fewer than the
  // watermark's blocks would stay free; contiguous: also when num_tokens exceeds the extent its
  // reservation policy gives it). Requires 0 <= num_tokens, a new id, and
  // prompt_tokens <= final_tokens.
  virtual std::optional<AdmitResult> admit(const SeqInfo& seq, std::int64_t num_tokens) = 0;
  // Room for `num_tokens` more tokens of an admitted, resident sequence; they count as stored
  // from now on. false, with nothing changed, when there is no room (contiguous: also when the
  // sequence would outgrow its extent). No watermark applies.
  virtual bool grow(SeqId id, std::int64_t num_tokens) = 0;
  // Releases all the sequence holds, on the GPU or (swapped out) on the CPU. Prefix-cached
  // blocks stay, evictable. Unknown ids are a bug (KVSIM_ASSERT).
  virtual void free(SeqId id) = 0;
  // Accounting now. `waiting_head`, when a request waits at the head of the queue, is what it
  // would ask for; free slots that cannot serve it count as external fragmentation (contiguous
  // only: when no free extent can hold its reservation, every free slot does).
  virtual SlotAccounting accounting(const SeqInfo* waiting_head) const = 0;
  // Bytes of KV per slot (per GPU), as handed in (hybrid: summed over the groups).
  virtual Bytes bytes_per_slot() const = 0;

  // ---- Extensions. Both real allocators override every one (in_place_room: paged only); the
  // defaults are for allocators (and test fakes) without the feature, so a fake need implement
  // only the five above.

  // The same accounting in bytes; sums exactly to capacity bytes. Use this for fractions.
  // Default: accounting() × bytes_per_slot() (exact for a single-group allocator).
  virtual ByteAccounting byte_accounting(const SeqInfo* waiting_head) const;

  // A child sequence that starts as a copy of `parent` (same tokens so far). Paged: copy-on-
  // write, the child shares every block (a shared partial block is copied by whichever sequence
  // writes into it first), so it always succeeds. Contiguous: the child gets its own extent (its
  // reservation from child.final_tokens and the parent's prompt) and false, with nothing
  // changed, when none fits. Only child.id and child.final_tokens are read. Requires a resident
  // parent and a new child id. Default: false.
  virtual bool fork(SeqId parent, const SeqInfo& child);

  // Moves a resident sequence's KV to the CPU swap space, releasing its GPU memory. Returns the
  // bytes moved (paged: whole blocks; contiguous: the stored tokens), or nullopt, with nothing
  // changed, when the CPU space lacks room (or there is none: cpu_swap_bytes 0). Until swap_in
  // the sequence may only be freed. Default: nullopt.
  virtual std::optional<Bytes> swap_out(SeqId id);
  // Brings a swapped-out sequence back: the same tokens, fresh GPU memory. Returns the bytes
  // moved, or nullopt, with nothing changed, when the GPU lacks room (paged: the watermark
  // applies, as at admission). Default: nullopt.
  virtual std::optional<Bytes> swap_in(SeqId id);

  // The prefix-cache hit admit(seq, num_tokens) would find now, in tokens, without changing
  // anything (so a chunked-prefill scheduler can size the first chunk: admit cached + chunk).
  // 0 without prefix caching (the default).
  virtual std::int64_t cached_prefix_tokens(const SeqInfo& seq, std::int64_t num_tokens) const;

  // Counters since construction. Default: all zero.
  virtual AllocatorStats stats() const;

  // Deferred growth (the simulator's per-token fast path). The tokens a resident sequence can
  // gain without allocating, copying, freeing or caching anything, each of which only moves one
  // slot of `in_place_token_bytes()` from reservation to token states. A caller may then count
  // such tokens itself and tell the allocator later, in one grow() of their sum (plus whatever
  // crosses the room): the allocator's state afterwards is the same as after one grow per token,
  // and its accounting meanwhile is the reported one corrected by the deferred tokens. nullopt
  // when the allocator cannot promise that for this sequence (several layer groups, a sliding
  // window, a shared tail block, a contiguous extent). Default: nullopt.
  virtual std::optional<std::int64_t> in_place_room(SeqId id) const;
  // Bytes per GPU one deferred token moves from reservation to token states (see above).
  virtual Bytes in_place_token_bytes() const { return bytes_per_slot(); }
  // How many grows that each go one token past a resident sequence's in-place room (or, where
  // in_place_room is nullopt, by one token) are sure to succeed from now on, one after another,
  // whatever the sequences: each takes at most one block here. 0 when the allocator cannot
  // promise it (default).
  virtual std::int64_t sure_tail_grows() const { return 0; }

  // Whether `seq` could run alone in an otherwise empty allocator: admitted with its whole
  // prompt and grown one token at a time to final_tokens, ignoring prefix hits. false means no
  // amount of waiting or preemption makes it fit: the scheduler should reject it. Paged
  // sliding-window groups are bounded by ceil(window / block) + 1 blocks (a safe bound).
  // Default: true.
  virtual bool fits_alone(const SeqInfo& seq) const;
};

enum class AllocatorKind : std::uint8_t {
  kPaged,
  kContiguousMax,
  kContiguousPow2,
  kContiguousOracle
};

// Where a contiguous allocator places an extent.
enum class Placement : std::uint8_t {
  kBuddy,     // power-of-two blocks (extent rounded up), lowest-address block of the smallest order
  kFirstFit,  // exact-size extent in the lowest-address hole that fits
  kBestFit,   // exact-size extent in the smallest hole that fits (lowest address on ties)
};

// One group of layers that share a cache layout (vLLM's KV cache group). Hybrid models have one
// per layer kind, e.g. Gemma-2: full attention and sliding window.
struct KvGroupSpec {
  Bytes bytes_per_slot = 0;         // KV bytes of one token over this group's layers (per GPU)
  std::int64_t sliding_window = 0;  // 0: full attention; > 0: attends to the last n tokens only
};

// How the hybrid (several-group) paged allocator shares memory, as vLLM's hybrid manager does:
// one pool of pages of equal bytes, page_bytes = block_size × (largest bytes_per_slot of any
// group). Each group's block holds floor(page_bytes / its bytes_per_slot) tokens (block_size for
// the widest group); a page leftover that no token fills is padding, counted as internal
// fragmentation. A page belongs to one group while in use and returns to the shared pool when
// freed. Window groups free blocks that lie entirely before the window (vLLM: blocks before
// (num_computed_tokens − window + 1) / block). Prefix caching in a group needs its block size
// to be a multiple of block_size (content ids are given per block_size tokens); a group where it
// is not never hits, so a hybrid sequence's hit is 0 then.
//
// Contiguous allocators ignore windows (the Orca baselines kept every layer's KV for the whole
// reservation): their slot is the sum of all groups' bytes_per_slot.
struct AllocatorOptions {
  AllocatorKind kind = AllocatorKind::kPaged;
  // KV budget (per GPU). Paged: num_blocks = capacity_bytes / page_bytes; contiguous:
  // C = capacity_bytes / bytes_per_slot slots. The remainder is unused (not in capacity).
  Bytes capacity_bytes = 0;
  // KV bytes per token slot (per GPU), when `groups` is empty.
  Bytes bytes_per_slot = 0;
  // Layer groups for hybrid / sliding-window models; empty: one full-attention group of
  // bytes_per_slot. When set, bytes_per_slot is ignored.
  std::vector<KvGroupSpec> groups;
  // Paged: tokens per block of the widest group (vLLM --block-size).
  std::int64_t block_size = 16;
  // Paged: fraction of all blocks that must stay free after an admission or swap-in
  // (vLLM v0's 1%; floor(watermark × num_blocks) blocks). 0 disables it.
  double watermark = 0.01;
  // Contiguous: how extents are placed.
  Placement placement = Placement::kBuddy;
  // contiguous-max: slots reserved per request (the model's max sequence length; OPT: 2,048).
  // A request whose final length exceeds it reserves its final length instead.
  std::int64_t max_seq_len = 2048;
  // Paged: share full prompt blocks by content (vLLM --enable-prefix-caching).
  bool enable_prefix_caching = false;
  // CPU swap space (per GPU) for swap_out; 0: swapping is refused.
  Bytes cpu_swap_bytes = 0;
  // Paged with prefix caching, one full-attention group: host memory (per GPU) of a CPU tier
  // that keeps the cached blocks the GPU evicts (an LRU of floor(bytes / page bytes) blocks);
  // admission continues a GPU prefix hit with the consecutive blocks found there
  // (AdmitResult::loaded_tokens). 0: no tier, evicted blocks are gone.
  Bytes cpu_offload_bytes = 0;
  // Paged: blocks each sequence holds, whatever its length, for a fixed-size state (vLLM V1's
  // Mamba / linear-attention groups: one page per group), and the state's bytes in them (the rest
  // of those pages is padding, counted as internal fragmentation). Allocated at admission, freed
  // with the sequence, swapped with it. 0: none. Needs prefix caching off (a state is not rebuilt
  // from cached blocks) and so no CPU offload tier.
  std::int64_t state_blocks_per_seq = 0;
  Bytes state_bytes_per_seq = 0;
};

// Builds the allocator the options describe. Throws kvsim::Error (field = the option's name,
// e.g. "block_size") on invalid options: non-positive sizes, a budget that holds no block or
// slot, a watermark outside [0, 1), a negative window.
std::unique_ptr<Allocator> make_allocator(const AllocatorOptions& options);
// The same checks without building anything (a paged pool is one entry per block).
void validate_allocator_options(const AllocatorOptions& options);

// Names as on the command line: "paged", "contiguous-max", "contiguous-pow2",
// "contiguous-oracle"; "buddy", "first-fit", "best-fit".
std::string_view allocator_kind_name(AllocatorKind kind);
std::string_view placement_name(Placement placement);
// nullopt for an unknown name (the caller reports it with did_you_mean over *_names()).
std::optional<AllocatorKind> parse_allocator_kind(std::string_view name);
std::optional<Placement> parse_placement(std::string_view name);
std::vector<std::string> allocator_kind_names();
std::vector<std::string> placement_names();

}  // namespace kvsim::memory
