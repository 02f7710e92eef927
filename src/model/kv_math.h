#pragma once
// KV-cache memory math: exact integer bytes per token, per layer, per sequence and per GPU, the
// KV groups a paged/hybrid allocator sizes its block pools from, and the KV budget of one GPU.
//
// Exactness. Element sizes are counted in bits (int4 = 4). Rounding up to a whole byte happens in
// one place only: each stored row — one token's K row, V row or MLA latent in one layer on one
// GPU, and separately that row's quantization scales — is a real tensor slice and is rounded up
// on its own (as a cache laid out [block, token, head, dim] stores it). Sums over layers, tokens,
// sequences and blocks are never rounded. For every real model (even head_dim) nothing rounds.
//
// Tensor parallelism (tp). A non-MLA layer's KV heads are split over the tp ranks; when
// tp > kv_heads each rank keeps one head, replicated on tp / kv_heads ranks (vLLM's rule). MLA's
// latent is not split: every rank stores the whole latent. Per-GPU values take `tp`; "logical"
// values (the model as a whole, as the DESIGN seed numbers are written) are the tp = 1 values.
//
// Window layers (LayerKind::kSlidingWindow) hold at most `attention.sliding_window` tokens of a
// sequence; full layers hold all of them; kNoKvCache layers hold none (SSM layers keep a fixed
// per-sequence state instead, see ssm_state_bytes_per_sequence).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.h"
#include "model/dtype.h"
#include "model/hardware_spec.h"
#include "model/model_spec.h"
#include "model/vllm_release.h"

