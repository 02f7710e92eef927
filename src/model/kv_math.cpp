#include "model/kv_math.h"

#include <algorithm>
#include <cmath>

#include "common/assert.h"
#include "common/checked_math.h"
#include "common/int_math.h"
#include "common/strings.h"
#include "model/vllm_memory.h"
#include "model/weights.h"

namespace kvsim::model {
namespace {

std::uint64_t u64(std::int64_t v) {
  KVSIM_ASSERT(v >= 0, "negative count in KV math");
  return static_cast<std::uint64_t>(v);
}

// Bytes of one stored row of `num_heads` heads × `dim` elements: the elements, then their scales,
// each rounded up to a whole byte.
Bytes row_bytes(std::int64_t num_heads, std::int64_t dim, const KvFormat& format) {
  Bytes bytes = bytes_for_elements(u64(num_heads) * u64(dim), format.dtype);
  if (format.scale_group_size > 0) {
    const std::int64_t groups = num_heads * ceil_div(dim, format.scale_group_size);
    bytes += bytes_for_elements(u64(groups), format.scale_dtype);
  }
  return bytes;
}

std::string divisibility_problem(const char* what, std::int64_t heads, std::int64_t tp) {
  if (tp <= heads) {
    if (heads % tp == 0) return {};
    return "the model's " + std::to_string(heads) + " " + what + " cannot be split evenly over " +
           std::to_string(tp) + " GPUs (expected a divisor of " + std::to_string(heads) + ")";
  }
  if (tp % heads == 0) return {};
  return "with " + std::to_string(tp) + " GPUs the model's " + std::to_string(heads) + " " + what +
         " cannot be replicated evenly (expected a multiple of " + std::to_string(heads) + ")";
}

}  // namespace

std::vector<std::string> kv_cache_dtype_names() {
  std::vector<std::string> names{"auto"};
  for (const auto& n : dtype_names()) names.push_back(n);
  return names;
}

Dtype activation_dtype(const ModelSpec& model) {
  return activation_dtype(model.weight_dtype);
}

Dtype activation_dtype(Dtype weight) {
  switch (weight) {
    case Dtype::kFp16:
    case Dtype::kBf16:
      return weight;
    case Dtype::kFp32:
      return Dtype::kFp16;
    default:
      return Dtype::kBf16;
  }
}

std::optional<KvFormat> kv_format_from_name(const ModelSpec& model, std::string_view name,
                                            std::int64_t scale_group_size) {
  KvFormat format;
  if (to_lower(trim(name)) == "auto") {
    // vLLM serves a sparse-attention MLA model (DeepSeek-V3.2) with its fp8_ds_mla cache unless
    // asked for bfloat16 (its DeepseekV32ForCausalLM config hook).
    format.dtype = model.attention.indexer.enabled() ? Dtype::kFp8 : activation_dtype(model);
  } else {
    const auto dtype = parse_dtype(name);
    if (!dtype) return std::nullopt;
    format.dtype = *dtype;
  }
  format.scale_group_size = scale_group_size > 0 ? scale_group_size : 0;
  format.scale_dtype = Dtype::kFp16;
  return format;
}

std::string kv_format_name(const KvFormat& format) {
  std::string s(dtype_name(format.dtype));
  if (format.scale_group_size > 0) {
    s += "+" + std::string(dtype_name(format.scale_dtype)) + "/" +
         std::to_string(format.scale_group_size);
  }
  return s;
}

std::string tensor_parallel_problem(const ModelSpec& model, std::int64_t tp) {
  if (tp < 1) return "expected a positive integer, got " + std::to_string(tp);
  const AttentionSpec& a = model.attention;
  if (a.num_q_heads % tp != 0) {
    return "the model's " + std::to_string(a.num_q_heads) +
           " query heads cannot be split evenly over " + std::to_string(tp) +
           " GPUs (expected a divisor of " + std::to_string(a.num_q_heads) + ")";
  }
  if (a.kind != AttentionKind::kMla) {
    if (auto p = divisibility_problem("KV heads", a.num_kv_heads, tp); !p.empty()) return p;
    if (a.full_layer_num_kv_heads > 0) {
      if (auto p = divisibility_problem("full-attention KV heads", a.full_layer_num_kv_heads, tp);
          !p.empty()) {
        return p;
      }
    }
  }
  if (model.ssm.enabled()) {
    if (model.ssm.num_heads % tp != 0) {
      return "the model's " + std::to_string(model.ssm.num_heads) +
             " Mamba heads cannot be split evenly over " + std::to_string(tp) + " GPUs";
    }
    if (auto p = divisibility_problem("Mamba groups", model.ssm.num_groups, tp); !p.empty()) {
      return p;
    }
  }
  if (model.gdn.enabled()) {
    for (const auto& [what, heads] :
         {std::pair<const char*, std::int64_t>{"linear-attention key heads",
                                               model.gdn.num_key_heads},
          {"linear-attention value heads", model.gdn.num_value_heads}}) {
      if (heads % tp != 0) {
        return "the model's " + std::to_string(heads) + " " + what +
               " cannot be split evenly over " + std::to_string(tp) + " GPUs";
      }
    }
  }
  return {};
}

Bytes mla_latent_row_bytes(const AttentionSpec& a, const KvFormat& format) {
  KVSIM_ASSERT(a.kind == AttentionKind::kMla, "mla_latent_row_bytes: not an MLA model");
  if (uses_fp8_ds_mla(a, format)) {
    // vLLM's fp8_ds_mla: the latent in fp8 with one fp32 scale per 128 elements, the rope part
    // kept in 16 bits (512 + 16 + 128 = 656 bytes for DeepSeek-V3.2).
    return u64(a.mla.kv_lora_rank) + 4 * u64(ceil_div(a.mla.kv_lora_rank, kSparseMlaScaleGroup)) +
           2 * u64(a.mla.qk_rope_head_dim);
  }
  return row_bytes(1, a.mla.kv_lora_rank + a.mla.qk_rope_head_dim, format);
}

bool uses_fp8_ds_mla(const AttentionSpec& a, const KvFormat& format) {
  return a.kind == AttentionKind::kMla && a.indexer.enabled() && format.dtype == Dtype::kFp8;
}

Bytes indexer_key_row_bytes(const SparseIndexerSpec& indexer) {
  return u64(indexer.head_dim) + 4 * u64(ceil_div(indexer.head_dim, kSparseMlaScaleGroup));
}

LayerKvGeometry layer_kv_geometry(const ModelSpec& model, LayerKind kind) {
  const AttentionSpec& a = model.attention;
  LayerKvGeometry g;
  g.kv_heads = a.num_kv_heads;
  g.k_dim = a.head_dim;
  g.v_dim = a.v_head_dim > 0 ? a.v_head_dim : a.head_dim;
  if (kind == LayerKind::kFullAttention) {
    if (a.full_layer_num_kv_heads > 0) g.kv_heads = a.full_layer_num_kv_heads;
    if (a.full_layer_head_dim > 0) {
      g.k_dim = a.full_layer_head_dim;
      g.v_dim = a.full_layer_head_dim;
    }
    g.stores_v = !a.k_eq_v;
  }
  return g;
}

std::int64_t kv_heads_per_rank(std::int64_t num_kv_heads, std::int64_t tp) {
  KVSIM_ASSERT(tp >= 1 && num_kv_heads >= 1, "kv_heads_per_rank: bad arguments");
  return tp <= num_kv_heads ? num_kv_heads / tp : 1;
}

Bytes kv_bytes_per_token_layer(const ModelSpec& model, std::int64_t layer, const KvFormat& format,
                               std::int64_t tp) {
  KVSIM_ASSERT(layer >= 0 && layer < static_cast<std::int64_t>(model.layer_kinds.size()),
               "kv_bytes_per_token_layer: layer out of range");
  KVSIM_ASSERT(tp >= 1, "kv_bytes_per_token_layer: tp < 1");
  const LayerKind kind = model.layer_kinds[static_cast<std::size_t>(layer)];
  if (kind == LayerKind::kNoKvCache) return 0;
  const AttentionSpec& a = model.attention;
  if (a.kind == AttentionKind::kMla) {
    // One latent per token, shared by all heads and stored whole on every rank; with sparse
    // attention also the indexer's key.
    Bytes bytes = mla_latent_row_bytes(a, format);
    if (a.indexer.enabled()) bytes += indexer_key_row_bytes(a.indexer);
    return bytes;
  }
  const LayerKvGeometry g = layer_kv_geometry(model, kind);
  const std::int64_t heads = kv_heads_per_rank(g.kv_heads, tp);
  Bytes bytes = row_bytes(heads, g.k_dim, format);
  if (g.stores_v) bytes += row_bytes(heads, g.v_dim, format);
  return bytes;
}

std::vector<Bytes> kv_bytes_per_token_per_layer(const ModelSpec& model, const KvFormat& format,
                                                std::int64_t tp) {
  std::vector<Bytes> out;
  out.reserve(model.layer_kinds.size());
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(model.layer_kinds.size()); ++i) {
    out.push_back(kv_bytes_per_token_layer(model, i, format, tp));
  }
  return out;
}

