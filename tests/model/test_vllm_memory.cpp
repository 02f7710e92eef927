#include <catch2/catch.hpp>

#include "model/kv_math.h"
#include "model/vllm_memory.h"
#include "model/weights.h"

using namespace kvsim;
using namespace kvsim::model;

namespace {

// 2 full-attention layers, 2 KV heads of 4 dims (32 B per token per layer in bf16), gated MLP.
ModelSpec tiny_dense() {
  ModelSpec m;
  m.name = "tiny";
  m.num_layers = 2;
  m.hidden_size = 16;
  m.intermediate_size = 32;
  m.gated_mlp = true;
  m.vocab_size = 100;
  m.max_context = 64;
  m.weight_dtype = Dtype::kBf16;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.num_q_heads = 4;
  m.attention.num_kv_heads = 2;
  m.attention.head_dim = 4;
  m.layer_kinds.assign(2, LayerKind::kFullAttention);
  return m;
}

// `sliding` window layers (window 8) then `full` full layers, same geometry.
ModelSpec tiny_hybrid(int sliding, int full) {
  ModelSpec m = tiny_dense();
  m.num_layers = sliding + full;
  m.attention.sliding_window = 8;
  m.layer_kinds.assign(static_cast<std::size_t>(sliding), LayerKind::kSlidingWindow);
  m.layer_kinds.insert(m.layer_kinds.end(), static_cast<std::size_t>(full),
                       LayerKind::kFullAttention);
  return m;
}

HardwareSpec gpu(const std::string& name, Bytes cuda_memory) {
  HardwareSpec hw;
  hw.name = name;
  hw.memory_bytes = cuda_memory + kGiB;
  hw.cuda_memory_bytes = cuda_memory;
  return hw;
}

KvFormat bf16() {
  KvFormat f;
  f.dtype = Dtype::kBf16;
  return f;
}

MemoryBudgetOptions v1(double utilization, std::int64_t tokens, std::int64_t seqs) {
  MemoryBudgetOptions o;
  o.engine = MemoryEngine::kVllmV1;
  o.gpu_memory_utilization = utilization;
  o.max_num_batched_tokens = tokens;
  o.max_num_seqs = seqs;
  return o;
}

}  // namespace

