// The settings table (settings.h): one row per setting, with its YAML path, flag, help, type,
// range, default and where it applies. The lookups and parsing over it are in settings.cpp.
#include <cmath>
#include <optional>

#include "config/settings.h"
#include "memory/allocator.h"
#include "model/dtype.h"
#include "model/kv_math.h"
#include "model/quantization.h"
#include "sim/options.h"

namespace kvsim::config {
namespace {

constexpr double kMaxCount = kMaxSettingCount;
constexpr double kMaxGib = 1 << 20;  // 1 PiB: far above any GPU
constexpr double kMaxInt = 9.2e18;   // just under INT64_MAX

Bytes gib_to_bytes(double gib) {
  return static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
}

TimeNs ms_to_ns(double ms) {
  return std::llround(ms * 1e6);
}

bool any_dtype(std::string_view name) {
  return model::parse_dtype(name).has_value();
}

std::vector<std::string> quantization_names() {
  std::vector<std::string> names{"auto"};
  for (std::string& n : model::quant_method_names()) names.push_back(std::move(n));
  return names;
}

bool quantization_alias(std::string_view name) {
  return model::parse_quant_method(name).has_value();
}

std::vector<std::string> mxfp4_moe_activation_names() {
  return {"bf16", "mxfp8"};
}

std::vector<std::string> engine_names() {
  return {"v1", "v0"};
}

constexpr SettingRange closed(double lo, double hi) {
  return {lo, hi, false, false};
}

// GCC's -Wmissing-field-initializers fires on designated initializers that leave members to
// their default member initializers (GCC bug 96868); every omitted member here has one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
// The rows. Deployment settings first (the memory math), then serving, seed, SLOs, time limit
// and the cost model: the order --help lists them in.
const Setting kSettings[] = {
    {.path = "model",
     .flag = "--model",
     .help = "Model: a shipped name (see 'kvsim models'), a model YAML or a Hugging Face "
             "config.json",
     .type = SettingType::kText,
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.model = v.text; }},
    {.path = "gpu",
     .flag = "--gpu",
     .help = "GPU: a shipped name (see 'kvsim gpus') or a hardware YAML",
     .type = SettingType::kText,
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.gpu = v.text; }},
    {.path = "tensor_parallel_size",
     .flag = "--tensor-parallel-size",
     .alias = "--tp",
     .help = "GPUs one model replica is split over (tensor parallelism)",
     .type = SettingType::kInt,
     .range = closed(1, 4096),
     .default_text = "1",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.tensor_parallel_size = v.integer; }},
    {.path = "pipeline_parallel_size",
     .flag = "--pipeline-parallel-size",
     .alias = "--pp",
     .help = "Pipeline stages one model replica is split over (its layers, vLLM's split); a "
             "replica uses TP x PP GPUs",
     .type = SettingType::kInt,
     .range = closed(1, 4096),
     .default_text = "1",
     .scope = SettingScope::kServing,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.pipeline_parallel_size = v.integer; }},
    {.path = "data_parallel_size",
     .flag = "--data-parallel-size",
     .alias = "--dp",
     .help = "Data-parallel ranks of one replica (vLLM's engine cores), each a TP group with its "
             "own requests and KV cache; an MoE model spreads its experts over all of them and "
             "steps them together. A replica uses DP x TP x PP GPUs",
     .type = SettingType::kInt,
     .range = closed(1, 4096),
     .default_text = "1",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.data_parallel_size = v.integer; }},
    {.path = "enable_expert_parallel",
     .flag = "--enable-expert-parallel",
     .help = "Spread an MoE model's routed experts over the replica's DP x TP GPUs as whole "
             "experts (expert parallelism) instead of splitting every expert's width",
     .type = SettingType::kBool,
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.enable_expert_parallel = v.on; }},
    {.path = "gpus_per_node",
     .flag = "--gpus-per-node",
     .help = "GPUs of each node a replica uses, replacing the GPU's gpus_per_node (e.g. 4 for "
             "TP 4 x PP 2 over two nodes): a TP group or stage boundary beyond it crosses nodes",
     .type = SettingType::kInt,
     .range = closed(1, 1024),
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.gpus_per_node = v.integer; }},
    {.path = "internode_bandwidth_gb_s",
     .flag = "--internode-bandwidth-gb-s",
     .help = "Link between nodes, GB/s per GPU per direction, replacing the GPU's "
             "internode_bandwidth_gb_s (e.g. TCP without InfiniBand)",
     .type = SettingType::kFloat,
     .range = {0, 1e6, true, false},
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.internode_bandwidth_gb_s = v.number; }},
    {.path = "internode_latency_us",
     .flag = "--internode-latency-us",
     .help = "Latency of the link between nodes, microseconds per message, replacing the GPU's "
             "internode_latency_us",
     .type = SettingType::kFloat,
     .range = closed(0, 1e6),
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.internode_latency_us = v.number; }},
    {.path = "gpu_memory_utilization",
     .flag = "--gpu-memory-utilization",
     .help = "Fraction of each GPU's memory the server may use (weights, activations, KV)",
     .type = SettingType::kFraction,
     .range = {0, 1, true, false},
     .default_text = "0.9",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.gpu_memory_utilization = v.number; }},
    {.path = "block_size",
     .flag = "--block-size",
     .help = "Tokens per KV-cache block",
     .type = SettingType::kInt,
     .range = closed(1, 1 << 20),
     .default_text = "16",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.block_size = v.integer; }},
    {.path = "max_model_len",
     .flag = "--max-model-len",
     .help = "Longest sequence (prompt + output) served (default: the model's max context)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxCount),
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.max_model_len = v.integer; }},
    {.path = "kv_cache_dtype",
     .flag = "--kv-cache-dtype",
     .help = "KV-cache element type: {choices} (auto = the model's activation type)",
     .type = SettingType::kChoice,
     .default_text = "auto",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .choices = model::kv_cache_dtype_names,
     .also_accepts = any_dtype,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.kv_cache_dtype = v.text; }},
    {.path = "kv_scale_group_size",
     .flag = "--kv-scale-group-size",
     .help = "Quantized KV caches: one fp16 scale per this many elements of a head (0 = none)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxCount),
     .default_text = "0",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.kv_scale_group_size = v.integer; }},
    {.path = "quantization",
     .flag = "--quantization",
     .help = "Weight quantization of the linear layers: {choices} (auto = the model's, e.g. an HF "
             "config's quantization_config; vLLM's aliases such as modelopt_fp4 are accepted)",
     .type = SettingType::kChoice,
     .default_text = "auto",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .choices = quantization_names,
     .also_accepts = quantization_alias,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           const auto method = model::parse_quant_method(v.text);
           s.deployment.quantization =
               method ? std::string(model::quant_method_name(*method)) : std::string("auto");
         }},
    {.path = "mxfp4_moe_activation",
     .flag = "--mxfp4-moe-activation",
     .help = "Activations of the fused-MoE kernel over MXFP4 experts (gpt-oss, --quantization "
             "mxfp4): {choices} (bf16 = vLLM's default; mxfp8 = FlashInfer's MXFP4 x MXFP8 "
             "kernel on Blackwell, VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1)",
     .type = SettingType::kChoice,
     .default_text = "bf16",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .choices = mxfp4_moe_activation_names,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.mxfp4_moe_activation = v.text; }},
    {.path = "activation_reserve_gib",
     .flag = "--activation-reserve-gib",
     .help = "GPU memory kept for forward-pass activations, GiB per GPU (default: estimated from "
             "the model; 'kvsim kv' shows it)",
     .type = SettingType::kGib,
     .range = closed(0, kMaxGib),
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.activation_reserve_gib = v.number; }},
    {.path = "runtime_overhead_gib",
     .flag = "--runtime-overhead-gib",
     .help = "GPU memory taken by the CUDA context, workspaces, NCCL and CUDA graphs, GiB per GPU",
     .type = SettingType::kGib,
     .range = closed(0, kMaxGib),
     .default_text = "2",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.deployment.runtime_overhead_gib = v.number;
           s.deployment.runtime_overhead_given = true;
         }},
    {.path = "engine",
     .flag = "--engine",
     .help = "vLLM generation modelled: v1 = V1 (--vllm-version): worker memory profile, vllm-v1 "
             "scheduler and its vllm serve defaults, prefix caching, CUDA graphs; v0 = V0-era "
             "engines: fixed memory reserves, vllm scheduler: {choices}",
     .type = SettingType::kChoice,
     .default_text = "v1",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .choices = engine_names,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.engine = v.text; }},
    {.path = "vllm_version",
     .flag = "--vllm-version",
     .help = "vLLM release whose V1 memory profile and serve defaults are modelled, 0.10 to "
             "0.14 (0.11 on: the profile's sampler sorts the logits, a larger peak; 0.14 on: "
             "async scheduling by default; others: the nearest, with a warning; --engine v1)",
     .type = SettingType::kText,
     .default_text = "0.10.1",
     .scope = SettingScope::kDeployment,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.deployment.vllm_version = v.text; }},
    {.path = "kv_cache_memory_bytes",
     .flag = "--kv-cache-memory-bytes",
     .alias = "--kv-cache-memory",
     .help = "KV-cache bytes per GPU, skipping the memory profile (vLLM's override; --engine v1)",
     .type = SettingType::kInt,
     .range = closed(1, kMaxInt),
     .scope = SettingScope::kDeployment,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.kv_cache_memory_bytes = v.integer; }},
    {.path = "num_gpu_blocks_override",
     .flag = "--num-gpu-blocks-override",
     .help = "Use this many KV blocks per GPU whatever the profile found (vLLM's override; "
             "--engine v1)",
     .type = SettingType::kInt,
     .range = closed(1, kMaxCount),
     .scope = SettingScope::kDeployment,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.num_gpu_blocks_override = v.integer; }},
    {.path = "serving.replicas",
     .flag = "--replicas",
     .help = "Copies of the deployment behind the router (default 1)",
     .type = SettingType::kInt,
     .range = closed(1, 100000),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.num_replicas = v.integer; }},
    {.path = "serving.prefill_replicas",
     .flag = "--prefill-replicas",
     .help = "Disaggregated serving: prefill-only instances in front of the --replicas decode "
             "instances, each prompt's KV sent to a decode instance (default 0: aggregated)",
     .type = SettingType::kInt,
     .range = closed(0, 100000),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.num_prefill_replicas = v.integer; }},
    {.path = "serving.prefill_tensor_parallel_size",
     .flag = "--prefill-tensor-parallel-size",
     .help = "Disaggregated serving: GPUs per prefill instance (default: --tensor-parallel-size)",
     .type = SettingType::kInt,
     .range = closed(1, 1024),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.prefill_tensor_parallel_size = v.integer; }},
    {.path = "serving.prefill_data_parallel_size",
     .flag = "--prefill-data-parallel-size",
     .help = "Disaggregated serving: data-parallel ranks per prefill instance, each of "
             "--prefill-tensor-parallel-size GPUs (an MoE model spreads its experts over all of "
             "them, whole with --enable-expert-parallel, and steps them together; default 1)",
     .type = SettingType::kInt,
     .range = closed(1, 4096),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.prefill_data_parallel_size = v.integer; }},
    {.path = "serving.kv_transfer_bandwidth_gb_s",
     .flag = "--kv-transfer-bandwidth-gb-s",
     .help = "Disaggregated serving: GB/s per GPU of the prefill-to-decode KV link (default: the "
             "GPU's NVLink, or its inter-node link when the pools span nodes)",
     .type = SettingType::kFloat,
     .range = {0, 1e6, true, false},
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.kv_transfer_bandwidth_gb_s = v.number; }},
    {.path = "serving.kv_transfer_latency_us",
     .flag = "--kv-transfer-latency-us",
     .help = "Disaggregated serving: latency of one KV transfer in microseconds (default: the "
             "link's)",
     .type = SettingType::kFloat,
     .range = closed(0, 1e9),
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.deployment.kv_transfer_latency_us = v.number; }},
    {.path = "serving.router",
     .flag = "--router",
     .help = "How arrivals pick a replica: {choices} (default round-robin)",
     .type = SettingType::kChoice,
     .grid_axis = true,
     .choices = sim::router_names,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.router = *sim::parse_router(v.text); }},
    {.path = "serving.scheduler",
     .flag = "--scheduler",
     .help = "Batching policy: {choices} (default: vllm-v1 with --engine v1, vllm with v0)",
     .type = SettingType::kChoice,
     .grid_axis = true,
     .choices = sim::scheduler_names,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.scheduler.kind = *sim::parse_scheduler(v.text); }},
    {.path = "serving.max_num_seqs",
     .flag = "--max-num-seqs",
     .help = "Most sequences running per replica (default: vllm-v1 vllm serve's for the GPU, "
             "1024 or 256; else 256)",
     .type = SettingType::kInt,
     .range = closed(1, kMaxCount),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.scheduler.max_num_seqs = v.integer; }},
    {.path = "serving.max_num_batched_tokens",
     .flag = "--max-num-batched-tokens",
     .help = "Most tokens per step (default: vllm-v1 vllm serve's for the GPU, 8192 or 2048; "
             "vllm max(max-model-len, 2048); chunked-prefill 2048; static unlimited)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxCount),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.scheduler.max_num_batched_tokens = v.integer; }},
    {.path = "serving.long_prefill_token_threshold",
     .flag = "--long-prefill-token-threshold",
     .help = "vllm-v1: largest prefill chunk per request per step; chunked-prefill: what counts "
             "as a long prefill for --max-long-partial-prefills (default 0: none; 4% of "
             "max-model-len with partial prefills)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxCount),
     .grid_axis = true,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.sim.scheduler.long_prefill_token_threshold = v.integer;
         }},
    {.path = "serving.max_num_partial_prefills",
     .flag = "--max-num-partial-prefills",
     .help = "chunked-prefill (vLLM V0): prefills that split a step's token budget evenly "
             "(default 1)",
     .type = SettingType::kInt,
     .range = closed(1, kMaxCount),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.scheduler.max_num_partial_prefills = v.integer; }},
    {.path = "serving.max_long_partial_prefills",
     .flag = "--max-long-partial-prefills",
     .help = "chunked-prefill (vLLM V0): of those, most prefills longer than "
             "--long-prefill-token-threshold at once (default 1)",
     .type = SettingType::kInt,
     .range = closed(1, kMaxCount),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.scheduler.max_long_partial_prefills = v.integer; }},
    {.path = "serving.cuda_graph_sizes",
     .flag = "--cuda-graph-sizes",
     .help = "vllm-v1: largest CUDA-graph capture size; a step of at most this many tokens is "
             "padded to 1, 2, 4 or the next multiple of 8 (default min(2 x max-num-seqs, 512); "
             "0: no graphs)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxCount),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.scheduler.cuda_graph_max_size = v.integer; }},
    {.path = "serving.cudagraph_mode",
     .flag = "--cudagraph-mode",
     .help = "vllm-v1: which steps replay a CUDA graph, {choices} (vLLM's compilation-config "
             "cudagraph_mode; default FULL_AND_PIECEWISE from --vllm-version 0.11, PIECEWISE "
             "before). A step without one (FULL_DECODE_ONLY: any step with a prefill; every "
             "mode: a step above --cuda-graph-sizes) is not padded and lasts at least the GPU "
             "profile's eager_layer_host_us per layer",
     .type = SettingType::kChoice,
     .choices = sim::cuda_graph_mode_names,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.sim.scheduler.cuda_graph_mode = *sim::parse_cuda_graph_mode(v.text);
         }},
    {.path = "serving.enforce_eager",
     .flag = "--enforce-eager",
     .help = "vllm-v1: no CUDA graphs (vLLM's --enforce-eager): steps are not padded and last "
             "at least the GPU profile's eager_layer_host_us per layer",
     .type = SettingType::kBool,
     .apply = [](Scenario& s, const SettingValue& v) { s.enforce_eager = v.on; }},
    {.path = "serving.async_scheduling",
     .flag = "--async-scheduling",
     .help = "vllm-v1: the host schedules the next step while the GPU runs this one, so a step "
             "lasts max(GPU time, host overhead) instead of their sum, and a request arriving "
             "during a step is first scheduled in the step after next (vLLM's "
             "--async-scheduling; default: on from --vllm-version 0.14 with one pipeline stage, "
             "as vLLM, else off; --async-scheduling=false turns it off)",
     .type = SettingType::kBool,
     .apply = [](Scenario& s, const SettingValue& v) { s.async_scheduling = v.on; }},
    {.path = "serving.step_overhead_us",
     .flag = "--step-overhead-us",
     .help = "Host time per engine step, microseconds, replacing the GPU profile's "
             "step_overhead_us (another engine's scheduler and workers)",
     .type = SettingType::kFloat,
     .range = closed(0, 1e6),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.step_overhead_us = v.number; }},
    {.path = "serving.context_token_overhead_us",
     .flag = "--context-token-overhead-us",
     .help = "Host time per context token of each step's sequences, microseconds, replacing the "
             "GPU profile's context_token_overhead_us (block tables shipped to the workers every "
             "step; DistServe's simulator gives its Ray workers 0.1)",
     .type = SettingType::kFloat,
     .range = closed(0, 1e3),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.context_token_overhead_us = v.number; }},
    {.path = "serving.frontend_latency_us",
     .flag = "--frontend-latency-us",
     .help = "The serving front end's latency per request, microseconds, replacing the GPU "
             "profile's frontend_latency_us (without one: 10000 for --engine v0 with the roofline "
             "model, else 0): HTTP, tokenization and the hand-off to the engine before a request "
             "is scheduled, the first token's way back after; adds to TTFT and E2E, not to TPOT "
             "(kvsim calibrate --from-run fits it)",
     .type = SettingType::kFloat,
     .range = closed(0, 1e7),
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.frontend_latency_us = v.number; }},
    {.path = "serving.allocator",
     .flag = "--allocator",
     .help = "KV allocator: {choices} (default paged)",
     .type = SettingType::kChoice,
     .grid_axis = true,
     .choices = memory::allocator_kind_names,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.allocator = *memory::parse_allocator_kind(v.text); }},
    {.path = "serving.placement",
     .flag = "--placement",
     .help = "Contiguous extent placement: {choices} (default buddy)",
     .type = SettingType::kChoice,
     .grid_axis = true,
     .choices = memory::placement_names,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.placement = *memory::parse_placement(v.text); }},
    {.path = "serving.watermark",
     .flag = "--watermark",
     .help = "Paged: fraction of blocks kept free at admission (default: 0 for vllm-v1, which "
             "keeps none; 0.01 otherwise, as vLLM V0)",
     .type = SettingType::kFraction,
     .range = {0, 1, false, true},
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.watermark = v.number; }},
    {.path = "serving.preemption",
     .flag = "--preemption",
     .help = "When a decode cannot grow: {choices} (default recompute)",
     .type = SettingType::kChoice,
     .grid_axis = true,
     .choices = sim::preemption_names,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.sim.scheduler.preemption = *sim::parse_preemption(v.text);
         }},
    {.path = "serving.swap_space_gib",
     .flag = "--swap-space",
     .help = "CPU swap space per GPU, GiB (default 4)",
     .type = SettingType::kGib,
     .range = closed(0, 1e6),
     .grid_axis = true,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.sim.scheduler.swap_space_bytes = gib_to_bytes(v.number);
         }},
    {.path = "serving.kv_offload_gib",
     .flag = "--kv-offload-gib",
     .help = "KV offload to CPU memory, GiB per GPU (vLLM's OffloadingConnector, LMCache's "
             "max_local_cpu_size): prefix blocks the GPU cache evicts are kept there and loaded "
             "over PCIe instead of recomputed; needs prefix caching and vllm-v1 or "
             "chunked-prefill",
     .type = SettingType::kGib,
     .range = closed(0, 1e6),
     .default_text = "0",
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.kv_offload_bytes = gib_to_bytes(v.number); }},
    {.path = "serving.kv_offload_bandwidth_gb_s",
     .flag = "--kv-offload-bandwidth-gb-s",
     .help = "Host-to-GPU bandwidth of KV offload loads, GB/s (default: the GPU's PCIe "
             "bandwidth)",
     .type = SettingType::kFloat,
     .range = {0, 1e6, true, false},
     .grid_axis = true,
     .apply =
         [](Scenario& s, const SettingValue& v) {
           s.sim.kv_offload_bandwidth_bytes_per_s = v.number * 1e9;
         }},
    {.path = "serving.enable_prefix_caching",
     .flag = "--enable-prefix-caching",
     .help = "Share cached prompt blocks (the workload needs prefix hashes; default: on for "
             "vllm-v1, off otherwise)",
     .type = SettingType::kBool,
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.enable_prefix_caching = v.on; }},
    {.path = "serving.warm_prefix_cache",
     .flag = "--warm-prefix-cache",
     .help = "The prefix cache starts holding the workload's prompts, as a benchmark repeated "
             "against the same server leaves it (needs prefix caching and prefix hashes)",
     .type = SettingType::kBool,
     .grid_axis = true,
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.warm_prefix_cache = v.on; }},
    {.path = "seed",
     .flag = "--seed",
     .help = "Seed of synthetic workloads (default 0)",
     .type = SettingType::kInt,
     .range = closed(0, kMaxInt),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.seed = static_cast<std::uint64_t>(v.integer); }},
    {.path = "slo.ttft_ms",
     .flag = "--slo-ttft",
     .help = "Time-to-first-token SLO, ms",
     .type = SettingType::kMs,
     .range = closed(0, 1e9),
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.slo.ttft_ns = ms_to_ns(v.number); }},
    {.path = "slo.tpot_ms",
     .flag = "--slo-tpot",
     .help = "Time-per-output-token SLO, ms",
     .type = SettingType::kMs,
     .range = closed(0, 1e9),
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.slo.tpot_ns = ms_to_ns(v.number); }},
    {.path = "slo.e2e_ms",
     .flag = "--slo-e2e",
     .help = "End-to-end latency SLO, ms",
     .type = SettingType::kMs,
     .range = closed(0, 1e9),
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.slo.e2e_ns = ms_to_ns(v.number); }},
    {.path = "slo.percentile",
     .flag = "--slo-percentile",
     .help = "Percentile at which the SLOs must hold (default 99)",
     .type = SettingType::kPercent,
     .range = {0, 100, true, false},
     .apply = [](Scenario& s, const SettingValue& v) { s.sim.slo.percentile = v.number; }},
    {.path = "serving.time_limit_s",
     .flag = "--time-limit",
     .help = "Stop after this many simulated seconds (default: run to the end)",
     .type = SettingType::kSeconds,
     .range = closed(0, 1e9),
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.sim.time_limit_ns = seconds_to_ns(v.number); }},
    {.path = "cost_model",
     .flag = "--cost-model",
     .help = "Step time: roofline (default) or "
             "linear:BASE_US:PREFILL_US_PER_TOKEN:DECODE_US_PER_SEQ[:CONTEXT_US_PER_TOKEN]",
     .type = SettingType::kSpec,
     .grid_axis = true,
     .apply = [](Scenario& s,
                 const SettingValue& v) { s.cost = parse_cost_model_spec(v.text, v.where); }},
};

#pragma GCC diagnostic pop

}  // namespace

std::span<const Setting> settings() {
  return kSettings;
}

}  // namespace kvsim::config