Bytes kv_bytes_per_token(const ModelSpec& model, const KvFormat& format, std::int64_t tp) {
  Bytes total = 0;
  for (Bytes b : kv_bytes_per_token_per_layer(model, format, tp)) {
    total = checked_add(total, b, "the KV bytes per token");
  }
  return total;
}

std::int64_t cached_tokens(LayerKind kind, std::int64_t window, std::int64_t n) {
  KVSIM_ASSERT(n >= 0, "cached_tokens: negative length");
  switch (kind) {
    case LayerKind::kFullAttention:
      return n;
    case LayerKind::kSlidingWindow:
      return std::min(n, window);
    case LayerKind::kNoKvCache:
      return 0;
  }
  return 0;
}

Bytes kv_bytes_for_sequence(const ModelSpec& model, const KvFormat& format, std::int64_t n,
                            std::int64_t tp) {
  Bytes total = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(model.layer_kinds.size()); ++i) {
    const LayerKind kind = model.layer_kinds[static_cast<std::size_t>(i)];
    total = checked_add(total,
                        checked_mul(kv_bytes_per_token_layer(model, i, format, tp),
                                    u64(cached_tokens(kind, model.attention.sliding_window, n)),
                                    "the KV bytes of one sequence"),
                        "the KV bytes of one sequence");
  }
  return total;
}

