#pragma once
// A scenario: one what-if, as a YAML file (configs/scenarios/*.yaml) — model, GPU, memory
// settings, serving settings, cost model, SLOs, seed and workload. `kvsim simulate --config`
// runs one; flags given on the command line override its fields.
//
//   model: llama-3-70b                 # shipped name, model YAML or HF config.json
//   gpu: h100-sxm                      # shipped name or hardware YAML
//   tensor_parallel_size: 4
//   gpu_memory_utilization: 0.9
//   block_size: 16
//   max_model_len: 8192                # 0 or absent: the model's max context
//   kv_cache_dtype: auto               # auto|fp32|fp16|bf16|fp8|int8|int4|fp4
//   kv_scale_group_size: 0
//   quantization: auto                 # auto|none|fp8|int8|awq|gptq|mxfp4|nvfp4 (weights)
//   mxfp4_moe_activation: bf16         # bf16|mxfp8: MXFP4 experts' fused-MoE kernel (Blackwell)
//   activation_reserve_gib: 1.5        # absent: estimated from the model (kvsim kv shows it)
//   runtime_overhead_gib: 2            # CUDA context, workspaces, NCCL, CUDA graphs
//   engine: v1                         # v1: vLLM V1 (memory profile, scheduler, defaults);
//                                      # v0: the older accounting and the V0 scheduler
//   vllm_version: 0.10.1               # v1: whose memory profile (0.10 to 0.14)
//   serving:
//     replicas: 1
//     router: round-robin              # round-robin|least-outstanding|least-kv|prefix-aware
//     scheduler: vllm-v1               # vllm-v1|vllm|chunked-prefill|static (absent: by engine)
//     max_num_seqs: 256                # absent: by scheduler (vllm-v1: vllm serve's for the GPU)
//     max_num_batched_tokens: 0        # 0: the scheduler's default
//     long_prefill_token_threshold: 0
//     cuda_graph_sizes: 512            # vllm-v1: largest capture size (absent: vLLM's default)
//     enforce_eager: false             # vllm-v1: no CUDA graphs
//     async_scheduling: false          # vllm-v1: host overhead overlaps the GPU's step
//                                      # (absent: on from vllm_version 0.14, one stage)
//     step_overhead_us: 2000           # absent: the GPU profile's host time per step
//     context_token_overhead_us: 0.1   # absent: the profile's, per context token per step
//     frontend_latency_us: 0           # absent: the profile's, per request (adds to TTFT)
//     allocator: paged                 # paged|contiguous-max|contiguous-pow2|contiguous-oracle
//     placement: buddy                 # contiguous: buddy|first-fit|best-fit
//     watermark: 0.01                  # paged: blocks kept free at admission (vllm-v1: 0)
//     preemption: recompute            # recompute|swap
//     swap_space_gib: 4                # per GPU
//     enable_prefix_caching: false     # absent: on for vllm-v1
//     time_limit_s: 0                  # 0: run until every request has ended
//   cost_model: roofline               # or {kind: linear, base_us, prefill_us_per_token,
//                                      #     decode_us_per_seq, context_us_per_token,
//                                      #     swap_gb_per_s}
//   slo: {ttft_ms: 2000, tpot_ms: 100, e2e_ms: 0, percentile: 99}   # 0 or absent: no target
//   seed: 0
//   workload: {...}                    # config/workload_yaml.h
//
// Every field holds one value here. A list anywhere makes a sweep grid, which is `kvsim plan`'s
// business: load_scenario rejects it ("lists make a sweep: use kvsim plan"). A grid expander
// (in config/) turns a grid into single-valued YAML documents and reads each with
// parse_scenario (config/scenario_yaml.h).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "cost/cost_model.h"
#include "memory/allocator.h"
#include "sim/options.h"
#include "trace/workload.h"

