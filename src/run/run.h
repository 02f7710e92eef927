#pragma once
// The main flow of `kvsim simulate` and `kvsim compare`: a resolved scenario (run/resolve.h) in,
// typed results out. The caller brings its own observer (a progress line, a per-request log).
//
//   const RunResult out = run::run(resolved, &observer);
//   report::sim_report_inputs(resolved, out) ...            // report/run_inputs.h

#include <string>

#include "common/units.h"
#include "model/kv_math.h"
#include "run/resolve.h"
#include "sim/simulator.h"
#include "trace/workload.h"

namespace kvsim::run {

struct RunResult {
  sim::SimResult result;
  trace::ReaderStats reader_stats;   // what the workload reader read and skipped
  std::string reader_description;    // the workload reader's one-line description
  Bytes replica_capacity_bytes = 0;  // KV capacity of one replica's allocator
  model::KvAnalysis kv;              // the deployment's KV analysis (computed once)
};

// Builds the deployment, streams a fresh reader of the workload through the simulator (events to
// `observer`, which may be null) and returns the results. Throws kvsim::Error for a deployment
// that cannot be built (does not fit) or a workload that cannot be read.
RunResult run(const ResolvedScenario& scenario, sim::SimObserver* observer);

}  // namespace kvsim::run
