#include "memory/contiguous_allocator.h"

#include <algorithm>

#include "common/assert.h"

namespace kvsim::memory {

ContiguousAllocator::ContiguousAllocator(ReservationPolicy policy, Placement placement,
                                         std::int64_t capacity_slots, Bytes bytes_per_slot,
                                         std::int64_t max_seq_len, std::int64_t cpu_swap_slots)
    : policy_(policy),
      bytes_per_slot_(bytes_per_slot),
      max_seq_len_(max_seq_len),
      cpu_swap_slots_(cpu_swap_slots) {
  KVSIM_ASSERT(capacity_slots >= 1 && bytes_per_slot > 0 && max_seq_len >= 1 && cpu_swap_slots >= 0,
               "contiguous allocator options out of range");
  if (placement == Placement::kBuddy) {
    placer_ = std::make_unique<BuddyPlacer>(capacity_slots);
  } else {
    placer_ = std::make_unique<FreeListPlacer>(capacity_slots, placement == Placement::kBestFit);
  }
}

std::int64_t ContiguousAllocator::reservation_slots(std::int64_t prompt_tokens,
                                                    std::int64_t final_tokens) const {
  std::int64_t r = final_tokens;
  switch (policy_) {
    case ReservationPolicy::kMax:
      r = std::max(max_seq_len_, final_tokens);
      break;
    case ReservationPolicy::kPow2: {
      const std::int64_t output = final_tokens - prompt_tokens;
      r = prompt_tokens + (output > 0 ? next_pow2(output) : 0);
      break;
    }
    case ReservationPolicy::kOracle:
      break;
  }
  return std::max<std::int64_t>(r, 1);
}

ContiguousAllocator::Parts ContiguousAllocator::parts_of(const Seq& s) {
  Parts p;
  if (s.swapped) return p;
  p.tokens = s.num_tokens;
  p.reservation = std::max<std::int64_t>(0, std::min(s.extent, s.final_tokens) - s.num_tokens);
  p.internal = s.extent - s.num_tokens - p.reservation;
  return p;
}

void ContiguousAllocator::add(const Seq& s, int sign) {
  const Parts p = parts_of(s);
  totals_.tokens += sign * p.tokens;
  totals_.reservation += sign * p.reservation;
  totals_.internal += sign * p.internal;
}

ContiguousAllocator::Seq& ContiguousAllocator::resident(SeqId id) {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end(), "unknown sequence id");
  KVSIM_ASSERT(!it->second.swapped, "the sequence is swapped out");
  return it->second;
}

bool ContiguousAllocator::place(Seq& s) {
  if (s.num_tokens > placer_->extent_size(s.reserve)) return false;
  const auto offset = placer_->allocate(s.reserve);
  if (!offset) return false;
  s.swapped = false;
  s.offset = *offset;
  s.extent = placer_->extent_size(s.reserve);
  add(s, +1);
  return true;
}

AllocatorStats ContiguousAllocator::stats() const {
  AllocatorStats s = stats_;
  s.cpu_bytes_in_use = static_cast<Bytes>(cpu_slots_used_) * bytes_per_slot_;
  return s;
}

std::optional<AdmitResult> ContiguousAllocator::admit(const SeqInfo& seq, std::int64_t num_tokens) {
  KVSIM_ASSERT(num_tokens >= 0 && seq.prompt_tokens >= 0 && seq.prompt_tokens <= seq.final_tokens,
               "admit: token counts out of range");
  KVSIM_ASSERT(!seqs_.contains(seq.id), "admit: the id is already live");
  Seq s;
  s.prompt = seq.prompt_tokens;
  s.final_tokens = seq.final_tokens;
  s.num_tokens = num_tokens;
  s.reserve = reservation_slots(seq.prompt_tokens, seq.final_tokens);
  if (!place(s)) {
    ++stats_.admits_refused;
    return std::nullopt;
  }
  seqs_.emplace(seq.id, s);
  ++stats_.admits;
  return AdmitResult{};
}

bool ContiguousAllocator::grow(SeqId id, std::int64_t num_tokens) {
  KVSIM_ASSERT(num_tokens >= 0, "grow by a negative count");
  Seq& s = resident(id);
  if (s.num_tokens + num_tokens > s.extent) {
    ++stats_.grows_refused;
    return false;
  }
  add(s, -1);
  s.num_tokens += num_tokens;
  add(s, +1);
  return true;
}

void ContiguousAllocator::free(SeqId id) {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end(), "free of an unknown sequence (double free?)");
  const Seq& s = it->second;
  if (s.swapped) {
    cpu_slots_used_ -= s.num_tokens;
  } else {
    add(s, -1);
    placer_->release(s.offset, s.reserve);
  }
  seqs_.erase(it);
}

