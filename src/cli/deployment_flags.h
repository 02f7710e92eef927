#pragma once
// The DESIGN "common deployment flags" that concern memory, shared by kv, simulate, compare, cost
// and plan: --model, --gpu, --tensor-parallel-size, --gpu-memory-utilization, --block-size,
// --max-model-len, --kv-cache-dtype (plus --kv-scale-group-size, and the KV budget's
// --activation-reserve-gib and --runtime-overhead-gib). Scheduling flags live with the
// simulator's own flags.
//
// Usage in a command file:
//   DeploymentFlags flags;                      // defaults below
//   add_deployment_flags(command, flags);       // registers the flags
//   ... in the callback:
//   const Deployment d = resolve_deployment(flags, GpuRequirement::kRequired);

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "report/spec_json.h"

namespace kvsim::cli {

// Flag values as given (defaults in the initializers). Plain data: a scenario reader may fill it
// too and call validate_deployment_flags / resolve_deployment.
struct DeploymentFlags {
  std::string model;                      // --model NAME|model.yaml|config.json (required)
  std::string gpu;                        // --gpu NAME|gpu.yaml; empty = none
  std::int64_t tensor_parallel_size = 1;  // --tensor-parallel-size: GPUs one replica spans
  double gpu_memory_utilization = 0.9;    // --gpu-memory-utilization: fraction of memory used
  std::int64_t block_size = 16;           // --block-size: tokens per KV block
  std::int64_t max_model_len = 0;         // --max-model-len: 0 = the model's max_context
  std::string kv_cache_dtype = "auto";    // --kv-cache-dtype: auto|fp32|fp16|bf16|fp8|int8|int4
  std::int64_t kv_scale_group_size = 0;   // --kv-scale-group-size: fp16 scale per N elements
  std::optional<double> activation_reserve_gib;  // --activation-reserve-gib; nullopt: estimate
  double runtime_overhead_gib = 2.0;             // --runtime-overhead-gib
  bool runtime_overhead_given = false;           // --runtime-overhead-gib was given
  // --engine v1|v0: v1 = vLLM V1's memory profile (model/vllm_memory.h), v0 = kvsim's older
  // accounting (the V0-era ground truths and the golden files written before V1).
  std::string engine = "v1";
  std::optional<std::int64_t> kv_cache_memory_bytes;    // --kv-cache-memory-bytes (per GPU)
  std::optional<std::int64_t> num_gpu_blocks_override;  // --num-gpu-blocks-override
};

// Registers the flags on `command`, bound to `flags`. Numeric flags are parsed strictly: a bad
// value throws kvsim::Error naming the flag and what was expected (exit 2).
void add_deployment_flags(CLI::App* command, DeploymentFlags& flags);

// Range checks that need no model: tp >= 1, 0 < utilization <= 1, 1 <= block_size <= 1,048,576,
// max_model_len >= 0, kv_cache_dtype one of the names, kv_scale_group_size >= 0, the reserve and
// overhead finite and >= 0. Throws
// kvsim::Error with field "--<flag>".
void validate_deployment_flags(const DeploymentFlags& flags);

enum class GpuRequirement { kOptional, kRequired };

// Everything the flags resolve to.
struct Deployment {
  model::ModelSpec model;
  std::optional<model::HardwareSpec> hardware;  // absent when --gpu was not given (kOptional)
  std::int64_t tensor_parallel_size = 1;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::int64_t max_model_len = 0;                 // resolved: never 0
  std::string kv_cache_dtype;                     // as given, e.g. "auto"
  model::KvFormat kv_format;                      // what it resolved to
  std::optional<Bytes> activation_reserve_bytes;  // nullopt: default_activation_reserve_bytes
  Bytes runtime_overhead_bytes = model::kDefaultRuntimeOverheadBytes;
  bool runtime_overhead_given = false;
  model::MemoryEngine engine = model::MemoryEngine::kVllmV1;
  std::optional<Bytes> kv_cache_memory_bytes;
  std::optional<std::int64_t> num_gpu_blocks_override;

  const model::HardwareSpec* hardware_or_null() const { return hardware ? &*hardware : nullptr; }
  // The budget options; V1's profile runs `max_num_batched_tokens` tokens and `max_num_seqs`
  // sampler rows (0 = vllm serve's defaults for the GPU).
  model::MemoryBudgetOptions budget_options(std::int64_t max_num_batched_tokens = 0,
                                            std::int64_t max_num_seqs = 0) const;
  // The settings for a report's inputs.serving (report::serving_json).
  report::ServingMemoryInputs serving_inputs() const;
};

// Validates the flags, loads the model and GPU (config::load_model / load_hardware), and checks
// what needs both: tp valid for the model (field --tensor-parallel-size), max_model_len <= the
// model's max_context (field --max-model-len). Throws kvsim::Error; "--gpu is required" when
// kRequired and absent.
Deployment resolve_deployment(const DeploymentFlags& flags, GpuRequirement gpu);

}  // namespace kvsim::cli
