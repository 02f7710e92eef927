#pragma once
// The KV-cache capacity vLLM's V1 engine arrives at when it starts (releases 0.10 to 0.14,
// kDefaultVllmRelease unless --vllm-version names another): the worker's memory profile, the KV
// cache groups and the three lines its log prints ("Available KV cache memory", "GPU KV cache
// size", "Maximum concurrency").
//
// The V1 worker profiles one dummy forward pass and then measures:
//   requested  = CUDA total memory × --gpu-memory-utilization
//   non_kv     = weights per rank + torch activation peak of the profile run + non-torch increase
//   available  = requested − non_kv                       ("Available KV cache memory")
// The activation peak is the larger of the forward pass over --max-num-batched-tokens tokens and
// the sampler over --max-num-seqs rows of logits (the forward's intermediates are freed before
// the sampler runs). The sampler's peak depends on the release: 0.10 samples with FlashInfer's
// top-k/top-p kernel, 0.11 to 0.14 with PyTorch's sort (FlashInfer's became opt-in,
// VLLM_USE_FLASHINFER_SAMPLER), whose peak is about four times larger. Non-torch memory counts what
// appeared outside PyTorch's allocator after the worker's first snapshot (the CUDA context is
// already in that snapshot, so it is not counted): NCCL and custom all-reduce buffers when tp > 1,
// cuBLAS/attention workspaces. In 0.10 CUDA graphs are captured after the KV cache is allocated,
// out of the 1 − utilization headroom, so they do not reduce the KV cache (cuda_graph_bytes = 0).
//
// KV cache groups (vLLM's hybrid allocator): layers of one attention type share a block table;
// when a model mixes types with one page size, every type is cut into groups of group_size =
// the fewest layers of any type, and all groups share one pool of blocks whose size is
// group_size × one layer's page. GPU KV cache size = num_blocks / num_groups × block_size.

#include <cstdint>
#include <optional>
#include <string>

#include "common/units.h"
#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "model/vllm_release.h"
#include "model/weights.h"