bool ContiguousAllocator::fork(SeqId parent, const SeqInfo& child) {
  KVSIM_ASSERT(!seqs_.contains(child.id), "fork: the child id is already live");
  const Seq& p = resident(parent);
  KVSIM_ASSERT(child.final_tokens >= p.num_tokens, "fork: the child is shorter than its parent");
  Seq c;
  c.prompt = p.prompt;
  c.final_tokens = child.final_tokens;
  c.num_tokens = p.num_tokens;
  c.reserve = reservation_slots(c.prompt, c.final_tokens);
  if (!place(c)) return false;
  seqs_.emplace(child.id, c);
  ++stats_.forks;
  return true;
}

std::optional<Bytes> ContiguousAllocator::swap_out(SeqId id) {
  Seq& s = resident(id);
  if (cpu_slots_used_ + s.num_tokens > cpu_swap_slots_ || cpu_swap_slots_ == 0) {
    ++stats_.swaps_refused;
    return std::nullopt;
  }
  add(s, -1);
  placer_->release(s.offset, s.reserve);
  s.swapped = true;
  s.extent = 0;
  s.offset = 0;
  cpu_slots_used_ += s.num_tokens;
  const Bytes moved = static_cast<Bytes>(s.num_tokens) * bytes_per_slot_;
  ++stats_.swap_outs;
  stats_.swapped_out_bytes += moved;
  return moved;
}

std::optional<Bytes> ContiguousAllocator::swap_in(SeqId id) {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end() && it->second.swapped, "swap_in of a sequence not swapped out");
  Seq& s = it->second;
  if (!place(s)) {
    ++stats_.swaps_refused;
    return std::nullopt;
  }
  cpu_slots_used_ -= s.num_tokens;
  const Bytes moved = static_cast<Bytes>(s.num_tokens) * bytes_per_slot_;
  ++stats_.swap_ins;
  stats_.swapped_in_bytes += moved;
  return moved;
}

SlotAccounting ContiguousAllocator::accounting(const SeqInfo* waiting_head) const {
  SlotAccounting a;
  a.capacity = placer_->capacity();
  a.token_states = totals_.tokens;
  a.reservation = totals_.reservation;
  a.internal_fragmentation = totals_.internal;
  a.largest_free_extent = placer_->largest_free_extent();
  const std::int64_t free_slots = placer_->free_slots();
  if (waiting_head != nullptr) {
    const std::int64_t need = placer_->extent_size(
        reservation_slots(waiting_head->prompt_tokens, waiting_head->final_tokens));
    // No free extent can hold the head's reservation: every free slot lies in one too small.
    if (a.largest_free_extent < need) a.external_fragmentation = free_slots;
  }
  a.free = free_slots - a.external_fragmentation;
  return a;
}

bool ContiguousAllocator::fits_alone(const SeqInfo& seq) const {
  return placer_->extent_size(reservation_slots(seq.prompt_tokens, seq.final_tokens)) <=
         placer_->max_extent();
}

void ContiguousAllocator::check_invariants() const {
  Parts sum;
  std::int64_t extents = 0;
  std::int64_t cpu = 0;
  std::vector<Extent> owned;
  for (const auto& [id, s] : seqs_) {
    const Parts p = parts_of(s);
    sum.tokens += p.tokens;
    sum.reservation += p.reservation;
    sum.internal += p.internal;
    if (s.swapped) {
      cpu += s.num_tokens;
      continue;
    }
    KVSIM_ASSERT(s.num_tokens <= s.extent, "a sequence outgrew its extent");
    KVSIM_ASSERT(p.reservation >= 0 && p.internal >= 0, "negative accounting part");
    extents += s.extent;
    owned.push_back({s.offset, s.extent});
  }
  KVSIM_ASSERT(sum.tokens == totals_.tokens && sum.reservation == totals_.reservation &&
                   sum.internal == totals_.internal,
               "incremental totals drifted");
  KVSIM_ASSERT(extents + placer_->free_slots() == placer_->capacity(), "slots not conserved");
  KVSIM_ASSERT(cpu == cpu_slots_used_ && cpu <= cpu_swap_slots_, "CPU slots not conserved");
  for (const Extent& e : placer_->free_extents()) owned.push_back(e);
  std::sort(owned.begin(), owned.end(),
            [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
  std::int64_t end = 0;
  for (const Extent& e : owned) {
    KVSIM_ASSERT(e.offset >= end, "extents overlap");
    end = e.offset + e.size;
  }
  KVSIM_ASSERT(end <= placer_->capacity(), "an extent runs past capacity");
}

}  // namespace kvsim::memory