namespace {

std::int64_t count_blocks(const ModelSpec& model, BlockKind kind) {
  std::int64_t n = 0;
  for (BlockKind b : model.block_kinds) n += b == kind ? 1 : 0;
  return n;
}

// The Mamba-2 state of one sequence over all kMamba blocks, on one of `tp` GPUs.
Bytes mamba_state_bytes(const ModelSpec& model, std::int64_t tp) {
  const SsmSpec& s = model.ssm;
  const std::int64_t heads = std::max<std::int64_t>(1, s.num_heads / tp);
  const std::int64_t groups = kv_heads_per_rank(s.num_groups, tp);
  const char* what = "the SSM state of one sequence";
  const std::uint64_t conv = checked_product(
      {u64(s.conv_kernel - 1),
       checked_add(checked_product({u64(heads), u64(s.head_dim)}, what),
                   checked_product({2, u64(groups), u64(s.state_size)}, what), what)},
      what);
  const std::uint64_t state =
      checked_product({u64(heads), u64(s.head_dim), u64(s.state_size)}, what);
  const Dtype dtype = activation_dtype(model);
  const Bytes per_layer =
      checked_add(bytes_for_elements(conv, dtype),
                  bytes_for_elements(state, s.has_state_dtype ? s.state_dtype : dtype), what);
  return checked_mul(per_layer, u64(count_blocks(model, BlockKind::kMamba)), what);
}

// The gated DeltaNet state of one sequence over all kLinearAttentionMlp blocks, on one of `tp`
// GPUs (vLLM's gated_delta_net_state_shape: heads split over the GPUs).
Bytes gdn_state_bytes(const ModelSpec& model, std::int64_t tp) {
  const GatedDeltaNetSpec& g = model.gdn;
  const char* what = "the linear-attention state of one sequence";
  const std::uint64_t conv_width = checked_add(
      checked_product({2, u64(ceil_div(g.num_key_heads, tp)), u64(g.key_head_dim)}, what),
      checked_product({u64(ceil_div(g.num_value_heads, tp)), u64(g.value_head_dim)}, what), what);
  const std::uint64_t conv = checked_mul(u64(g.conv_kernel - 1), conv_width, what);
  const std::uint64_t state = checked_product(
      {u64(ceil_div(g.num_value_heads, tp)), u64(g.key_head_dim), u64(g.value_head_dim)}, what);
  const Dtype act = activation_dtype(model);
  const Bytes per_layer =
      checked_add(bytes_for_elements(conv, act),
                  bytes_for_elements(state, g.has_state_dtype ? g.state_dtype : act), what);
  return checked_mul(per_layer, u64(count_blocks(model, BlockKind::kLinearAttentionMlp)), what);
}

}  // namespace

