#include <catch2/catch.hpp>

#include "sim/event_queue.h"

using kvsim::sim::Event;
using kvsim::sim::EventKind;
using kvsim::sim::EventQueue;

TEST_CASE("Events pop by time, and by push order at the same time", "[sim]") {
  EventQueue q;
  q.push(30, EventKind::kStepEnd, 1);
  q.push(10, EventKind::kArrival);
  q.push(30, EventKind::kArrival);
  q.push(30, EventKind::kSwapInDone, 2, 7);
  q.push(20, EventKind::kStepEnd, 0);
  REQUIRE(q.size() == 5);
  CHECK(q.num_pushed() == 5);

  std::vector<std::pair<kvsim::TimeNs, std::uint64_t>> order;
  while (!q.empty()) {
    const Event e = q.pop();
    order.emplace_back(e.time, e.seq);
  }
  // The pinned tie order: at t = 30, the step end pushed first (seq 0), then the arrival (seq 2),
  // then the swap completion (seq 3).
  const std::vector<std::pair<kvsim::TimeNs, std::uint64_t>> expected = {
      {10, 1}, {20, 4}, {30, 0}, {30, 2}, {30, 3}};
  CHECK(order == expected);
}

TEST_CASE("The event queue keeps its payload and counts pushes per run", "[sim]") {
  EventQueue q;
  q.push(5, EventKind::kSwapInDone, 3, 42);
  const Event e = q.pop();
  CHECK(e.kind == EventKind::kSwapInDone);
  CHECK(e.replica == 3);
  CHECK(e.request == 42);
  CHECK(e.time == 5);
  CHECK(e.seq == 0);
  q.push(5, EventKind::kArrival);  // at the current time: allowed
  CHECK(q.pop().seq == 1);
  EventQueue fresh;  // a new run starts its counter at 0
  fresh.push(0, EventKind::kArrival);
  CHECK(fresh.top().seq == 0);
}
