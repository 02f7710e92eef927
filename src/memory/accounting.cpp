#include "memory/accounting.h"

#include "common/assert.h"

namespace kvsim::memory {

namespace {

using Int128 = TimeWeightedAccounting::Int128;

double ratio(Int128 part, Int128 whole) {
  return static_cast<double>(part) / static_cast<double>(whole);
}

// Each fraction is its part over the whole: a zero part gives exactly 0, the whole exactly 1.
Fractions make_fractions(Int128 tokens, Int128 reserved, Int128 internal, Int128 external,
                         Int128 free, Int128 whole) {
  Fractions f;
  f.token_states = ratio(tokens, whole);
  f.reservation = ratio(reserved, whole);
  f.internal_fragmentation = ratio(internal, whole);
  f.external_fragmentation = ratio(external, whole);
  f.free = ratio(free, whole);
  return f;
}

void check_sum(const ByteAccounting& a) {
  KVSIM_ASSERT(a.token_states + a.reservation + a.internal_fragmentation +
                       a.external_fragmentation + a.free ==
                   a.capacity,
               "the five accounting quantities must add up to capacity");
}

}  // namespace

Fractions fractions_of(const ByteAccounting& a) {
  if (a.capacity == 0) return Fractions{};
  return make_fractions(a.token_states, a.reservation, a.internal_fragmentation,
                        a.external_fragmentation, a.free, a.capacity);
}

void TimeWeightedAccounting::advance(TimeNs now, const ByteAccounting& state) {
  check_sum(state);
  if (!started_) {
    started_ = true;
    start_ = now;
  } else {
    KVSIM_ASSERT(now >= last_now_, "time must not go back");
    KVSIM_ASSERT(state.capacity == current_.capacity, "capacity must not change");
    const Int128 dt = now - last_now_;
    token_states_ += dt * static_cast<Int128>(current_.token_states);
    reservation_ += dt * static_cast<Int128>(current_.reservation);
    internal_ += dt * static_cast<Int128>(current_.internal_fragmentation);
    external_ += dt * static_cast<Int128>(current_.external_fragmentation);
    free_ += dt * static_cast<Int128>(current_.free);
  }
  last_now_ = now;
  current_ = state;
  if (state.used() > peak_used_) peak_used_ = state.used();
}

Fractions TimeWeightedAccounting::fractions() const {
  const Int128 whole = static_cast<Int128>(elapsed()) * static_cast<Int128>(current_.capacity);
  if (whole == 0) return fractions_of(current_);
  return make_fractions(token_states_, reservation_, internal_, external_, free_, whole);
}

}  // namespace kvsim::memory
