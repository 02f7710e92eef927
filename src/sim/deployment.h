#pragma once
// From a resolved deployment (model, GPU, tensor parallelism, KV format, allocator and cost
// model choices) to what the simulator runs: the KV budget of each GPU, one allocator per
// replica sized from it, and the step-time cost model.

#include <cstdint>
#include <memory>

#include "cost/cost_model.h"
#include "cost/pipeline_model.h"
#include "memory/allocator.h"
#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "sim/simulator.h"

namespace kvsim::sim {

struct DeploymentInputs {
  const model::ModelSpec* model = nullptr;        // required
  const model::HardwareSpec* hardware = nullptr;  // required
  std::int64_t tensor_parallel_size = 1;
  std::int64_t pipeline_parallel_size = 1;  // stages; a replica holds TP × PP GPUs (per rank)
  // Data-parallel ranks; a replica holds DP × TP × PP GPUs. `model` is one GPU's view of an MoE
  // model (model::shard_experts); the ranks of an MoE model step together (never with stages).
  std::int64_t data_parallel_size = 1;
  model::KvFormat kv_format;
  model::MemoryBudgetOptions budget;  // gpu_memory_utilization and reserves
  std::int64_t block_size = 16;
  std::int64_t max_model_len = 0;  // resolved (> 0)
  memory::AllocatorKind allocator = memory::AllocatorKind::kPaged;
  memory::Placement placement = memory::Placement::kBuddy;
  double watermark = 0.01;
  cost::CostModelConfig cost;
};

// A deployment ready to simulate. Immutable; setup() may be called for several runs (each gets
// fresh allocators; the cost model is shared).
class BuiltDeployment {
 public:
  const model::KvBudget& budget() const { return budget_; }
  const model::KvCapacity& capacity() const { return capacity_; }
  const memory::AllocatorOptions& allocator_options() const { return allocator_; }
  const cost::CostModel& cost_model() const { return *cost_model_; }
  // Pipeline parallelism: the stage that sizes the KV cache (fewest blocks, the first of equals;
  // budget() and capacity() are its GPU's) and the stages' cost model (null with one stage).
  std::int64_t kv_stage() const { return kv_stage_; }
  const cost::PipelineCostModel* pipeline() const { return pipeline_.get(); }
  // Engines per data-parallel rank sharing its KV cache (sim::pipeline_virtual_engines).
  std::int64_t virtual_engines() const { return engines_; }

  // The simulator's setup for `options`: its block_size and max_model_len are set from the
  // deployment, the allocators' prefix caching and swap space from `options`. The returned setup
  // refers to this object, which must outlive the run.
  SimSetup setup(SimOptions options) const;

 private:
  friend BuiltDeployment build_deployment(const DeploymentInputs& inputs,
                                          const SimOptions& options);
  model::KvBudget budget_;
  model::KvCapacity capacity_;
  memory::AllocatorOptions allocator_;
  std::int64_t block_size_ = 16;
  std::int64_t max_model_len_ = 0;
  std::shared_ptr<const cost::CostModel> cost_model_;
  std::shared_ptr<const cost::PipelineCostModel> pipeline_;
  std::int64_t kv_stage_ = 0;
  std::int64_t engines_ = 1;  // virtual engines per rank (pipeline stages, vLLM V0)
  SimSetup::DataParallel data_parallel_;
};

// Sizes everything. With pipeline parallelism each stage's GPU holds its slice of the model
// (model/pipeline.h): weights and KV of its layers only; vLLM takes the fewest blocks of any
// worker, so the stage with the fewest sizes the cache; vLLM V1's one scheduler takes all of it,
// each of vLLM V0's pp virtual engines 1/pp (num_gpu_blocks //= pipeline_parallel_size).
// Throws kvsim::Error when the model does not fit the GPU ("does not fit",
// with the weights, reserves and shortfall), when one replica's KV cache cannot hold a single
// sequence of max_model_len tokens, or when an allocator or cost-model option is invalid.
// `options` supplies the allocator settings that belong to serving (prefix caching, swap space).
BuiltDeployment build_deployment(const DeploymentInputs& inputs, const SimOptions& options);

}  // namespace kvsim::sim
