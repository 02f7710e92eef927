#include "memory/allocator.h"

namespace kvsim::memory {

ByteAccounting Allocator::byte_accounting(const SeqInfo* waiting_head) const {
  const SlotAccounting s = accounting(waiting_head);
  const Bytes b = bytes_per_slot();
  const auto bytes = [b](std::int64_t slots) { return static_cast<Bytes>(slots) * b; };
  return ByteAccounting{bytes(s.capacity),
                        bytes(s.token_states),
                        bytes(s.reservation),
                        bytes(s.internal_fragmentation),
                        bytes(s.external_fragmentation),
                        bytes(s.free)};
}

bool Allocator::fork(SeqId, const SeqInfo&) {
  return false;
}
std::optional<Bytes> Allocator::swap_out(SeqId) {
  return std::nullopt;
}
std::optional<Bytes> Allocator::swap_in(SeqId) {
  return std::nullopt;
}
std::int64_t Allocator::cached_prefix_tokens(const SeqInfo&, std::int64_t) const {
  return 0;
}
AllocatorStats Allocator::stats() const {
  return AllocatorStats{};
}
std::optional<std::int64_t> Allocator::in_place_room(SeqId) const {
  return std::nullopt;
}
bool Allocator::fits_alone(const SeqInfo&) const {
  return true;
}

}  // namespace kvsim::memory