namespace kvsim::model {

// How KV-cache elements are stored.
struct KvFormat {
  Dtype dtype = Dtype::kBf16;
  // Quantization scales: one `scale_dtype` scale per `scale_group_size` elements of one head's
  // row (groups never straddle heads; a partial last group has its own scale). 0 = no scales
  // (fp16/bf16/fp32, or fp8 with a per-tensor scale, which costs nothing per token).
  std::int64_t scale_group_size = 0;
  Dtype scale_dtype = Dtype::kFp16;
};

// "auto" plus the dtype names: the values --kv-cache-dtype accepts.
std::vector<std::string> kv_cache_dtype_names();

// The KV format for a --kv-cache-dtype value: "auto" = the model's activation type (its weight
// dtype when that is fp16/bf16; fp16 for fp32 weights, as vLLM's --dtype auto serves them; bf16
// for quantized int8/int4/fp8 weights), else the named dtype (names as parse_dtype accepts).
// `scale_group_size` > 0 adds one fp16 scale per that many elements of each head row (e.g. 64
// for a grouped int4 cache); 0 = no per-token scales. nullopt for an unknown name.
std::optional<KvFormat> kv_format_from_name(const ModelSpec& model, std::string_view name,
                                            std::int64_t scale_group_size = 0);
// The dtype "auto" resolves to for this model.
Dtype activation_dtype(const ModelSpec& model);
// The same rule for weights of type `weight`.
Dtype activation_dtype(Dtype weight);
// "bf16", "int4+fp16/64" (dtype, then scale type and group size when scaled).
std::string kv_format_name(const KvFormat& format);

// ---- Tensor parallelism ---------------------------------------------------------------------

// Empty when `tp` is a valid tensor-parallel degree for the model, else the reason (callers turn
// it into an Error naming their flag or field): tp >= 1, q_heads % tp == 0, and for non-MLA
// models either kv_heads % tp == 0 (tp <= kv_heads) or tp % kv_heads == 0 (replication); the
// same for the full-attention geometry of hybrid models and for Mamba heads and groups.
std::string tensor_parallel_problem(const ModelSpec& model, std::int64_t tp);

// KV heads one rank stores: num_kv_heads / tp when tp <= num_kv_heads, else 1. Requires tp >= 1.
std::int64_t kv_heads_per_rank(std::int64_t num_kv_heads, std::int64_t tp);

// The KV geometry of one non-MLA layer of kind `kind`: the model's heads and dims, or a full
// layer's own (full_layer_num_kv_heads / full_layer_head_dim, Gemma 4), V dropped on full layers
// when attention.k_eq_v. Shared by the KV math, the weights, the cost model and the reports.
struct LayerKvGeometry {
  std::int64_t kv_heads = 0;
  std::int64_t k_dim = 0;
  std::int64_t v_dim = 0;
  bool stores_v = true;
};
LayerKvGeometry layer_kv_geometry(const ModelSpec& model, LayerKind kind);

// ---- Per token --------------------------------------------------------------------------------

// Elements per fp32 scale in vLLM's caches of a sparse-attention MLA model: the fp8_ds_mla
// latent and the indexer's fp8 keys.
inline constexpr std::int64_t kSparseMlaScaleGroup = 128;
// Bytes of one MLA latent row (kv_lora_rank + qk_rope_head_dim) as stored: in `format`, or in
// vLLM's fp8_ds_mla layout when a sparse-attention model's cache is fp8.
Bytes mla_latent_row_bytes(const AttentionSpec& attention, const KvFormat& format);
// Whether that row is vLLM's fp8_ds_mla layout (a sparse-attention MLA model's fp8 cache).
bool uses_fp8_ds_mla(const AttentionSpec& attention, const KvFormat& format);
// Bytes of one token's key in a sparse-attention layer's indexer cache: head_dim fp8 values and
// an fp32 scale per 128 of them (132 for DeepSeek-V3.2), whatever the KV cache's dtype.
Bytes indexer_key_row_bytes(const SparseIndexerSpec& indexer);

// Bytes one token occupies in layer `layer`'s cache on one GPU at degree `tp` (tp = 1: the whole
// layer). Non-MLA: (K rows + V rows) × heads_per_rank × head_dim elements, V omitted when
// attention.k_eq_v on a full layer with its own geometry (Gemma 4); MLA: one latent of
// (kv_lora_rank + qk_rope_head_dim) elements (mla_latent_row_bytes), plus the indexer's key with
// sparse attention, identical on every rank. 0 for kNoKvCache layers.
// Requires 0 <= layer < num_layers and a valid tp.
Bytes kv_bytes_per_token_layer(const ModelSpec& model, std::int64_t layer, const KvFormat& format,
                               std::int64_t tp = 1);
// kv_bytes_per_token_layer for every layer, in layer order.
std::vector<Bytes> kv_bytes_per_token_per_layer(const ModelSpec& model, const KvFormat& format,
                                                std::int64_t tp = 1);
// Σ over layers: the bytes of one token cached in every layer (window caps not applied).
// Llama-3-70B, bf16, tp 1: 327,680.
Bytes kv_bytes_per_token(const ModelSpec& model, const KvFormat& format, std::int64_t tp = 1);

// ---- Per sequence -----------------------------------------------------------------------------

// Tokens of an n-token sequence a layer of `kind` keeps: n (full), min(n, window) (sliding),
// 0 (none). Requires n >= 0.
std::int64_t cached_tokens(LayerKind kind, std::int64_t window, std::int64_t n);

// KV bytes of one sequence of n tokens on one GPU, token-exact (no block rounding), window caps
// applied: Σ_layers kv_bytes_per_token_layer × cached_tokens. Excludes the SSM state.
Bytes kv_bytes_for_sequence(const ModelSpec& model, const KvFormat& format, std::int64_t n,
                            std::int64_t tp = 1);

// Fixed per-sequence state of the model's Mamba layers on one GPU (heads split over tp), in the
// weight dtype (fp16 for fp32 weights). 0 for pure transformers.
Bytes ssm_state_bytes_per_sequence(const ModelSpec& model, std::int64_t tp = 1);

// Blocks with a fixed per-sequence state (Mamba-2 mixers and gated DeltaNet blocks), and one
// such block's share of ssm_state_bytes_per_sequence on one GPU (0 without them; a model has one
// kind of them).
std::int64_t stateful_layers(const ModelSpec& model);
Bytes state_bytes_per_layer(const ModelSpec& model, std::int64_t tp = 1);

// ---- KV groups (hybrid KV cache manager) -----------------------------------------------------

// Layers that share one cache layout and one retention rule; an allocator keeps one block table
// (and, for vLLM's hybrid manager, one pool) per group. A block of a group holds block_size
// tokens × bytes_per_token.
struct KvGroup {
  LayerKind kind = LayerKind::kFullAttention;  // kFullAttention or kSlidingWindow
  std::int64_t num_layers = 0;
  Bytes bytes_per_token_per_layer = 0;  // one layer of the group, one GPU
  Bytes bytes_per_token = 0;            // all num_layers layers of the group, one GPU
  std::int64_t window_tokens = 0;       // kSlidingWindow: tokens kept; kFullAttention: 0 (all)
  std::vector<std::int64_t> layers;     // the decoder layer indexes, ascending
};

// The model's KV groups on one GPU: layers with KV grouped by (kind, bytes per token per layer),
// in order of first appearance; kNoKvCache layers belong to none. Σ bytes_per_token over groups
// == kv_bytes_per_token(model, format, tp). A plain full-attention model has one group.
std::vector<KvGroup> kv_groups(const ModelSpec& model, const KvFormat& format, std::int64_t tp = 1);

// Blocks of `block_size` tokens a group holds for a sequence of n tokens in a paged cache, once
// blocks wholly outside a window have been freed: ceil(n / block_size) for a full group; for a
// window group the blocks overlapping positions [max(0, n - window), n). 0 when n == 0.
std::int64_t blocks_for_sequence(const KvGroup& group, std::int64_t n, std::int64_t block_size);

// Bytes of a paged sequence of n tokens over all groups:
// Σ blocks_for_sequence × block_size × group.bytes_per_token. Excludes the SSM state.
Bytes paged_bytes_for_sequence(const std::vector<KvGroup>& groups, std::int64_t n,
                               std::int64_t block_size);

// ---- Budget per GPU ---------------------------------------------------------------------------

// Memory left aside besides weights, each a named default a caller may override.
//
// kDefaultRuntimeOverheadBytes (2 GiB): memory the serving process holds outside PyTorch's
// tensors — CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers, the CUDA-graph pool. vLLM's
// profiler logs 1.79 GiB "non_torch_memory" for Llama-3-8B on one H100 before graphs are captured
// (vllm-project/vllm PR #10511); 2 GiB rounds that up to include graphs.
inline constexpr Bytes kDefaultRuntimeOverheadBytes = 2 * kGiB;
// Activation reserve: the peak activations of one forward pass over kDefaultActivationTokens
// tokens (vLLM profiles a dummy batch of max_num_batched_tokens), estimated as
//   tokens × act_bytes × (4 × hidden + k × mlp_width / tp)   (residual, normed input, attention
//       output, QKV/attention scratch; k = 3 gated (gate, up, activated) or 2 plain MLP)
// + sequences × vocab × sort_sampler_bytes_per_logit   (the sampler's peak on the rank that
//       samples: the last pipeline stage; every rank's KV is capped by it. V0 profiles
//       --max-num-seqs rows: MemoryBudgetOptions::max_num_seqs, else
//       kDefaultActivationSequences)
// where mlp_width is the widest of: the dense intermediate size, experts_per_token × expert size
// + shared experts (MoE layers), a Mamba in_proj output; act_bytes the activation dtype's size
// (2 for fp16/bf16). V0 samples with PyTorch's sort (below): vLLM 0.8.3's per-rank profile of
// Llama-3.3-70B at TP 4 × PP 2 logs a torch peak of 1.27 GiB on the rank that samples and
// 0.22-0.25 GiB on the others; the sampler term here is 256 × 128,256 × 38 B = 1.16 GiB.
inline constexpr std::int64_t kDefaultActivationTokens = 8192;
inline constexpr std::int64_t kDefaultActivationSequences = 256;
// Bytes per logit at the peak of a sampler that applies top-k and top-p by sorting each row with
// PyTorch (vLLM V0's sampler and V1's without FlashInfer, as their profile runs exercise it with
// top-k and top-p on): the logits in the activation dtype, their fp32 copy, the sorted values
// (4 B) and int64 indices (8 B), and the segmented radix sort's scratch: its int64 input indices
// and cub's alternate key and value buffers (4 + 8 B). 38 B for bf16 logits.
Bytes sort_sampler_bytes_per_logit(const ModelSpec& model);
Bytes default_activation_reserve_bytes(const ModelSpec& model, std::int64_t tp,
                                       std::int64_t tokens = kDefaultActivationTokens,
                                       std::int64_t sequences = kDefaultActivationSequences);

// How the budget is derived: kV0 is the formula below (the accounting kvsim used before it modelled
// vLLM V1, matching V0-era engines); kVllmV1 is vLLM V1's worker memory profile
// (model/vllm_memory.h).
enum class MemoryEngine { kV0, kVllmV1 };

struct MemoryBudgetOptions {
  // Fraction of the GPU's memory the serving process may use (vLLM --gpu-memory-utilization).
  // Raising it grows the KV budget one for one. In (0, 1].
  double gpu_memory_utilization = 0.9;
  // nullopt: default_activation_reserve_bytes(model, tp) (kV0) or the V1 profile peak (kVllmV1).
  std::optional<Bytes> activation_reserve_bytes;
  Bytes runtime_overhead_bytes = kDefaultRuntimeOverheadBytes;
  MemoryEngine engine = MemoryEngine::kV0;
  // kVllmV1 only. runtime_overhead_bytes replaces the non-torch estimate only when given.
  bool runtime_overhead_given = false;
  std::int64_t max_num_batched_tokens = 0;  // profile forward pass; 0 = vllm serve default
  // Sampler rows of the profile run; 0 = vllm serve's default (kVllmV1) or
  // kDefaultActivationSequences (kV0).
  std::int64_t max_num_seqs = 0;
  VllmRelease vllm_release = kDefaultVllmRelease;  // whose profile (--vllm-version)
  std::optional<Bytes> kv_cache_memory_bytes;      // --kv-cache-memory-bytes: skip profiling
  std::optional<Bytes> kv_cache_bytes_override;    // --num-gpu-blocks-override × block bytes
};

// The KV budget of one GPU:
//   usable = floor(memory_bytes × gpu_memory_utilization)
//   kv_budget = usable − weights per GPU − activation reserve − runtime overhead
// never negative: when the right side would be, `fits` is false, kv_budget_bytes is 0 and
// shortfall_bytes says by how much the non-KV parts exceed `usable`.
struct KvBudget {
  MemoryEngine engine = MemoryEngine::kV0;
  Bytes memory_bytes = 0;  // the GPU's capacity (kVllmV1: the CUDA total vLLM multiplies)
  double gpu_memory_utilization = 0;
  Bytes usable_bytes = 0;
  Bytes weights_bytes = 0;  // per GPU
  Bytes activation_reserve_bytes = 0;
  Bytes runtime_overhead_bytes = 0;
  bool fits = false;
  Bytes kv_budget_bytes = 0;
  Bytes shortfall_bytes = 0;
};
// Requires a valid tp and 0 < gpu_memory_utilization <= 1.
KvBudget kv_budget_per_gpu(const ModelSpec& model, const HardwareSpec& hardware, std::int64_t tp,
                           const MemoryBudgetOptions& options = {});

// The smallest tensor-parallel degree in [1, max_tp] that is valid for the model
// (tensor_parallel_problem is empty) and leaves a positive KV budget on `hardware`; nullopt if
// none does. For "does not fit" messages and the planner's search.
std::optional<std::int64_t> min_tensor_parallel_to_fit(const ModelSpec& model,
                                                       const HardwareSpec& hardware,
                                                       const MemoryBudgetOptions& options = {},
                                                       std::int64_t max_tp = 64);

// What a budget holds. Counts are floors; all 0 when the budget is 0.
struct KvCapacity {
  Bytes bytes_per_token = 0;  // per GPU, all layers (kv_bytes_per_token at tp)
  // floor(kv_budget / bytes_per_token): token slots if every layer cached every token (for
  // window models a lower bound on what fits, since window layers stop growing).
  std::int64_t max_cached_tokens = 0;
  std::int64_t block_size = 0;
  Bytes block_bytes = 0;        // block_size × bytes_per_token
  std::int64_t num_blocks = 0;  // floor(kv_budget / block_bytes)
  // Sequences of `context` tokens that fit at once in a paged cache, window layers holding only
  // their window's blocks and each sequence its SSM state:
  // floor(kv_budget / (paged_bytes_for_sequence(context) + ssm state)). For a full-attention
  // model this is floor(num_blocks / ceil(context / block_size)).
  std::int64_t context = 0;
  Bytes bytes_per_sequence = 0;  // paged_bytes_for_sequence(context) + ssm state, per GPU
  std::int64_t max_concurrent_sequences = 0;
};
// Requires block_size >= 1, context >= 1, a valid tp.
KvCapacity kv_capacity(const ModelSpec& model, const KvFormat& format, std::int64_t tp,
                       Bytes kv_budget_bytes, std::int64_t block_size, std::int64_t context);

// ---- Everything `kvsim kv` reports -----------------------------------------------------------

struct KvQuery {
  std::int64_t tensor_parallel_size = 1;
  KvFormat format;
  std::int64_t block_size = 16;
  std::int64_t batch = 1;    // sequences for total_bytes
  std::int64_t context = 0;  // tokens per sequence; 0 = the model's max_context
  MemoryBudgetOptions budget;
};

struct KvAnalysis {
  KvQuery query;  // with context resolved
  // Logical (tp = 1) values.
  Bytes bytes_per_token = 0;
  std::vector<Bytes> bytes_per_token_per_layer;
  Bytes bytes_per_sequence = 0;  // kv_bytes_for_sequence(context), window-capped, token-exact
  Bytes total_bytes = 0;         // batch × bytes_per_sequence (the KV of the whole model)
  std::uint64_t num_parameters = 0;
  Bytes weights_bytes = 0;  // whole model
  // Per GPU at query.tensor_parallel_size.
  Bytes bytes_per_token_per_gpu = 0;
  Bytes total_bytes_per_gpu = 0;           // batch × kv_bytes_for_sequence(context, tp)
  Bytes ssm_state_bytes_per_sequence = 0;  // logical; per GPU in `capacity`
  Bytes weights_bytes_per_gpu = 0;
  std::vector<KvGroup> groups;  // per GPU
  // With a GPU only.
  std::optional<KvBudget> budget;
  std::optional<KvCapacity> capacity;  // present with budget (zeros when it does not fit)
};

// Runs the math above. `hardware` may be null (no GPU: budget and capacity absent). Requires a
// valid tp, block_size >= 1, batch >= 1, context >= 0.
KvAnalysis analyze_kv(const ModelSpec& model, const HardwareSpec* hardware, const KvQuery& query);

// The same model with its attention rewritten as MHA (kv_heads = q_heads), MQA (1) or GQA with
// `kv_heads` — for --compare-attention. Window pattern, head_dim and everything else unchanged.
// Requires a non-MLA model and kv_heads dividing q_heads.
ModelSpec with_kv_heads(const ModelSpec& model, std::int64_t kv_heads);

}  // namespace kvsim::model
