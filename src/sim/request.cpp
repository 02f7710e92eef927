#include "sim/request.h"

#include <limits>

#include "common/assert.h"

namespace kvsim::sim {

const char* request_state_name(RequestState state) {
  switch (state) {
    case RequestState::kWaiting:
      return "waiting";
    case RequestState::kPrefill:
      return "prefill";
    case RequestState::kDecode:
      return "decode";
    case RequestState::kSwapped:
      return "swapped";
    case RequestState::kSwappingIn:
      return "swapping_in";
    case RequestState::kTransferring:
      return "transferring";
    case RequestState::kFinished:
      return "finished";
    case RequestState::kRejected:
      return "rejected";
    case RequestState::kLoading:
      return "loading";
  }
  return "?";
}

const char* reject_reason_name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone:
      return "";
    case RejectReason::kPromptTooLong:
      return "prompt_too_long";
    case RejectReason::kTooLong:
      return "too_long";
    case RejectReason::kNeverFits:
      return "never_fits";
  }
  return "?";
}

RequestPool::Slot RequestPool::acquire() {
  Slot slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    KVSIM_ASSERT(requests_.size() < std::numeric_limits<Slot>::max(), "request slots exhausted");
    slot = static_cast<Slot>(requests_.size());
    requests_.emplace_back();
  }
  Request& r = requests_[slot];
  std::vector<std::uint64_t> ids = std::move(r.block_ids);
  ids.clear();
  r = Request{};
  r.block_ids = std::move(ids);
  return slot;
}

void RequestPool::release(Slot slot) {
  free_.push_back(slot);
}

}  // namespace kvsim::sim
