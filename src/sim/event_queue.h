#pragma once
// The simulator's clock: a priority queue of events in one explicit total order.
//
// Invariants: events pop in increasing (time, seq) order, where seq is the queue's own counter,
// incremented on every push (so among events at the same time, the one pushed first pops
// first); time never goes backwards across pops (pushing an event earlier than the last popped
// one is a bug, asserted).

#include <cstdint>
#include <vector>

#include "common/units.h"

namespace kvsim::sim {

enum class EventKind : std::uint8_t {
  kArrival,         // the next request of the workload arrives
  kStepEnd,         // a replica's engine step finishes
  kSwapInDone,      // a swapped-out request's KV is back on the GPU
  kKvTransferDone,  // disaggregated: a prompt's KV has reached its decode instance
  kFrontendDone,    // a request has passed the front end (SimOptions::frontend_latency_ns)
  kSessionTurn,     // serial sessions: a session's next request is sent (replica: the session)
};

struct Event {
  TimeNs time = 0;
  std::uint64_t seq = 0;  // tie-breaker: push order within one run
  EventKind kind = EventKind::kArrival;
  std::uint32_t replica = 0;  // kStepEnd, kSwapInDone, kKvTransferDone (the sender);
                              // kSessionTurn: the session
  std::uint32_t request = 0;  // kSwapInDone, kKvTransferDone, kFrontendDone: request slot
};

class EventQueue {
 public:
  // Schedules an event at `time` (>= the time of the last popped event).
  void push(TimeNs time, EventKind kind, std::uint32_t replica = 0, std::uint32_t request = 0);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // The next event; the queue must not be empty.
  const Event& top() const { return heap_.front(); }
  // Removes and returns the next event; the queue must not be empty.
  Event pop();
  // Events pushed so far in this run (elided ones included).
  std::uint64_t num_pushed() const { return next_seq_; }
  // Counts `n` events that were applied without being queued (a fast-forwarded run of steps,
  // each of which would have been pushed and popped before anything else): their seq numbers
  // are used up, so every later event gets the seq it would have had.
  void count_elided(std::uint64_t n) { next_seq_ += n; }

 private:
  std::vector<Event> heap_;  // min-heap on (time, seq)
  std::uint64_t next_seq_ = 0;
  TimeNs last_popped_ = 0;
};

}  // namespace kvsim::sim
