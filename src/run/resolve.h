#pragma once
// A scenario resolved: what config::Scenario names (a model, a GPU, a KV dtype, a workload) loaded
// and checked together, as the typed inputs of one run. The parsed scenario is never modified:
// every resolved value lives here.
//
//   config::Scenario s = config::load_scenario(path);    // parsed, settings range-checked
//   const run::ResolvedScenario r = run::resolve_scenario(s);
//   const run::RunResult out = run::run(r, &observer);   // run/run.h
//
// Errors that need the model or several values (tp must divide the heads, the vllm token budget
// must cover max_model_len) are located where the scenario got the offending value: its YAML
// line or its flag (config::relabel).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/scenario.h"
#include "cost/cost_model.h"
#include "memory/allocator.h"
#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "sim/deployment.h"
#include "sim/options.h"
#include "trace/workload.h"

namespace kvsim::run {

enum class GpuRequirement { kOptional, kRequired };

// The memory side of a deployment, resolved.
struct Deployment {
  model::ModelSpec model;
  std::optional<model::HardwareSpec> hardware;  // absent when no GPU was given (kOptional)
  std::int64_t tensor_parallel_size = 1;
  std::int64_t pipeline_parallel_size = 1;  // checked against the model's layers
  // Data-parallel ranks per replica and expert parallelism (model/expert_parallel.h): `model` is
  // then one GPU's view (model::shard_experts), its routed experts spread over DP × TP GPUs.
  std::int64_t data_parallel_size = 1;
  bool enable_expert_parallel = false;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::int64_t max_model_len = 0;                 // resolved: never 0
  std::string kv_cache_dtype;                     // as given, e.g. "auto"
  model::KvFormat kv_format;                      // what it resolved to
  std::optional<Bytes> activation_reserve_bytes;  // nullopt: default_activation_reserve_bytes
  Bytes runtime_overhead_bytes = model::kDefaultRuntimeOverheadBytes;

  const model::HardwareSpec* hardware_or_null() const { return hardware ? &*hardware : nullptr; }
  // GPUs of one replica: TP × PP × DP.
  std::int64_t gpus_per_replica() const {
    return tensor_parallel_size * pipeline_parallel_size * data_parallel_size;
  }
  // Disaggregated serving: `prefill` prefill instances (prefill TP × prefill DP each, no
  // pipeline) and `decode` decode instances (gpus_per_replica each).
  std::int64_t disaggregated_gpus(std::int64_t prefill, std::int64_t decode) const {
    return prefill * prefill_tensor_parallel_size * prefill_data_parallel_size +
           decode * gpus_per_replica();
  }
  bool runtime_overhead_given = false;  // V1: runtime_overhead_bytes replaces the estimate
  model::MemoryEngine engine = model::MemoryEngine::kVllmV1;
  model::VllmRelease vllm_release = model::kDefaultVllmRelease;  // whose V1 profile
  std::optional<Bytes> kv_cache_memory_bytes;                    // vLLM's override (v1)
  std::optional<std::int64_t> num_gpu_blocks_override;           // vLLM's override (v1)
  // Disaggregated serving: a prefill instance's TP size and data-parallel ranks (checked against
  // the model), one of its GPUs' view of the model (model::shard_experts over its DP × TP GPUs,
  // with enable_expert_parallel), and the KV link's overrides.
  std::int64_t prefill_tensor_parallel_size = 1;
  std::int64_t prefill_data_parallel_size = 1;
  model::ModelSpec prefill_model;
  std::optional<double> kv_transfer_bandwidth;  // bytes/s per GPU
  std::optional<double> kv_transfer_latency_s;

  // The budget options; V1's profile runs `max_num_batched_tokens` tokens and `max_num_seqs`
  // sampler rows (0 = vllm serve's defaults for the GPU).
  model::MemoryBudgetOptions budget_options(std::int64_t max_num_batched_tokens = 0,
                                            std::int64_t max_num_seqs = 0) const;
  // The block size the engine runs: block_size, raised under vLLM V1 for a model with a
  // per-sequence state so that a page holds one layer's state (model::vllm_hybrid_block_size).
  std::int64_t engine_block_size() const;
  // The closed-form KV analysis of this deployment at max_model_len, batch 1 (model::analyze_kv).
  model::KvAnalysis kv_analysis(std::int64_t max_num_batched_tokens = 0,
                                std::int64_t max_num_seqs = 0) const;
};

// Loads the model and GPU (config::load_model / load_hardware) of a deployment whose values the
// settings table has already range-checked, and checks what needs the model: tp valid for it
// (field --tensor-parallel-size), pp at most its layers (--pipeline-parallel-size), data and
// expert parallelism (--data-parallel-size, --enable-expert-parallel; not with pp > 1); the
// --internode-* overrides replace the GPU's inter-node link; max_model_len <= its max_context
// (field --max-model-len), the KV format. Throws kvsim::Error naming the flag; "--gpu: missing
// required flag" when kRequired and absent; "--model: missing required flag" without a model.
Deployment resolve_deployment(const config::ScenarioDeployment& deployment, GpuRequirement gpu);

// Everything one simulation needs, typed and checked.
struct ResolvedScenario {
  Deployment deployment;
  sim::SimOptions sim;  // the scenario's, with block_size and max_model_len from `deployment`
  memory::AllocatorKind allocator = memory::AllocatorKind::kPaged;
  memory::Placement placement = memory::Placement::kBuddy;
  double watermark = 0.01;
  cost::CostModelConfig cost;
  std::uint64_t seed = 0;
  std::shared_ptr<const trace::Workload> workload;  // the scenario's, seeded with `seed`

  // The deployment builder's inputs (sim::build_deployment); they point into this object.
  sim::DeploymentInputs deployment_inputs() const;
  // Why the simulator cannot run this combination of valid settings, naming the flag: data
  // parallelism with pipeline parallelism for an MoE model (ranks in lockstep), or with ranks
  // whose stages would cross nodes unlike rank 0's. nullopt when it can. run::run throws it;
  // `kvsim plan` lists the point as "not modelled" and goes on.
  std::optional<Error> not_modelled() const;
  // Disaggregated serving (sim.num_prefill_replicas > 0): the prefill instances' builder inputs
  // (deployment_inputs() at the prefill tensor- and data-parallel sizes, one stage,
  // prefill_model), and the pool the simulator runs from `prefill` (built from them; must outlive
  // the run): a prompt's KV moves from the GPUs of the prefill rank that computed it to those of
  // the decode rank that receives it, over min(prefill TP, decode TP × PP) parallel streams of
  // the link — the GPU's NVLink when every
  // instance fits one node, else its inter-node link — or the overrides; an inter-node link
  // without a bandwidth is an error (--kv-transfer-bandwidth-gb-s).
  sim::DeploymentInputs prefill_deployment_inputs() const;
  sim::SimSetup::PrefillPool prefill_pool(const sim::BuiltDeployment& prefill) const;
};

struct ResolveOptions {
  // Cut prompts so that prompt + output fits max_model_len (trace::TransformOptions).
  bool truncate_prompts = false;
};

// Resolves `scenario` (a GPU is required). Throws kvsim::Error located where the offending value
// came from; nothing about `scenario` changes.
ResolvedScenario resolve_scenario(const config::Scenario& scenario,
                                  const ResolveOptions& options = {});

}  // namespace kvsim::run
