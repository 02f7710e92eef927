#include "sim/event_queue.h"

#include <algorithm>

#include "common/assert.h"

namespace kvsim::sim {
namespace {

// std heaps are max-heaps: "a after b" puts the earliest (time, seq) on top.
bool after(const Event& a, const Event& b) {
  return a.time != b.time ? a.time > b.time : a.seq > b.seq;
}

}  // namespace

void EventQueue::push(TimeNs time, EventKind kind, std::uint32_t replica, std::uint32_t request) {
  KVSIM_ASSERT(time >= last_popped_, "events are never scheduled in the past");
  heap_.push_back(Event{time, next_seq_++, kind, replica, request});
  std::push_heap(heap_.begin(), heap_.end(), after);
}

Event EventQueue::pop() {
  KVSIM_ASSERT(!heap_.empty(), "pop from an empty event queue");
  std::pop_heap(heap_.begin(), heap_.end(), after);
  const Event event = heap_.back();
  heap_.pop_back();
  last_popped_ = event.time;
  return event;
}

}  // namespace kvsim::sim