namespace kvsim::model {

// Memory the driver keeps outside what cudaMemGetInfo calls total, when a GPU profile does not
// give cuda_memory_bytes: 640 MiB, the mean gap measured on A100-80GB (0.75 GiB), A100-40GB
// (0.51 GiB) and L40S (0.60 GiB) between nvidia-smi's total and vLLM's logged total_gpu_memory.
inline constexpr Bytes kDefaultCudaReservedBytes = 640 * kMiB;
// Non-torch memory a V1 worker adds after its first snapshot on one GPU (cuBLAS and attention
// workspaces): 192 MiB; plus kVllmV1NcclBytes when tp > 1 (NCCL and custom all-reduce buffers).
// Fitted on vLLM 0.10.1 startup logs where two utilizations of one deployment separate the
// total memory from the overhead (Qwen2-7B, A100-80GB, tp 1 and 2).
inline constexpr Bytes kVllmV1NonTorchBytes = 192 * kMiB;
inline constexpr Bytes kVllmV1NcclBytes = 120 * kMiB;

// The total vLLM multiplies by --gpu-memory-utilization: hardware.cuda_memory_bytes when the
// profile gives it, else memory_bytes − kDefaultCudaReservedBytes.
Bytes cuda_total_memory_bytes(const HardwareSpec& hardware);
bool cuda_total_memory_measured(const HardwareSpec& hardware);

// `vllm serve` defaults for V1 by GPU (vLLM's engine args): 8192 batched tokens and 1024
// sequences on GPUs with at least 70 GiB that are not A100s, else 2048 and 256.
struct VllmSchedulerDefaults {
  std::int64_t max_num_batched_tokens = 2048;
  std::int64_t max_num_seqs = 256;
};
VllmSchedulerDefaults vllm_v1_serve_defaults(const HardwareSpec& hardware);

// Peak torch memory of the profile forward pass over `tokens` tokens on one rank:
// default_activation_reserve_bytes(model, tp, tokens, 0) (residual, normed input, attention
// output and scratch, and the widest MLP/MoE/Mamba intermediate).
Bytes vllm_forward_peak_bytes(const ModelSpec& model, std::int64_t tp, std::int64_t tokens);
// Peak of the dummy sampler run over `sequences` rows, vocab wide (every rank samples after the
// logits all-gather): with FlashInfer's kernel the logits in the activation dtype, an fp32 copy
// and fp32 probabilities; with PyTorch's sort sort_sampler_bytes_per_logit (model/kv_math.h).
Bytes vllm_sampler_peak_bytes(const ModelSpec& model, std::int64_t sequences,
                              const VllmRelease& release = kDefaultVllmRelease);
// kVllmV1NonTorchBytes, plus kVllmV1NcclBytes when tp > 1.
Bytes vllm_non_torch_bytes(std::int64_t tp);

// How vLLM's MXFP4 MoE kernel pads routed experts stored as 4-bit with 32-element scales
// (gpt-oss), by the GPU's compute capability, as vLLM picks the kernel: Marlin below 9.0 (the
// rank's intermediate size to a multiple of 128, hidden to 256), the Triton kernels on 9.x
// (intermediate to 64), FlashInfer on 10.x (both to 256); on AMD (ROCm) intermediate to 128.
// No padding for other models, or a GPU whose compute capability is not given.
ExpertPadding vllm_expert_padding(const ModelSpec& model, const HardwareSpec& hardware);

// The KV cache layout vLLM V1 builds in `available_bytes` on one rank.
struct VllmKvCacheLayout {
  // Tokens per attention block: the one asked for, or larger for a hybrid model whose state page
  // needs it (vllm_hybrid_block_size).
  std::int64_t block_size = 0;
  std::int64_t num_groups = 0;       // KV cache groups (block tables)
  std::int64_t state_groups = 0;     // of them, groups of Mamba / linear-attention layers
  Bytes state_page_bytes = 0;        // one such layer's state per sequence (before padding)
  std::int64_t group_size = 0;       // layers per group (tensors sharing the pool)
  Bytes block_bytes = 0;             // one block over group_size layers: what num_blocks divides
  bool uniform_page = true;          // false: layers' pages differ; block_bytes spans every layer
  std::int64_t num_blocks = 0;       // floor(available / block_bytes), or the override
  std::int64_t kv_cache_tokens = 0;  // num_blocks / num_groups × block_size
  std::int64_t max_model_len = 0;
  std::int64_t blocks_per_request = 0;       // at max_model_len, summed over groups
  double max_concurrency = 0;                // num_blocks / blocks_per_request
  std::int64_t estimated_max_model_len = 0;  // the longest request num_blocks holds
};
// The attention block size vLLM V1 uses for a hybrid model with a per-sequence state (Mamba or
// gated DeltaNet layers) so that an attention page (block × one layer's KV per token) holds one
// layer's state: max(block_size, 16 × ceil(state / (16 × KV per token))), vLLM's
// HybridAttentionMambaModelConfig without prefix caching; the state page is then padded to the
// attention page. block_size unchanged for other models (and for hybrids whose attention layers
// differ in page size, which vLLM does not align this way). A sparse-attention MLA model
// (DeepSeek-V3.2) always runs 64-token blocks, the only size vLLM's FlashMLA sparse kernels take.
std::int64_t vllm_hybrid_block_size(const ModelSpec& model, const KvFormat& format, std::int64_t tp,
                                    std::int64_t block_size);

// Requires block_size >= 1, max_model_len >= 1, max_num_batched_tokens >= 1. A sliding-window
// group needs min(window − 1 + max_num_batched_tokens, max_model_len) tokens plus one block per
// request (vLLM's bound for a window layer); a full group ceil(max_model_len / block_size). A
// hybrid model's stateful layers form groups of their own (group_size layers each, counted in
// num_groups) that hold one block per request; its block size is vllm_hybrid_block_size's.
VllmKvCacheLayout vllm_kv_cache_layout(const ModelSpec& model, const KvFormat& format,
                                       std::int64_t tp, Bytes available_bytes,
                                       std::int64_t block_size, std::int64_t max_model_len,
                                       std::int64_t max_num_batched_tokens,
                                       std::optional<std::int64_t> num_gpu_blocks_override = {});

// The V1 memory profile of one rank (all sizes per rank).
struct VllmMemoryProfile {
  Bytes total_memory_bytes = 0;  // cuda_total_memory_bytes
  bool total_memory_measured = false;
  double gpu_memory_utilization = 0;
  Bytes requested_bytes = 0;       // floor(total × utilization)
  Bytes weights_bytes = 0;         // as loaded: expert padding included
  Bytes expert_padding_bytes = 0;  // of weights_bytes, the MoE kernel's padding
  Bytes forward_peak_bytes = 0;
  Bytes sampler_peak_bytes = 0;
  Bytes activation_peak_bytes = 0;  // max of the two, or as given
  Bytes non_torch_bytes = 0;
  Bytes cuda_graph_bytes = 0;  // not counted by 0.10
  Bytes non_kv_bytes = 0;
  bool kv_cache_memory_given = false;  // --kv-cache-memory-bytes: no profiling
  bool fits = false;                   // available > 0
  Bytes available_kv_bytes = 0;        // 0 when it does not fit
  Bytes shortfall_bytes = 0;
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  VllmRelease release;
};
// Uses options.vllm_release, options.max_num_batched_tokens / max_num_seqs (0 =
// vllm_v1_serve_defaults), activation_reserve_bytes (replaces the activation peak),
// runtime_overhead_bytes only when options.runtime_overhead_given, kv_cache_memory_bytes (replaces
// the profile). Requires a valid tp and 0 < utilization <= 1.
VllmMemoryProfile vllm_v1_memory_profile(const ModelSpec& model, const HardwareSpec& hardware,
                                         std::int64_t tp, const MemoryBudgetOptions& options);

// The profile as the engine-neutral KvBudget (usable = requested, activation reserve =
// activation peak, runtime overhead = non-torch + graphs, kv_budget = available).
KvBudget vllm_v1_kv_budget(const ModelSpec& model, const HardwareSpec& hardware, std::int64_t tp,
                           const MemoryBudgetOptions& options);

// "Available KV cache memory: 4.23 GiB", "GPU KV cache size: 34,656 tokens", "Maximum concurrency
// for 32,768 tokens per request: 1.06x" — as vLLM logs them.
std::string vllm_available_line(Bytes available_bytes);
std::string vllm_cache_size_line(std::int64_t tokens);
std::string vllm_concurrency_line(std::int64_t max_model_len, double concurrency);

}  // namespace kvsim::model