namespace kvsim::config {

// The memory-related deployment settings, as given (names or paths unresolved).
struct ScenarioDeployment {
  std::string model;                               // required (by the scenario or --model)
  std::string gpu;                                 // required to simulate
  std::int64_t tensor_parallel_size = 1;           // GPUs per pipeline stage
  std::int64_t pipeline_parallel_size = 1;         // stages per replica (a replica: TP × PP GPUs)
  std::int64_t data_parallel_size = 1;             // ranks per replica (DP × TP GPUs)
  bool enable_expert_parallel = false;             // MoE experts spread whole over DP × TP GPUs
  std::optional<std::int64_t> gpus_per_node;       // replaces the GPU's (GPUs used per node)
  std::optional<double> internode_bandwidth_gb_s;  // replaces the GPU's inter-node link
  std::optional<double> internode_latency_us;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::int64_t max_model_len = 0;  // 0 = the model's max context
  std::string kv_cache_dtype = "auto";
  std::int64_t kv_scale_group_size = 0;
  std::string quantization = "auto";  // auto = the model's; else a canonical QuantMethod name
  std::string mxfp4_moe_activation = "bf16";     // bf16|mxfp8: MXFP4 experts' kernel activations
  std::optional<double> activation_reserve_gib;  // nullopt: the model-based estimate
  double runtime_overhead_gib = 2.0;             // model::kDefaultRuntimeOverheadBytes
  bool runtime_overhead_given = false;           // runtime_overhead_gib was set (V1: replaces
                                                 // the non-torch estimate)
  std::string engine = "v1";                     // v1|v0: memory accounting (--engine)
  std::string vllm_version;                      // empty: model::kDefaultVllmRelease (v1)
  std::optional<std::int64_t> kv_cache_memory_bytes;    // vLLM's KV-cache bytes override (v1)
  std::optional<std::int64_t> num_gpu_blocks_override;  // vLLM's blocks override (v1)
  // Disaggregated serving: the prefill instances' tensor-parallel size (0: tensor_parallel_size)
  // and data-parallel ranks, and the link their KV crosses to the decode instances (nullopt: the
  // GPU's).
  std::int64_t prefill_tensor_parallel_size = 0;
  std::int64_t prefill_data_parallel_size = 1;
  std::optional<double> kv_transfer_bandwidth_gb_s;
  std::optional<double> kv_transfer_latency_us;
};

struct Scenario {
  std::string source;  // the YAML file it came from; empty when built from flags only
  ScenarioDeployment deployment;
  // Replicas, router, scheduler options, prefix caching, time limit, SLOs, timeline. Its
  // scheduler.max_model_len and block_size are filled from `deployment` once resolved.
  sim::SimOptions sim;
  memory::AllocatorKind allocator = memory::AllocatorKind::kPaged;
  memory::Placement placement = memory::Placement::kBuddy;
  double watermark = 0.01;     // paged: vLLM v0's 1% of blocks kept free at admission
  bool enforce_eager = false;  // no CUDA graphs (vllm-v1 steps are then not padded)
  // vLLM's --async-scheduling: the next step is scheduled while the GPU runs this one (copied to
  // cost.roofline.async_scheduling when resolved, so a later cost_model setting keeps it). Not
  // given (origins): the release's default (model::vllm_async_scheduling_default).
  bool async_scheduling = false;
  // The engine's host time per step and per context token, replacing the GPU profile's
  // (copied to cost.roofline when resolved); nullopt: the profile's.
  std::optional<double> step_overhead_us;
  std::optional<double> context_token_overhead_us;
  // The serving front end's latency per request, replacing the GPU profile's
  // frontend_latency_us (copied to sim.frontend_latency_ns when resolved); nullopt: the profile's.
  std::optional<double> frontend_latency_us;
  cost::CostModelConfig cost;
  trace::WorkloadOptions workload;
  bool has_workload = false;  // the scenario defines a workload section
  std::uint64_t seed = 0;     // synthetic workloads (and anything else random)
  // Where each setting that was given came from (config/settings.h path → its YAML location
  // or its flag), for errors found later (config::relabel).
  std::map<std::string, ErrorLocation, std::less<>> origins;
};

// Reads and validates a scenario file. Throws kvsim::Error with file, line, column and field on
// bad input, and "lists make a sweep: use kvsim plan" at the first list.
Scenario load_scenario(const std::string& path);

// The same from YAML text; `display_name` stands for the file in errors, `base_dir` resolves
// relative trace paths.
Scenario parse_scenario_text(std::string_view yaml, const std::string& display_name,
                             const std::string& base_dir);

// The linear cost model's command-line form, "linear:BASE_US:PREFILL_US_PER_TOKEN:
// DECODE_US_PER_SEQ[:CONTEXT_US_PER_TOKEN]", or "roofline". Throws kvsim::Error at `where`.
cost::CostModelConfig parse_cost_model_spec(const std::string& spec, const ErrorLocation& where);

}  // namespace kvsim::config
