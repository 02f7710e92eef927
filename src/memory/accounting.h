#pragma once
// KV memory accounting per DESIGN.md "Definitions": the five quantities at one instant, in token
// slots and in bytes, and their time-weighted means over a run.
//
// Per live sequence s: u_s tokens stored, r_s slots allocated to it, f_s its final length.
//   token_states           = Σ u_s (a block shared by several sequences counted once)
//   reservation            = Σ (min(r_s, f_s) − u_s)   slots that will be written later
//   internal_fragmentation = Σ max(0, r_s − max(f_s, u_s)) slots that will never be written
//   external_fragmentation = free slots the waiting head cannot use (contiguous only)
//   free                   = the rest
// Invariant (exact, in integers): the five add up to capacity.

#include <cstdint>

#include "common/int128.h"
#include "common/units.h"

namespace kvsim::memory {

// The five quantities in token slots, at one instant.
// Invariant: token_states + reservation + internal_fragmentation + external_fragmentation + free
//            == capacity.
// Hybrid paged allocators (several layer groups) count slots of the pool's widest group (the one
// with the most bytes per token): each field is its ByteAccounting counterpart divided by that
// group's bytes per token, rounded down, and `free` takes the rounding so the sum still holds.
// ByteAccounting is the exact one there; use it for fractions.
struct SlotAccounting {
  std::int64_t capacity = 0;
  std::int64_t token_states = 0;
  std::int64_t reservation = 0;
  std::int64_t internal_fragmentation = 0;
  std::int64_t external_fragmentation = 0;
  std::int64_t free = 0;
  std::int64_t largest_free_extent =
      0;                           // contiguous: biggest hole; paged: free blocks × block size
  std::int64_t blocks_in_use = 0;  // paged only: blocks referenced by a live sequence
  std::int64_t shared_blocks = 0;  // paged: blocks referenced by more than one sequence
  // Paged: evictable blocks kept for the prefix cache (referenced by no live sequence). They are
  // free for allocation purposes and are counted in `free` (and in largest_free_extent), not in
  // token_states: they hold no live sequence's tokens.
  std::int64_t cached_blocks = 0;
};

// The five quantities in bytes (per GPU), at one instant; byte-weighted across layer groups.
// Invariant: token_states + reservation + internal_fragmentation + external_fragmentation + free
//            == capacity, exactly. capacity is the bytes the allocator manages (the KV budget
// rounded down to whole slots or pages).
struct ByteAccounting {
  Bytes capacity = 0;
  Bytes token_states = 0;
  Bytes reservation = 0;
  Bytes internal_fragmentation = 0;  // includes page padding of hybrid groups (see allocator.h)
  Bytes external_fragmentation = 0;
  Bytes free = 0;  // includes evictable prefix-cache blocks

  // Bytes held by live sequences: token_states + reservation + internal_fragmentation.
  Bytes used() const { return token_states + reservation + internal_fragmentation; }
  bool operator==(const ByteAccounting&) const = default;
};

// The five quantities as fractions of capacity, each its exact integer part over the exact whole
// (computed in double): a zero part is exactly 0.0, a part equal to the whole exactly 1.0. They
// add up to 1 within a few ulps (< 1e-15); the integers they come from add up exactly.
struct Fractions {
  double token_states = 0;
  double reservation = 0;
  double internal_fragmentation = 0;
  double external_fragmentation = 0;
  double free = 1;
};

// Instantaneous fractions of one accounting. capacity 0 gives all zero and free = 1.
Fractions fractions_of(const ByteAccounting& a);

// Time-weighted means of the five quantities and the peak of used(), for the simulator to
// advance at each event. Integrals are kept exactly, in byte·ns (128-bit integers).
//
// Invariants: the five integrals add up to capacity × elapsed() exactly; time never goes back;
// capacity is the same in every accounting passed.
class TimeWeightedAccounting {
 public:
  using Int128 = kvsim::Int128;  // exact byte·ns sums

  // `state` holds from `now` until the next call. The state passed before it is charged for
  // [previous now, now). The first call starts the clock. Requires now >= the previous now
  // (KVSIM_ASSERT) and the same capacity every time.
  void advance(TimeNs now, const ByteAccounting& state);

  // Means over [first now, last now). Before any time has elapsed: the latest state's
  // instantaneous fractions (all zero and free = 1 when advance was never called).
  Fractions fractions() const;
  // The largest used() of any state passed (bytes held by live sequences).
  Bytes peak_used_bytes() const { return peak_used_; }
  TimeNs elapsed() const { return started_ ? last_now_ - start_ : 0; }
  Bytes capacity() const { return current_.capacity; }

  // Exact integrals in byte·ns.
  Int128 token_states_integral() const { return token_states_; }
  Int128 reservation_integral() const { return reservation_; }
  Int128 internal_fragmentation_integral() const { return internal_; }
  Int128 external_fragmentation_integral() const { return external_; }
  Int128 free_integral() const { return free_; }

 private:
  bool started_ = false;
  TimeNs start_ = 0;
  TimeNs last_now_ = 0;
  ByteAccounting current_;
  Bytes peak_used_ = 0;
  Int128 token_states_ = 0;
  Int128 reservation_ = 0;
  Int128 internal_ = 0;
  Int128 external_ = 0;
  Int128 free_ = 0;
};

}  // namespace kvsim::memory
