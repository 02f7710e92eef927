#include "run/run.h"

#include <memory>

namespace kvsim::run {

RunResult run(const ResolvedScenario& scenario, sim::SimObserver* observer) {
  const sim::BuiltDeployment built =
      sim::build_deployment(scenario.deployment_inputs(), scenario.sim);
  const sim::SimSetup setup = built.setup(scenario.sim);
  const std::unique_ptr<trace::TraceReader> reader = scenario.workload->open();
  RunResult out;
  out.result = sim::simulate(setup, *reader, observer);
  out.reader_stats = reader->stats();
  out.reader_description = reader->describe();
  out.replica_capacity_bytes = built.allocator_options().capacity_bytes;
  out.kv = scenario.deployment.kv_analysis(scenario.sim.scheduler.max_num_batched_tokens,
                                           scenario.sim.scheduler.max_num_seqs);
  return out;
}

}  // namespace kvsim::run