std::int64_t stateful_layers(const ModelSpec& model) {
  return count_blocks(model, BlockKind::kMamba) +
         count_blocks(model, BlockKind::kLinearAttentionMlp);
}

Bytes state_bytes_per_layer(const ModelSpec& model, std::int64_t tp) {
  const std::int64_t n = stateful_layers(model);
  return n > 0 ? ssm_state_bytes_per_sequence(model, tp) / u64(n) : 0;
}

Bytes ssm_state_bytes_per_sequence(const ModelSpec& model, std::int64_t tp) {
  KVSIM_ASSERT(tp >= 1, "ssm_state_bytes_per_sequence: tp < 1");
  if (!model.ssm.enabled() && !model.gdn.enabled()) {
    return (model.ssm_state_bytes_per_sequence + u64(tp) - 1) / u64(tp);
  }
  Bytes total = 0;
  if (model.ssm.enabled()) total = mamba_state_bytes(model, tp);
  if (model.gdn.enabled()) {
    total = checked_add(total, gdn_state_bytes(model, tp), "the state of one sequence");
  }
  return total;
}

std::vector<KvGroup> kv_groups(const ModelSpec& model, const KvFormat& format, std::int64_t tp) {
  std::vector<KvGroup> groups;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(model.layer_kinds.size()); ++i) {
    const LayerKind kind = model.layer_kinds[static_cast<std::size_t>(i)];
    if (kind == LayerKind::kNoKvCache) continue;
    const Bytes per_layer = kv_bytes_per_token_layer(model, i, format, tp);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const KvGroup& g) {
      return g.kind == kind && g.bytes_per_token_per_layer == per_layer;
    });
    if (it == groups.end()) {
      KvGroup g;
      g.kind = kind;
      g.bytes_per_token_per_layer = per_layer;
      g.window_tokens = kind == LayerKind::kSlidingWindow ? model.attention.sliding_window : 0;
      groups.push_back(g);
      it = groups.end() - 1;
    }
    it->num_layers += 1;
    it->bytes_per_token += per_layer;
    it->layers.push_back(i);
  }
  return groups;
}

std::int64_t blocks_for_sequence(const KvGroup& group, std::int64_t n, std::int64_t block_size) {
  KVSIM_ASSERT(n >= 0 && block_size >= 1, "blocks_for_sequence: bad arguments");
  if (n == 0) return 0;
  if (group.kind != LayerKind::kSlidingWindow) return ceil_div(n, block_size);
  const std::int64_t first = std::max<std::int64_t>(0, n - group.window_tokens) / block_size;
  const std::int64_t last = (n - 1) / block_size;
  return last - first + 1;
}

Bytes paged_bytes_for_sequence(const std::vector<KvGroup>& groups, std::int64_t n,
                               std::int64_t block_size) {
  Bytes total = 0;
  for (const KvGroup& g : groups) {
    total = checked_add(total,
                        checked_product({u64(blocks_for_sequence(g, n, block_size)),
                                         u64(block_size), g.bytes_per_token},
                                        "the paged KV bytes of one sequence"),
                        "the paged KV bytes of one sequence");
  }
  return total;
}

Bytes sort_sampler_bytes_per_logit(const ModelSpec& model) {
  const Bytes act_bytes = u64(bits_per_element(activation_dtype(model))) / 8;
  return act_bytes + 4 + (4 + 8) + (8 + 4 + 8);
}

