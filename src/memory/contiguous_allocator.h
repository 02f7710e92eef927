#pragma once
// The Orca baselines of the PagedAttention paper: one contiguous extent per sequence in a linear
// space of C slots, sized at admission by a reservation policy and placed by an ExtentPlacer.
//
// Reservation policies (r = slots reserved for a request with prompt p and final length f):
//   max    r = max(max_seq_len, f)   (the model's maximum sequence length)
//   pow2   r = p + next_pow2(f − p)  (the output length rounded up: true output 25 → 32)
//   oracle r = f
// The extent occupies placer.extent_size(r) slots (buddy: the next power of two); everything
// beyond f in it is internal fragmentation.
//
// Invariants: every resident sequence owns one extent [offset, offset + extent) and they do not
// overlap; num_tokens <= extent; the incremental totals equal the per-sequence sums
// (token_states = Σ n, reservation = Σ max(0, min(e, f) − n), internal = Σ e − n − reservation);
// placer free slots + Σ extents == C; CPU slots in use == Σ n over swapped-out sequences.

#include <memory>
#include <unordered_map>

#include "memory/allocator.h"
#include "memory/extent_placer.h"

namespace kvsim::memory {

enum class ReservationPolicy : std::uint8_t { kMax, kPow2, kOracle };

class ContiguousAllocator final : public Allocator {
 public:
  // `capacity_slots` C >= 1; `cpu_swap_slots` >= 0.
  ContiguousAllocator(ReservationPolicy policy, Placement placement, std::int64_t capacity_slots,
                      Bytes bytes_per_slot, std::int64_t max_seq_len, std::int64_t cpu_swap_slots);

  std::optional<AdmitResult> admit(const SeqInfo& seq, std::int64_t num_tokens) override;
  bool grow(SeqId id, std::int64_t num_tokens) override;
  void free(SeqId id) override;
  SlotAccounting accounting(const SeqInfo* waiting_head) const override;
  Bytes bytes_per_slot() const override { return bytes_per_slot_; }
  bool fork(SeqId parent, const SeqInfo& child) override;
  std::optional<Bytes> swap_out(SeqId id) override;
  std::optional<Bytes> swap_in(SeqId id) override;
  std::int64_t cached_prefix_tokens(const SeqInfo&, std::int64_t) const override { return 0; }
  AllocatorStats stats() const override;
  bool fits_alone(const SeqInfo& seq) const override;

  // Slots policy reserves for a request (before placement rounding).
  std::int64_t reservation_slots(std::int64_t prompt_tokens, std::int64_t final_tokens) const;
  const ExtentPlacer& placer() const { return *placer_; }
  // Recounts the invariants above; KVSIM_ASSERT on a violation (tests).
  void check_invariants() const;

 private:
  struct Seq {
    std::int64_t prompt = 0;
    std::int64_t final_tokens = 0;
    std::int64_t num_tokens = 0;
    std::int64_t reserve = 0;  // r: slots asked of the placer
    std::int64_t extent = 0;   // slots the placer gave (0 while swapped out)
    std::int64_t offset = 0;
    bool swapped = false;
  };
  struct Parts {
    std::int64_t tokens = 0, reservation = 0, internal = 0;
  };
  static Parts parts_of(const Seq& s);
  void add(const Seq& s, int sign);
  // Places `s` (its reserve) in the address space and counts it; false when it does not fit.
  bool place(Seq& s);
  Seq& resident(SeqId id);

  ReservationPolicy policy_;
  Bytes bytes_per_slot_;
  std::int64_t max_seq_len_;
  std::int64_t cpu_swap_slots_;
  std::int64_t cpu_slots_used_ = 0;
  std::unique_ptr<ExtentPlacer> placer_;
  std::unordered_map<SeqId, Seq> seqs_;
  Parts totals_;
  AllocatorStats stats_;
};

}  // namespace kvsim::memory
