#pragma once
// One request's life inside the simulator, and the slab that holds the live ones.
//
// State machine (every transition is made by Replica):
//   arrival ──► kWaiting ──admit──► kPrefill ──prompt done──► kDecode ──last token──► kFinished
//      │            ▲                  │                        │
//      │            └─── preempted (recompute): KV freed, back to the head of the queue
//      │                               └──── preempted (swap) ──► kSwapped ──► kSwappingIn ──►
//      kDecode └──► kRejected (prompt or prompt + output beyond max_model_len, or it can never fit)
//   admitted with blocks to load from the CPU offload tier: kWaiting ──► kLoading ──► kPrefill
// A request ends exactly once, in kFinished or kRejected (or is still live at --time-limit).

#include <cstdint>
#include <limits>
#include <vector>

#include "common/units.h"

namespace kvsim::sim {

enum class RequestState : std::uint8_t {
  kWaiting,       // queued (new, or preempted by recompute)
  kPrefill,       // running, computing its prompt (or re-computing prompt + output so far)
  kDecode,        // running, one token per step
  kSwapped,       // preempted by swap: its KV is in host memory
  kSwappingIn,    // its KV is being copied back; GPU room already taken
  kTransferring,  // disaggregated: prefilled; its KV is on its way to a decode instance
  kFinished,      // every output token produced
  kRejected,      // never served
  kLoading,       // admitted; prefix blocks are being copied from the CPU offload tier
};

enum class RejectReason : std::uint8_t {
  kNone,
  kPromptTooLong,  // prompt > max_model_len
  kTooLong,        // prompt + output > max_model_len (vLLM rejects max_tokens beyond the window)
  kNeverFits,      // the KV cache of one replica could never hold it
};

const char* request_state_name(RequestState state);  // "waiting", ..., "rejected"
const char* reject_reason_name(
    RejectReason reason);  // "", "prompt_too_long", "too_long", "never_fits"

struct Request {
  // From the workload. arrival_ns: when it is sent (-1 for a request a time limit left unsent).
  std::uint64_t id = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  TimeNs arrival_ns = 0;
  // Prefix content ids at the allocator's block size (empty without prefix caching).
  std::vector<std::uint64_t> block_ids;

  // Life so far. Times are -1 until they happen.
  RequestState state = RequestState::kWaiting;
  RejectReason reject_reason = RejectReason::kNone;
  // The engine it joined (Simulator::route_to_engine); kNoReplica before it joins one.
  static constexpr std::uint32_t kNoReplica = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t replica = kNoReplica;
  TimeNs first_scheduled_ns = -1;  // first admission (queueing delay ends)
  TimeNs first_token_ns = -1;
  TimeNs last_token_ns = -1;
  TimeNs finish_ns = -1;            // last token, or rejection time
  std::int64_t generated = 0;       // output tokens produced so far
  std::int64_t prefill_target = 0;  // tokens to compute before the next sample (prompt + generated)
  std::int64_t computed = 0;        // tokens whose KV has been computed (or found in the cache)
  std::int64_t kv_tokens = 0;       // tokens the request holds room for (>= computed)
  // Of kv_tokens, those the allocator has been told of; the rest are deferred (room it already
  // holds in place, Allocator::in_place_room), up to kv_in_place_end.
  std::int64_t kv_in_allocator = 0;
  std::int64_t kv_in_place_end = 0;
  std::int64_t cached_tokens = 0;  // prefix-cache hits over all admissions
  std::int32_t num_preemptions = 0;
  // vLLM V1's batch queue (pipeline parallelism): tokens scheduled in steps still in flight,
  // computed when those end (computed + in_flight_tokens <= kv_tokens; at most a prompt, so 32
  // bits, which keeps the struct at three cache lines). Always 0 otherwise.
  std::int32_t in_flight_tokens = 0;
  Bytes swap_bytes = 0;  // kSwapped, kSwappingIn: bytes the last swap moved
  // Disaggregated serving: leading tokens whose KV came from the prefill instance, present when
  // a decode instance admits it (consumed by that admission; lost on recompute).
  std::int64_t kv_received = 0;
  Bytes load_bytes = 0;  // admitted, not yet running: bytes to load from the CPU offload tier
  // SimOptions::serial_sessions: the simulator's index of the request's session, whose next
  // request waits for this one to end; kNoSession when it has none (or sessions are not serial).
  static constexpr std::uint32_t kNoSession = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t session = kNoSession;

  std::int64_t final_tokens() const { return prompt_tokens + output_tokens; }
};

// Slots for live requests, reused after a request ends, so memory follows the number of live
// requests, not the length of the workload. Slot numbers are stable while a request lives.
class RequestPool {
 public:
  using Slot = std::uint32_t;

  // A cleared request (keeps the capacity of its vectors from earlier use).
  Slot acquire();
  void release(Slot slot);
  Request& operator[](Slot slot) { return requests_[slot]; }
  const Request& operator[](Slot slot) const { return requests_[slot]; }
  std::size_t num_live() const { return requests_.size() - free_.size(); }
  std::size_t capacity() const { return requests_.size(); }

 private:
  std::vector<Request> requests_;
  std::vector<Slot> free_;
};

}  // namespace kvsim::sim
