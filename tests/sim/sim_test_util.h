#pragma once
// Runs the simulator on fakes and keeps what a test wants to look at.

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "sim/fakes.h"
#include "sim/simulator.h"

namespace kvsim::test {

struct SimRun {
  sim::SimResult result;
  std::map<std::uint64_t, sim::Request> ended;  // last report per request id
  int num_end_calls = 0;
  std::vector<std::shared_ptr<AllocStats>> allocators;  // one per replica
};

class RecordingObserver final : public sim::SimObserver {
 public:
  explicit RecordingObserver(SimRun& run) : run_(run) {}
  void on_request_end(const sim::Request& r) override {
    ++run_.num_end_calls;
    run_.ended[r.id] = r;
  }

 private:
  SimRun& run_;
};

inline sim::SimOptions small_options(sim::SchedulerKind kind = sim::SchedulerKind::kVllm) {
  sim::SimOptions o;
  o.scheduler.kind = kind;
  o.scheduler.max_model_len = 2048;
  return o;
}

// Simulates `specs` on `setup` (its cost model, options and deployment as the test set them),
// recording into `run`.
inline void simulate_into(SimRun& run, sim::SimSetup setup, std::vector<trace::RequestSpec> specs) {
  VectorReader reader(std::move(specs));
  RecordingObserver observer(run);
  run.result = sim::simulate(setup, reader, &observer);
}

// Simulates `specs` with allocators from `make_allocator`, recording into `run`.
inline void simulate_into(SimRun& run, const sim::SimOptions& options,
                          std::function<std::unique_ptr<memory::Allocator>()> make_allocator,
                          const FixedCostModel& cost, std::vector<trace::RequestSpec> specs) {
  sim::SimSetup setup;
  setup.options = options;
  setup.cost_model = &cost;
  setup.make_allocator = std::move(make_allocator);
  simulate_into(run, std::move(setup), std::move(specs));
}

// FakeAllocators whose stats land in run.allocators, one per engine that asks.
inline std::function<std::unique_ptr<memory::Allocator>()> fake_allocators(
    SimRun& run, FakeAllocator::Options alloc = {}) {
  return [&run, alloc]() -> std::unique_ptr<memory::Allocator> {
    run.allocators.push_back(std::make_shared<AllocStats>());
    return std::make_unique<FakeAllocator>(alloc, run.allocators.back());
  };
}

// With FakeAllocators; their stats land in run.allocators, one per replica.
inline SimRun run_sim(const sim::SimOptions& options, FakeAllocator::Options alloc,
                      const FixedCostModel& cost, std::vector<trace::RequestSpec> specs) {
  SimRun run;
  simulate_into(run, options, fake_allocators(run, alloc), cost, std::move(specs));
  return run;
}

}  // namespace kvsim::test
