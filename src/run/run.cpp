#include "run/run.h"

#include <memory>
#include <optional>

#include "model/pipeline.h"

namespace kvsim::run {

RunResult run(const ResolvedScenario& scenario, sim::SimObserver* observer) {
  if (std::optional<Error> e = scenario.not_modelled()) throw *e;
  const sim::BuiltDeployment built =
      sim::build_deployment(scenario.deployment_inputs(), scenario.sim);
  sim::SimSetup setup = built.setup(scenario.sim);
  std::optional<sim::BuiltDeployment> prefill;
  if (scenario.sim.num_prefill_replicas > 0) {
    prefill = sim::build_deployment(scenario.prefill_deployment_inputs(), scenario.sim);
    setup.prefill = scenario.prefill_pool(*prefill);
  }
  const std::unique_ptr<trace::TraceReader> reader = scenario.workload->open();
  // A second pass over the same requests warms the prefix caches.
  const std::unique_ptr<trace::TraceReader> warm =
      scenario.sim.warm_prefix_cache ? scenario.workload->open() : nullptr;
  setup.warm_prefixes = warm.get();
  RunResult out;
  out.result = sim::simulate(setup, *reader, observer);
  out.reader_stats = reader->stats();
  out.reader_description = reader->describe();
  const Deployment& d = scenario.deployment;
  const std::int64_t pp = d.pipeline_parallel_size;
  // With pipeline stages, the KV analysis is the GPU of the stage that sizes the cache (its slice
  // of the model); vLLM V0's virtual engines share that GPU's cache.
  out.replica_capacity_bytes =
      built.allocator_options().capacity_bytes * static_cast<Bytes>(built.virtual_engines());
  Deployment kv_gpu = pp == 1 ? Deployment{} : d;
  if (pp > 1) {
    const auto stages = model::pipeline_stages(d.model.num_layers, pp);
    kv_gpu.model =
        model::stage_model(d.model, stages[static_cast<std::size_t>(built.kv_stage())], pp);
    kv_gpu.pipeline_parallel_size = 1;
  }
  out.kv = (pp == 1 ? d : kv_gpu)
               .kv_analysis(scenario.sim.scheduler.max_num_batched_tokens,
                            scenario.sim.scheduler.max_num_seqs);
  return out;
}

}  // namespace kvsim::run
