#pragma once
// `kvsim cost` output: the step time and per-op breakdown ("kvsim.cost/v1"), as JSON, a table
// and CSV.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/step_analysis.h"
#include "report/json.h"

namespace kvsim::report {

struct CostReportInput {
  std::string model;
  std::string gpu;
  std::int64_t tensor_parallel_size = 1;
  std::int64_t pipeline_parallel_size = 1;  // > 1: the step passes every stage in turn
  // Data or expert parallelism of an MoE model: the routed experts are spread over this many GPUs
  // (0: the TP group), as whole experts when expert_parallel; the step is the rank's own tokens.
  std::int64_t expert_shard_ranks = 0;
  bool expert_parallel = false;
  std::string cost_model = "roofline";  // "roofline" | "linear"
  std::string weight_dtype, activation_dtype, kv_dtype;
  std::string profile_kind;                    // provenance.kind of the GPU's cost profile
  std::string profile_device;                  // provenance.device
  std::vector<std::string> defaulted_classes;  // op classes costed with default efficiencies
  std::vector<std::string> measured_classes;   // op classes fitted to measurements
  std::int64_t tables_used = 0;
  double step_overhead_s = 0;
  double seq_overhead_s = 0;            // per sequence in the step (shown when not 0)
  double prefill_token_overhead_s = 0;  // per prompt token in the step (shown when not 0)
  double context_token_overhead_s = 0;  // per context token of the step (shown when not 0)
  std::vector<cost::PrefillChunk> prefills;
  std::int64_t decode_batch = 0;
  std::int64_t context = 0;
  std::int64_t num_sampling = 0;
  std::optional<cost::DecodeCrossover> crossover;  // at `context`
};

// {schema, kvsim_version, command, step_time_s, bound, tokens, tokens_per_s,
//  ops[{name, time_s, fraction, flops, bytes, bound}], crossover{...}, inputs{...}}.
Json cost_json(const cost::StepCost& cost, const CostReportInput& in);
std::string cost_table(const cost::StepCost& cost, const CostReportInput& in);
// One row per op: name,time_s,fraction,flops,bytes,bound.
std::string cost_csv(const cost::StepCost& cost);

}  // namespace kvsim::report