Bytes default_activation_reserve_bytes(const ModelSpec& model, std::int64_t tp, std::int64_t tokens,
                                       std::int64_t sequences) {
  KVSIM_ASSERT(tp >= 1, "default_activation_reserve_bytes: tp < 1");
  const int mlp_matrices_out = model.gated_mlp ? 3 : 2;
  std::int64_t mlp_width = 0;
  bool any_dense = false;
  for (std::int64_t i = 0; i < model.num_layers; ++i) {
    const BlockKind b = model.block_kind(i);
    if (b == BlockKind::kAttentionOnly || b == BlockKind::kMamba) continue;
    if (model.moe.is_moe_layer(i)) {
      const auto& m = model.moe;
      const std::int64_t shared = m.num_shared_experts * m.shared_expert_size();
      mlp_width = std::max(mlp_width, m.experts_per_token * m.expert_intermediate_size + shared);
    } else {
      any_dense = true;
    }
  }
  if (any_dense) mlp_width = std::max(mlp_width, model.intermediate_size);
  if (model.ssm.enabled()) {
    // A Mamba mixer's in_proj output is the widest activation of its block.
    const auto& s = model.ssm;
    mlp_width = std::max(
        mlp_width, 2 * s.num_heads * s.head_dim + 2 * s.num_groups * s.state_size + s.num_heads);
  }
  if (model.gdn.enabled()) {
    // A gated DeltaNet's input projections (q, k, v, the output gate z, and b, a per value head).
    const auto& g = model.gdn;
    mlp_width =
        std::max(mlp_width, 2 * g.key_width() + 2 * g.value_width() + 2 * g.num_value_heads);
  }
  const Bytes act_bytes = u64(bits_per_element(activation_dtype(model))) / 8;
  const char* what = "the activation reserve";
  const Bytes per_token = checked_mul(
      act_bytes,
      checked_add(checked_mul(4, u64(model.hidden_size), what),
                  checked_mul(u64(mlp_matrices_out), u64(ceil_div(mlp_width, tp)), what), what),
      what);
  // Logits exist only where the LM head runs (the last pipeline stage).
  const std::int64_t logit_rows = model.holds_lm_head ? sequences : 0;
  return checked_add(
      checked_mul(u64(tokens), per_token, what),
      checked_product({u64(logit_rows), u64(model.vocab_size), sort_sampler_bytes_per_logit(model)},
                      what),
      what);
}

KvBudget kv_budget_per_gpu(const ModelSpec& model, const HardwareSpec& hardware, std::int64_t tp,
                           const MemoryBudgetOptions& options) {
  KVSIM_ASSERT(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1,
               "kv_budget_per_gpu: utilization outside (0, 1]");
  if (options.engine == MemoryEngine::kVllmV1) {
    return vllm_v1_kv_budget(model, hardware, tp, options);
  }
  KvBudget b;
  b.memory_bytes = hardware.memory_bytes;
  b.gpu_memory_utilization = options.gpu_memory_utilization;
  b.usable_bytes =
      static_cast<Bytes>(std::floor(static_cast<long double>(hardware.memory_bytes) *
                                    static_cast<long double>(options.gpu_memory_utilization)));
  b.weights_bytes = weights_bytes_per_gpu(model, tp);
  b.activation_reserve_bytes =
      options.activation_reserve_bytes
          ? *options.activation_reserve_bytes
          : default_activation_reserve_bytes(
                model, tp, kDefaultActivationTokens,
                options.max_num_seqs > 0 ? options.max_num_seqs : kDefaultActivationSequences);
  b.runtime_overhead_bytes = options.runtime_overhead_bytes;
  const Bytes needed =
      checked_add(checked_add(b.weights_bytes, b.activation_reserve_bytes, "the memory needed"),
                  b.runtime_overhead_bytes, "the memory needed");
  b.fits = b.usable_bytes > needed;
  b.kv_budget_bytes = b.fits ? b.usable_bytes - needed : 0;
  b.shortfall_bytes = b.fits ? 0 : needed - b.usable_bytes;
  return b;
}

std::optional<std::int64_t> min_tensor_parallel_to_fit(const ModelSpec& model,
                                                       const HardwareSpec& hardware,
                                                       const MemoryBudgetOptions& options,
                                                       std::int64_t max_tp) {
  for (std::int64_t tp = 1; tp <= max_tp; ++tp) {
    if (!tensor_parallel_problem(model, tp).empty()) continue;
    if (kv_budget_per_gpu(model, hardware, tp, options).fits) return tp;
  }
  return std::nullopt;
}

