#include "model/vllm_memory.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/assert.h"
#include "common/format.h"
#include "common/int_math.h"
#include "model/weights.h"

namespace kvsim::model {
namespace {

std::uint64_t u64(std::int64_t v) {
  KVSIM_ASSERT(v >= 0, "negative count in vLLM memory math");
  return static_cast<std::uint64_t>(v);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Blocks one request of n tokens needs in a group of `kind` at vLLM's worst case.
std::int64_t request_blocks(const KvGroup& g, std::int64_t n, std::int64_t block_size,
                            std::int64_t max_num_batched_tokens) {
  if (g.kind == LayerKind::kSlidingWindow) {
    const std::int64_t tokens = std::min(g.window_tokens - 1 + max_num_batched_tokens, n);
    return ceil_div(tokens, block_size) + 1;
  }
  return ceil_div(n, block_size);
}

// vLLM's attention-kernel block alignment for the hybrid page rule (FlashAttention: 16 tokens).
constexpr std::int64_t kVllmHybridBlockAlignment = 16;

// The block size vLLM forces for a sparse-attention MLA model (FlashMLA sparse, its indexer).
constexpr std::int64_t kVllmSparseMlaBlockSize = 64;

}  // namespace

std::int64_t vllm_hybrid_block_size(const ModelSpec& model, const KvFormat& format, std::int64_t tp,
                                    std::int64_t block_size) {
  if (model.attention.indexer.enabled()) return kVllmSparseMlaBlockSize;
  const Bytes state = state_bytes_per_layer(model, tp);
  if (state == 0) return block_size;
  const std::vector<KvGroup> kinds = kv_groups(model, format, tp);
  if (kinds.empty()) return block_size;
  const Bytes per_token = kinds.front().bytes_per_token_per_layer;
  for (const KvGroup& g : kinds) {
    if (g.bytes_per_token_per_layer != per_token) return block_size;
  }
  const std::int64_t align = kVllmHybridBlockAlignment;
  const auto aligned = static_cast<std::int64_t>(ceil_div(state, u64(align) * per_token)) * align;
  return std::max(block_size, aligned);
}

Bytes cuda_total_memory_bytes(const HardwareSpec& hardware) {
  if (hardware.cuda_memory_bytes > 0) return hardware.cuda_memory_bytes;
  return hardware.memory_bytes > kDefaultCudaReservedBytes
             ? hardware.memory_bytes - kDefaultCudaReservedBytes
             : hardware.memory_bytes;
}

bool cuda_total_memory_measured(const HardwareSpec& hardware) {
  return hardware.cuda_memory_bytes > 0;
}

VllmSchedulerDefaults vllm_v1_serve_defaults(const HardwareSpec& hardware) {
  const bool a100 = lower(hardware.name).find("a100") != std::string::npos ||
                    lower(hardware.display_name).find("a100") != std::string::npos;
  if (cuda_total_memory_bytes(hardware) >= 70 * kGiB && !a100) return {8192, 1024};
  return {2048, 256};
}

Bytes vllm_forward_peak_bytes(const ModelSpec& model, std::int64_t tp, std::int64_t tokens) {
  return default_activation_reserve_bytes(model, tp, tokens, 0);
}

Bytes vllm_sampler_peak_bytes(const ModelSpec& model, std::int64_t sequences,
                              const VllmRelease& release) {
  const Bytes act_bytes = u64(bits_per_element(activation_dtype(model))) / 8;
  if (!model.holds_lm_head) return 0;  // a pipeline stage before the last samples nothing
  const Bytes per_logit =
      vllm_sampler_sorts(release) ? sort_sampler_bytes_per_logit(model) : act_bytes + 4 + 4;
  return u64(sequences) * u64(model.vocab_size) * per_logit;
}

Bytes vllm_non_torch_bytes(std::int64_t tp) {
  return kVllmV1NonTorchBytes + (tp > 1 ? kVllmV1NcclBytes : 0);
}

VllmKvCacheLayout vllm_kv_cache_layout(const ModelSpec& model, const KvFormat& format,
                                       std::int64_t tp, Bytes available_bytes,
                                       std::int64_t block_size, std::int64_t max_model_len,
                                       std::int64_t max_num_batched_tokens,
                                       std::optional<std::int64_t> num_gpu_blocks_override) {
  KVSIM_ASSERT(block_size >= 1 && max_model_len >= 1 && max_num_batched_tokens >= 1,
               "vllm_kv_cache_layout: bad arguments");
  const std::vector<KvGroup> kinds = kv_groups(model, format, tp);
  KVSIM_ASSERT(!kinds.empty(), "vllm_kv_cache_layout: a model without KV layers");
  VllmKvCacheLayout l;
  block_size = vllm_hybrid_block_size(model, format, tp, block_size);
  l.block_size = block_size;
  l.state_page_bytes = state_bytes_per_layer(model, tp);
  // vLLM's groups: each attention type cut into chunks of group_size layers.
  struct VllmGroup {
    const KvGroup* kind;
  };
  std::vector<VllmGroup> groups;
  bool uniform = true;
  std::int64_t group_size = kinds.front().num_layers;
  for (const KvGroup& g : kinds) {
    uniform = uniform && g.bytes_per_token_per_layer == kinds.front().bytes_per_token_per_layer;
    group_size = std::min(group_size, g.num_layers);
  }
  // Stateful layers share the pool when its pages are uniform (their state then fits one,
  // vllm_hybrid_block_size); they count toward the group size.
  const std::int64_t stateful = uniform && l.state_page_bytes > 0 ? stateful_layers(model) : 0;
  if (stateful > 0) group_size = std::min(group_size, stateful);
  if (uniform) {
    for (const KvGroup& g : kinds) {
      for (std::int64_t i = 0; i < ceil_div(g.num_layers, group_size); ++i) groups.push_back({&g});
    }
    l.state_groups = stateful > 0 ? ceil_div(stateful, group_size) : 0;
    l.group_size = group_size;
    l.block_bytes = u64(block_size) * kinds.front().bytes_per_token_per_layer * u64(group_size);
  } else {
    // Pages of different sizes: one pool whose block spans every layer (vLLM would pad the
    // pages to one size; this bound is exact when the window groups hold full blocks).
    for (const KvGroup& g : kinds) groups.push_back({&g});
    l.group_size = model.num_layers;
    Bytes per_token = 0;
    for (const KvGroup& g : kinds) per_token += g.bytes_per_token;
    l.block_bytes = u64(block_size) * per_token;
  }
  l.uniform_page = uniform;
  l.num_groups = uniform ? static_cast<std::int64_t>(groups.size()) + l.state_groups : 1;
  l.num_blocks = static_cast<std::int64_t>(available_bytes / l.block_bytes);
  if (num_gpu_blocks_override) l.num_blocks = *num_gpu_blocks_override;
  l.kv_cache_tokens = l.num_blocks / l.num_groups * block_size;
  const auto blocks_for = [&](std::int64_t n) {
    std::int64_t blocks = l.state_groups;  // one state block per stateful group
    if (uniform) {
      for (const VllmGroup& g : groups) {
        blocks += request_blocks(*g.kind, n, block_size, max_num_batched_tokens);
      }
    } else {
      blocks = ceil_div(n, block_size);
    }
    return blocks;
  };
  l.max_model_len = max_model_len;
  l.blocks_per_request = blocks_for(max_model_len);
  l.max_concurrency = static_cast<double>(l.num_blocks) / static_cast<double>(l.blocks_per_request);
  // The longest request the blocks hold (vLLM's "estimated maximum model length").
  std::int64_t lo = 0, hi = max_model_len;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (blocks_for(mid) <= l.num_blocks) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  l.estimated_max_model_len = lo;
  return l;
}

ExpertPadding vllm_expert_padding(const ModelSpec& model, const HardwareSpec& hardware) {
  const MoeSpec& e = model.moe;
  const bool mxfp4 = e.enabled() && e.has_expert_dtype && e.expert_dtype == Dtype::kFp4 &&
                     e.expert_scale_group_size == 32;
  if (!mxfp4) return {};
  if (hardware.vendor == "amd") return {.hidden_align = 1, .intermediate_align = 128};
  const double cc = hardware.compute_capability;
  if (cc <= 0) return {};
  if (cc < 9.0) return {.hidden_align = 256, .intermediate_align = 128};  // Marlin
  if (cc < 10.0) return {.hidden_align = 1, .intermediate_align = 64};    // Triton kernels
  return {.hidden_align = 256, .intermediate_align = 256};                // FlashInfer
}

VllmMemoryProfile vllm_v1_memory_profile(const ModelSpec& model, const HardwareSpec& hardware,
                                         std::int64_t tp, const MemoryBudgetOptions& options) {
  KVSIM_ASSERT(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1,
               "vllm_v1_memory_profile: utilization outside (0, 1]");
  const VllmSchedulerDefaults defaults = vllm_v1_serve_defaults(hardware);
  VllmMemoryProfile p;
  p.max_num_batched_tokens = options.max_num_batched_tokens > 0 ? options.max_num_batched_tokens
                                                                : defaults.max_num_batched_tokens;
  p.max_num_seqs = options.max_num_seqs > 0 ? options.max_num_seqs : defaults.max_num_seqs;
  p.total_memory_bytes = cuda_total_memory_bytes(hardware);
  p.total_memory_measured = cuda_total_memory_measured(hardware);
  p.gpu_memory_utilization = options.gpu_memory_utilization;
  p.requested_bytes =
      static_cast<Bytes>(std::floor(static_cast<long double>(p.total_memory_bytes) *
                                    static_cast<long double>(options.gpu_memory_utilization)));
  const Bytes checkpoint_bytes = weights_bytes_per_gpu(model, tp);
  p.weights_bytes = weights_bytes_per_gpu(model, tp, vllm_expert_padding(model, hardware));
  p.expert_padding_bytes = p.weights_bytes - checkpoint_bytes;
  p.forward_peak_bytes = vllm_forward_peak_bytes(model, tp, p.max_num_batched_tokens);
  // The dummy run schedules min(max_num_seqs, tokens) requests, one logit row each.
  p.release = options.vllm_release;
  p.sampler_peak_bytes =
      vllm_sampler_peak_bytes(model, std::min(p.max_num_seqs, p.max_num_batched_tokens), p.release);
  p.activation_peak_bytes = options.activation_reserve_bytes
                                ? *options.activation_reserve_bytes
                                : std::max(p.forward_peak_bytes, p.sampler_peak_bytes);
  p.non_torch_bytes =
      options.runtime_overhead_given ? options.runtime_overhead_bytes : vllm_non_torch_bytes(tp);
  p.cuda_graph_bytes = 0;
  p.non_kv_bytes =
      p.weights_bytes + p.activation_peak_bytes + p.non_torch_bytes + p.cuda_graph_bytes;
  if (options.kv_cache_memory_bytes) {
    p.kv_cache_memory_given = true;
    p.fits = *options.kv_cache_memory_bytes > 0;
    p.available_kv_bytes = *options.kv_cache_memory_bytes;
    return p;
  }
  p.fits = p.requested_bytes > p.non_kv_bytes;
  p.available_kv_bytes = p.fits ? p.requested_bytes - p.non_kv_bytes : 0;
  p.shortfall_bytes = p.fits ? 0 : p.non_kv_bytes - p.requested_bytes;
  return p;
}

KvBudget vllm_v1_kv_budget(const ModelSpec& model, const HardwareSpec& hardware, std::int64_t tp,
                           const MemoryBudgetOptions& options) {
  const VllmMemoryProfile p = vllm_v1_memory_profile(model, hardware, tp, options);
  KvBudget b;
  b.engine = MemoryEngine::kVllmV1;
  b.memory_bytes = p.total_memory_bytes;
  b.gpu_memory_utilization = p.gpu_memory_utilization;
  b.usable_bytes = p.requested_bytes;
  b.weights_bytes = p.weights_bytes;
  b.activation_reserve_bytes = p.activation_peak_bytes;
  b.runtime_overhead_bytes = p.non_torch_bytes + p.cuda_graph_bytes;
  b.fits = p.fits;
  b.kv_budget_bytes = p.available_kv_bytes;
  if (b.fits && options.kv_cache_bytes_override)
    b.kv_budget_bytes = *options.kv_cache_bytes_override;
  b.shortfall_bytes = p.shortfall_bytes;
  return b;
}

std::string vllm_available_line(Bytes available_bytes) {
  return "Available KV cache memory: " +
         fixed(static_cast<double>(available_bytes) / static_cast<double>(kGiB), 2) + " GiB";
}

std::string vllm_cache_size_line(std::int64_t tokens) {
  return "GPU KV cache size: " + with_commas(tokens) + " tokens";
}

std::string vllm_concurrency_line(std::int64_t max_model_len, double concurrency) {
  return "Maximum concurrency for " + with_commas(max_model_len) +
         " tokens per request: " + fixed(concurrency, 2) + "x";
}

}  // namespace kvsim::model
