// memory/allocator.cpp: what the Allocator interface gives an allocator that implements only the
// five required methods.
#include <catch2/catch.hpp>

#include "memory/allocator.h"

namespace kvsim::memory {
namespace {

// The smallest allocator a scheduler test could fake: only the five required methods.
class FiveMethodAllocator final : public Allocator {
 public:
  std::optional<AdmitResult> admit(const SeqInfo&, std::int64_t) override { return std::nullopt; }
  bool grow(SeqId, std::int64_t) override { return false; }
  void free(SeqId) override {}
  SlotAccounting accounting(const SeqInfo*) const override {
    SlotAccounting a;
    a.capacity = 10;
    a.token_states = 3;
    a.reservation = 2;
    a.internal_fragmentation = 1;
    a.free = 4;
    return a;
  }
  Bytes bytes_per_slot() const override { return 7; }
};

TEST_CASE("the extensions have defaults for allocators without the feature", "[memory][factory]") {
  FiveMethodAllocator a;
  const ByteAccounting b = a.byte_accounting(nullptr);
  CHECK(b == ByteAccounting{70, 21, 14, 7, 0, 28});
  CHECK_FALSE(a.fork(1, SeqInfo{2, 0, 0, {}}));
  CHECK_FALSE(a.swap_out(1));
  CHECK_FALSE(a.swap_in(1));
  CHECK(a.cached_prefix_tokens(SeqInfo{}, 10) == 0);
  CHECK(a.stats().admits == 0);
  CHECK(a.fits_alone(SeqInfo{}));
}

}  // namespace
}  // namespace kvsim::memory