KvCapacity kv_capacity(const ModelSpec& model, const KvFormat& format, std::int64_t tp,
                       Bytes kv_budget_bytes, std::int64_t block_size, std::int64_t context) {
  KVSIM_ASSERT(block_size >= 1 && context >= 1, "kv_capacity: bad arguments");
  KvCapacity c;
  c.bytes_per_token = kv_bytes_per_token(model, format, tp);
  KVSIM_ASSERT(c.bytes_per_token > 0, "kv_capacity: a model without KV layers");
  c.block_size = block_size;
  c.block_bytes = checked_mul(u64(block_size), c.bytes_per_token, "the bytes of one block");
  c.context = context;
  c.bytes_per_sequence =
      paged_bytes_for_sequence(kv_groups(model, format, tp), context, block_size) +
      ssm_state_bytes_per_sequence(model, tp);
  c.max_cached_tokens = static_cast<std::int64_t>(kv_budget_bytes / c.bytes_per_token);
  c.num_blocks = static_cast<std::int64_t>(kv_budget_bytes / c.block_bytes);
  c.max_concurrent_sequences = static_cast<std::int64_t>(kv_budget_bytes / c.bytes_per_sequence);
  return c;
}

KvAnalysis analyze_kv(const ModelSpec& model, const HardwareSpec* hardware, const KvQuery& query) {
  const std::int64_t tp = query.tensor_parallel_size;
  KVSIM_ASSERT(tp >= 1 && query.block_size >= 1 && query.batch >= 1 && query.context >= 0,
               "analyze_kv: bad query");
  KvAnalysis a;
  a.query = query;
  if (a.query.context == 0) a.query.context = model.max_context;
  const std::int64_t n = a.query.context;
  const KvFormat& f = query.format;
  a.bytes_per_token_per_layer = kv_bytes_per_token_per_layer(model, f, 1);
  for (Bytes b : a.bytes_per_token_per_layer) {
    a.bytes_per_token = checked_add(a.bytes_per_token, b, "the KV bytes per token");
  }
  a.bytes_per_sequence = kv_bytes_for_sequence(model, f, n, 1);
  a.total_bytes = checked_mul(u64(query.batch), a.bytes_per_sequence, "the KV bytes of the batch");
  a.num_parameters = parameter_counts(model).total();
  a.weights_bytes = weights_bytes(model);
  a.bytes_per_token_per_gpu = kv_bytes_per_token(model, f, tp);
  a.total_bytes_per_gpu = checked_mul(u64(query.batch), kv_bytes_for_sequence(model, f, n, tp),
                                      "the KV bytes of the batch");
  a.ssm_state_bytes_per_sequence = ssm_state_bytes_per_sequence(model, 1);
  a.weights_bytes_per_gpu = weights_bytes_per_gpu(model, tp);
  a.groups = kv_groups(model, f, tp);
  if (hardware != nullptr) {
    a.budget = kv_budget_per_gpu(model, *hardware, tp, query.budget);
    a.capacity = kv_capacity(model, f, tp, a.budget->kv_budget_bytes, query.block_size,
                             std::max<std::int64_t>(1, n));
  }
  return a;
}

ModelSpec with_kv_heads(const ModelSpec& model, std::int64_t kv_heads) {
  ModelSpec m = model;
  AttentionSpec& a = m.attention;
  KVSIM_ASSERT(kv_heads >= 1 && a.num_q_heads % kv_heads == 0, "with_kv_heads: bad kv_heads");
  if (a.kind == AttentionKind::kMla) {
    // The MHA form of MLA: per head a K of (nope + rope) and a V of v_head_dim elements.
    a.head_dim = a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim;
    a.v_head_dim = a.mla.v_head_dim > 0 ? a.mla.v_head_dim : a.head_dim;
    a.mla = MlaSpec{};
    a.indexer = SparseIndexerSpec{};  // dense attention over the whole K and V
  }
  a.num_kv_heads = kv_heads;
  if (a.full_layer_num_kv_heads > 0) a.full_layer_num_kv_heads = kv_heads;
  a.kind = kv_heads == a.num_q_heads ? AttentionKind::kMha
           : kv_heads == 1           ? AttentionKind::kMqa
                                     : AttentionKind::kGqa;
  return m;
}

}  // namespace kvsim::model