TEST_CASE("vLLM V1 profile: requested − weights − max(forward, sampler) − non-torch",
          "[model][vllm]") {
  const ModelSpec m = tiny_dense();
  const HardwareSpec hw = gpu("test-gpu", kGiB);
  const VllmMemoryProfile p = vllm_v1_memory_profile(m, hw, 1, v1(0.5, 2048, 256));
  CHECK(p.total_memory_bytes == kGiB);
  CHECK(p.total_memory_measured);
  CHECK(p.requested_bytes == 536'870'912);
  CHECK(p.weights_bytes == weights_bytes_per_gpu(m, 1));
  // 2,048 tokens × 2 B × (4 × 16 + 3 × 32) and 256 rows × 100 × (2 + 4 + 4) B.
  CHECK(p.forward_peak_bytes == 655'360);
  CHECK(p.sampler_peak_bytes == 256'000);
  CHECK(p.activation_peak_bytes == 655'360);
  CHECK(p.non_torch_bytes == 192 * kMiB);
  CHECK(p.cuda_graph_bytes == 0);
  CHECK(p.fits);
  CHECK(p.available_kv_bytes == 536'870'912 - p.weights_bytes - 655'360 - 192 * kMiB);
  // More sampler rows than batched tokens: the dummy run has one row per token at most.
  const VllmMemoryProfile q = vllm_v1_memory_profile(m, hw, 1, v1(0.5, 16, 10'000));
  CHECK(q.sampler_peak_bytes == 16 * 100 * 10);
  CHECK(q.activation_peak_bytes == 16 * 100 * 10);
  // Tensor parallelism adds the NCCL buffers.
  CHECK(vllm_non_torch_bytes(2) == 312 * kMiB);
}

TEST_CASE("vLLM V1 profile: from 0.11 the sampler sorts, a peak of 38 B per bf16 logit",
          "[model][vllm]") {
  const ModelSpec m = tiny_dense();
  const HardwareSpec hw = gpu("test-gpu", kGiB);
  MemoryBudgetOptions o = v1(0.5, 2048, 1024);
  // 0.10 (the default): FlashInfer's kernel, 1,024 rows × 100 × (2 + 4 + 4) B.
  const VllmMemoryProfile flashinfer = vllm_v1_memory_profile(m, hw, 1, o);
  CHECK(flashinfer.release == kDefaultVllmRelease);
  CHECK(flashinfer.sampler_peak_bytes == 1'024'000);
  // 0.14: PyTorch's sort, 1,024 rows × 100 × (2 + 4 + 4 + 8 + 8 + 4 + 8) B, now above the
  // forward pass's 655,360 B, so the KV cache shrinks by the difference.
  o.vllm_release = VllmRelease{14, 1};
  const VllmMemoryProfile sorted = vllm_v1_memory_profile(m, hw, 1, o);
  CHECK(sorted.release.text() == "0.14.1");
  CHECK(sorted.sampler_peak_bytes == 3'891'200);
  CHECK(sorted.activation_peak_bytes == 3'891'200);
  CHECK(flashinfer.available_kv_bytes - sorted.available_kv_bytes == 3'891'200 - 1'024'000);
  // A stage before the last samples nothing in either release.
  ModelSpec first = m;
  first.holds_lm_head = false;
  CHECK(vllm_sampler_peak_bytes(first, 1024, VllmRelease{14, 1}) == 0);
}

TEST_CASE("vLLM V1 profile: the overrides and a deployment that does not fit", "[model][vllm]") {
  const ModelSpec m = tiny_dense();
  const HardwareSpec hw = gpu("test-gpu", kGiB);
  MemoryBudgetOptions o = v1(0.5, 2048, 256);
  o.kv_cache_memory_bytes = 123'456;
  const VllmMemoryProfile given = vllm_v1_memory_profile(m, hw, 1, o);
  CHECK(given.kv_cache_memory_given);
  CHECK(given.available_kv_bytes == 123'456);
  o = v1(0.5, 2048, 256);
  o.activation_reserve_bytes = 1000;
  o.runtime_overhead_bytes = 24;
  o.runtime_overhead_given = true;
  const VllmMemoryProfile fixed = vllm_v1_memory_profile(m, hw, 1, o);
  CHECK(fixed.available_kv_bytes == 536'870'912 - fixed.weights_bytes - 1024);
  const VllmMemoryProfile tiny = vllm_v1_memory_profile(m, gpu("small", 300 * kMiB), 1, o);
  CHECK(tiny.fits);
  const KvBudget none = kv_budget_per_gpu(m, gpu("small", 100 * kMiB), 1, v1(0.5, 2048, 256));
  CHECK(none.engine == MemoryEngine::kVllmV1);
  CHECK_FALSE(none.fits);
  CHECK(none.kv_budget_bytes == 0);
  CHECK(none.shortfall_bytes > 0);
  // Through kv_budget_per_gpu: the same numbers as the profile.
  const KvBudget b = kv_budget_per_gpu(m, hw, 1, v1(0.5, 2048, 256));
  const VllmMemoryProfile p = vllm_v1_memory_profile(m, hw, 1, v1(0.5, 2048, 256));
  CHECK(b.usable_bytes == p.requested_bytes);
  CHECK(b.kv_budget_bytes == p.available_kv_bytes);
  CHECK(b.activation_reserve_bytes == p.activation_peak_bytes);
  CHECK(b.runtime_overhead_bytes == p.non_torch_bytes);
}

TEST_CASE("vLLM V1 KV cache layout: one group for a full-attention model", "[model][vllm]") {
  const ModelSpec m = tiny_dense();
  // A block is 16 tokens × 32 B × 2 layers = 1,024 B.
  const VllmKvCacheLayout l = vllm_kv_cache_layout(m, bf16(), 1, 10'000, 16, 64, 2048);
  CHECK(l.num_groups == 1);
  CHECK(l.group_size == 2);
  CHECK(l.block_bytes == 1024);
  CHECK(l.num_blocks == 9);
  CHECK(l.kv_cache_tokens == 144);
  CHECK(l.blocks_per_request == 4);
  CHECK(l.max_concurrency == 2.25);
  CHECK(l.estimated_max_model_len == 64);
  const VllmKvCacheLayout small = vllm_kv_cache_layout(m, bf16(), 1, 3 * 1024, 16, 64, 2048);
  CHECK(small.estimated_max_model_len == 48);
  const VllmKvCacheLayout forced = vllm_kv_cache_layout(m, bf16(), 1, 10'000, 16, 64, 2048, 100);
  CHECK(forced.num_blocks == 100);
  CHECK(forced.kv_cache_tokens == 1600);
}

TEST_CASE("vLLM V1 KV cache layout: hybrid models share one pool over equal groups",
          "[model][vllm]") {
  // 2 window + 2 full layers: groups of 2 layers, 2 groups; a block spans 2 layers (1,024 B).
  const VllmKvCacheLayout l =
      vllm_kv_cache_layout(tiny_hybrid(2, 2), bf16(), 1, 10'000, 16, 64, 2048);
  CHECK(l.num_groups == 2);
  CHECK(l.group_size == 2);
  CHECK(l.block_bytes == 1024);
  CHECK(l.num_blocks == 9);
  CHECK(l.kv_cache_tokens == 4 * 16);  // 9 / 2 groups × 16
  // Full: 64 / 16 = 4 blocks; window: min(8 − 1 + 2048, 64) = 64 tokens → 4 + 1 blocks.
  CHECK(l.blocks_per_request == 9);
  // With 4 batched tokens a window layer needs min(7 + 4, 64) = 11 tokens → 1 + 1 blocks.
  CHECK(vllm_kv_cache_layout(tiny_hybrid(2, 2), bf16(), 1, 10'000, 16, 64, 4).blocks_per_request ==
        6);
  // 6 window + 2 full: group size 2, 3 window groups + 1 full group.
  const VllmKvCacheLayout g = vllm_kv_cache_layout(tiny_hybrid(6, 2), bf16(), 1, 10'000, 16, 64, 4);
  CHECK(g.num_groups == 4);
  CHECK(g.group_size == 2);
  CHECK(g.kv_cache_tokens == 9 / 4 * 16);
  CHECK(g.blocks_per_request == 3 * 2 + 4);
}

TEST_CASE("vllm serve's V1 defaults by GPU and the three log lines", "[model][vllm]") {
  CHECK(vllm_v1_serve_defaults(gpu("h100-sxm", 79 * kGiB)).max_num_batched_tokens == 8192);
  CHECK(vllm_v1_serve_defaults(gpu("h100-sxm", 79 * kGiB)).max_num_seqs == 1024);
  CHECK(vllm_v1_serve_defaults(gpu("a100-80gb", 79 * kGiB)).max_num_batched_tokens == 2048);
  CHECK(vllm_v1_serve_defaults(gpu("l4", 22 * kGiB)).max_num_seqs == 256);
  HardwareSpec nvml_only;
  nvml_only.memory_bytes = 24 * kGiB;
  CHECK(cuda_total_memory_bytes(nvml_only) == 24 * kGiB - kDefaultCudaReservedBytes);
  CHECK_FALSE(cuda_total_memory_measured(nvml_only));
  CHECK(vllm_available_line(4 * kGiB + kGiB / 4) == "Available KV cache memory: 4.25 GiB");
  CHECK(vllm_cache_size_line(34656) == "GPU KV cache size: 34,656 tokens");
  CHECK(vllm_concurrency_line(32768, 1.0576) ==
        "Maximum concurrency for 32,768 tokens per request: 1.06x");
}

TEST_CASE("vLLM's MXFP4 MoE kernels pad each rank's experts by GPU generation",
          "[model][vllm][weights]") {
  // gpt-oss-120b's expert geometry: 36 MoE layers of 128 experts, hidden and expert width 2880,
  // gated, with biases, experts in MXFP4 (4-bit, one 8-bit scale per 32).
  ModelSpec m = tiny_dense();
  m.num_layers = 36;
  m.hidden_size = 2880;
  m.attention.num_q_heads = 64;
  m.attention.num_kv_heads = 8;
  m.attention.head_dim = 64;
  m.layer_kinds.assign(36, LayerKind::kFullAttention);
  m.mlp_bias = true;
  m.moe.num_experts = 128;
  m.moe.experts_per_token = 4;
  m.moe.expert_intermediate_size = 2880;
  m.moe.has_expert_dtype = true;
  m.moe.expert_dtype = Dtype::kFp4;
  m.moe.expert_scale_group_size = 32;

  HardwareSpec a100 = gpu("a100-80gb", 80 * kGiB);
  a100.compute_capability = 8.0;
  HardwareSpec h100 = a100;
  h100.compute_capability = 9.0;
  HardwareSpec b200 = a100;
  b200.compute_capability = 10.0;
  HardwareSpec unknown = a100;
  unknown.compute_capability = 0;
  CHECK(vllm_expert_padding(m, a100) == ExpertPadding{256, 128});  // Marlin
  CHECK(vllm_expert_padding(m, h100) == ExpertPadding{1, 64});     // Triton kernels
  CHECK(vllm_expert_padding(m, b200) == ExpertPadding{256, 256});  // FlashInfer
  CHECK(vllm_expert_padding(m, unknown) == ExpertPadding{});
  CHECK(vllm_expert_padding(tiny_dense(), a100) == ExpertPadding{});  // not MXFP4 experts

  // TP 4 on Marlin: each rank's experts are 3072 × 768 instead of 2880 × 720. Per layer,
  // 128 × 3 × (3072·768 − 2880·720) = 109,707,264 more elements: 54,853,632 B of 4-bit values,
  // 3,428,352 B of scales, and bf16 biases 128 × (2·48 + 192) × 2 = 73,728 B.
  const Bytes padded = weights_bytes_per_gpu(m, 4, vllm_expert_padding(m, a100));
  CHECK(padded - weights_bytes_per_gpu(m, 4) == 36 * (54'853'632 + 3'428'352 + 73'728));
  // Triton on Hopper pads only the width, 720 to 768: per layer 128 × 3 × 2880 × 48 elements,
  // 26,542,080 B of values, 1,658,880 B of scales and 128 × 2 × 48 × 2 = 24,576 B of biases.
  CHECK(weights_bytes_per_gpu(m, 4, vllm_expert_padding(m, h100)) - weights_bytes_per_gpu(m, 4) ==
        36 * (26'542'080 + 1'658'880 + 24'576));
  // TP 1 on Hopper: 2880 is a multiple of 64 too.
  CHECK(weights_bytes_per_gpu(m, 1, vllm_expert_padding(m, h100)) == weights_bytes(m));
  // The profile counts the padding as weights.
  const VllmMemoryProfile p = vllm_v1_memory_profile(m, a100, 4, v1(0.8, 2048, 256));
  CHECK(p.weights_bytes == padded);
  CHECK(p.expert_padding_bytes == 36 * (54'853'632 + 3'428'352 + 73'728));
}

namespace {

// Qwen3.5-27B's text model (public config): 64 layers, every 4th full attention (4 KV heads of
// 256), 48 gated DeltaNet layers (16 key / 48 value heads of 128, conv 4, fp32 recurrent state).
ModelSpec qwen35_27b_shape() {
  ModelSpec m;
  m.name = "qwen3.5-27b";
  m.num_layers = 64;
  m.hidden_size = 5120;
  m.intermediate_size = 17408;
  m.vocab_size = 248320;
  m.max_context = 262144;
  m.weight_dtype = Dtype::kBf16;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.num_q_heads = 24;
  m.attention.num_kv_heads = 4;
  m.attention.head_dim = 256;
  m.attention.output_gate = true;
  m.gdn = {16, 48, 128, 128, 4, true, Dtype::kFp32};
  for (int i = 0; i < 64; ++i) {
    const bool full = (i + 1) % 4 == 0;
    m.layer_kinds.push_back(full ? LayerKind::kFullAttention : LayerKind::kNoKvCache);
    m.block_kinds.push_back(full ? BlockKind::kAttentionMlp : BlockKind::kLinearAttentionMlp);
  }
  return m;
}

}  // namespace

TEST_CASE("vLLM V1 hybrid layout: the attention page grows to hold a layer's state",
          "[model][vllm]") {
  const ModelSpec m = qwen35_27b_shape();
  // A DeltaNet layer's state: conv 3 × (2·16·128 + 48·128) bf16 + 48 × 128 × 128 fp32.
  const Bytes state = 3 * 10240 * 2 + 48 * 128 * 128 * 4;  // 3,207,168 B
  CHECK(ssm_state_bytes_per_sequence(m, 1) == 48 * state);
  // One full layer holds 2 × 4 × 256 × 2 = 4,096 B per token: 16 × ceil(state / 65,536) = 784.
  CHECK(vllm_hybrid_block_size(m, bf16(), 1, 16) == 784);
  CHECK(vllm_hybrid_block_size(m, bf16(), 1, 1024) == 1024);  // a larger block is kept
  CHECK(vllm_hybrid_block_size(tiny_dense(), bf16(), 1, 16) == 16);
  // Groups of 16 layers: 1 attention + 3 state groups; a request holds ceil(32,768 / 784) = 42
  // attention blocks and one block per state group. With the 1,487 blocks of a vLLM 0.19 run
  // (Qwen3.5-27B, H20, --max-model-len 32768) its two log lines are reproduced: "GPU KV cache
  // size: 290,864 tokens" (1,487 // 4 × 784) and "Maximum concurrency ...: 33.04x" (1,487 / 45).
  const VllmKvCacheLayout l = vllm_kv_cache_layout(m, bf16(), 1, 0, 16, 32768, 2048, 1487);
  CHECK(l.block_size == 784);
  CHECK(l.group_size == 16);
  CHECK(l.num_groups == 4);
  CHECK(l.state_groups == 3);
  CHECK(l.state_page_bytes == state);
  CHECK(l.block_bytes == 784ULL * 4096 * 16);
  CHECK(l.blocks_per_request == 45);
  CHECK(l.kv_cache_tokens == 290'864);
  CHECK(vllm_cache_size_line(l.kv_cache_tokens) == "GPU KV cache size: 290,864 tokens");
  CHECK(vllm_concurrency_line(32768, l.max_concurrency) ==
        "Maximum concurrency for 32,768 tokens per request: 33.04x");
  // From memory: num_blocks = available / block bytes.
  const VllmKvCacheLayout from_bytes =
      vllm_kv_cache_layout(m, bf16(), 1, 100 * l.block_bytes + 1, 16, 32768, 2048);
  CHECK(from_bytes.num_blocks == 100);
}
