#pragma once
// The report's `inputs{}` block of a resolved scenario (run/resolve.h): built here and only here,
// for simulate, compare and plan alike.
//
//   inputs {model, hardware, serving, workload, seed}        inputs_json
//   + workload_reader and kv for a finished run               sim_report_inputs

#include "report/json.h"
#include "report/kv_report.h"
#include "report/sim_report.h"
#include "report/spec_json.h"
#include "run/resolve.h"
#include "run/run.h"

namespace kvsim::report {

// The memory settings of inputs.serving (report::serving_json's input).
ServingMemoryInputs serving_memory_inputs(const run::Deployment& deployment);

// inputs.serving: memory settings, allocator, placement, watermark, the simulator's settings and
// the cost model (in the scenario file's keys and units); with pipeline stages, pipeline_engine:
// "batch_queue" (vLLM V1) or "virtual_engines" (vLLM V0).
// Pipeline parallelism or a TP group wider than a node: adds pipeline_parallel_size,
// gpus_per_replica, gpus_per_node and links{tensor_parallel_allreduce{kind, bandwidth_bytes_per_s,
// latency_s}, pipeline_stage_transfers[...]}: the links the step times price. Nothing otherwise.
void add_parallel_links_json(Json& serving, const run::Deployment& d);
Json serving_inputs_json(const run::ResolvedScenario& scenario);

// {model, hardware, serving, workload, seed}. The scenario's GPU is required.
Json inputs_json(const run::ResolvedScenario& scenario);

// "4 × h100-sxm per replica, 2 replicas; paged allocator, vllm scheduler".
std::string deployment_label(const run::ResolvedScenario& scenario);

// The simulate/compare report's inputs for one finished run.
SimReportInputs sim_report_inputs(const run::ResolvedScenario& scenario, const run::RunResult& run,
                                  KvDetail kv_detail);

}  // namespace kvsim::report
