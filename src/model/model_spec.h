#pragma once
// A model's architecture as plain data: what the memory math and the cost model need. Filled by
// config/ (kvsim model YAML or a Hugging Face config.json); validated there.
//
// Invariants of a validated ModelSpec (config::validate_model enforces them):
//   num_layers > 0; layer_kinds.size() == num_layers;
//   attention.num_q_heads % attention.num_kv_heads == 0 (non-MLA);
//   sliding_window > 0 iff some layer is kSlidingWindow;
//   moe.num_experts == 0 or 0 < moe.experts_per_token <= moe.num_experts.

#include <cstdint>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/quantization.h"

namespace kvsim::model {

enum class AttentionKind : std::uint8_t { kMha, kMqa, kGqa, kMla };

// What one decoder layer keeps per token of a sequence.
enum class LayerKind : std::uint8_t {
  kFullAttention,  // K and V (or the MLA latent) of every token
  kSlidingWindow,  // only the last `attention.sliding_window` tokens
  kNoKvCache,      // e.g. a Mamba/SSM or MLP-only layer: no per-token cache (see ssm_state_bytes)
};

// Multi-head latent attention (DeepSeek-V2/V3). The cache holds one latent of
// (kv_lora_rank + qk_rope_head_dim) elements per token per layer, shared by all heads.
struct MlaSpec {
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  std::int64_t q_lora_rank = 0;  // 0: queries are projected directly (no low-rank q)
};

// DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) over an MLA model: per layer a lightning
// indexer (its own projections, replicated on every tensor-parallel GPU) scores every cached
// token for each query with `heads` heads of `head_dim` over its own key cache (fp8, one fp32
// scale per 128 elements), and the attention reads only the `topk` best. topk == 0: dense.
struct SparseIndexerSpec {
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t topk = 0;
  bool enabled() const { return topk > 0; }
};

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kGqa;
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;    // MLA: nominal (== num_q_heads); the cache is the latent
  std::int64_t head_dim = 0;        // per-head dimension of Q and K (and V unless v_head_dim set)
  std::int64_t v_head_dim = 0;      // 0: same as head_dim
  MlaSpec mla;                      // kind == kMla only
  SparseIndexerSpec indexer;        // kind == kMla only; disabled = dense attention
  std::int64_t sliding_window = 0;  // tokens cached by kSlidingWindow layers; 0 = none
  // Hybrid local/global models whose full-attention layers use another geometry (Gemma 3/4):
  // 0 = same as num_kv_heads / head_dim.
  std::int64_t full_layer_num_kv_heads = 0;
  std::int64_t full_layer_head_dim = 0;
  bool k_eq_v = false;  // full-attention layers share one tensor for K and V (cache holds one)
  // A sigmoid gate on the attention output, projected with the queries (q_proj twice as wide:
  // Qwen3-Next, Qwen3.5).
  bool output_gate = false;
};

struct MoeSpec {
  std::int64_t num_experts = 0;  // routed experts; 0 = dense model
  std::int64_t experts_per_token = 0;
  std::int64_t expert_intermediate_size = 0;
  std::int64_t num_shared_experts = 0;
  std::int64_t shared_expert_intermediate_size = 0;  // per shared expert; 0 = expert size
  std::int64_t first_dense_layers = 0;               // leading layers with a dense MLP (DeepSeek)
  std::int64_t moe_layer_interval = 1;  // every n-th layer (after the dense ones) is MoE
  // Routed-expert weights stored in another type than ModelSpec::weight_dtype (gpt-oss: MXFP4),
  // with one 8-bit scale per `expert_scale_group_size` elements (0 = no scales).
  bool has_expert_dtype = false;
  Dtype expert_dtype = Dtype::kFp4;
  std::int64_t expert_scale_group_size = 0;
  // How the deployment spreads the routed experts (set by model::shard_experts; a checkpoint's
  // config leaves the defaults): over `shard_ranks` GPUs (0 = the tensor-parallel group), as
  // whole experts when `expert_parallel` (each GPU holds ceil(num_experts / shard_ranks) of them),
  // else by width (every expert's intermediate size split over the ranks).
  std::int64_t shard_ranks = 0;
  bool expert_parallel = false;
  // Activations of the fused-MoE kernel over MXFP4 experts (a deployment's choice, vLLM's MXFP4
  // MoE backend): 16 (bf16: its default on every GPU) or 8 (MXFP8 on Blackwell,
  // VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1; --mxfp4-moe-activation).
  int mxfp4_activation_bits = 16;
  bool enabled() const { return num_experts > 0; }
  // Width of one shared expert's MLP (shared_expert_intermediate_size, else the routed size).
  std::int64_t shared_expert_size() const {
    return shared_expert_intermediate_size > 0 ? shared_expert_intermediate_size
                                               : expert_intermediate_size;
  }
  // True when decoder layer `layer` (0-based) has a routed-expert MLP rather than a dense one.
  bool is_moe_layer(std::int64_t layer) const {
    return enabled() && layer >= first_dense_layers &&
           (layer - first_dense_layers) % (moe_layer_interval > 0 ? moe_layer_interval : 1) == 0;
  }
};

// What one decoder block computes, for hybrid models whose blocks are not all attention + MLP.
enum class BlockKind : std::uint8_t {
  kAttentionMlp,        // attention then MLP/MoE (every ordinary transformer layer)
  kAttentionOnly,       // attention, no MLP (Nemotron-H '*')
  kMlpOnly,             // MLP, no attention (Nemotron-H '-')
  kMamba,               // a Mamba-2 mixer, no attention, no MLP (Nemotron-H 'M')
  kLinearAttentionMlp,  // a gated DeltaNet (linear attention) mixer, then the MLP/MoE (Qwen3-Next)
};

// Mamba-2 mixer geometry (hybrid SSM models). Its per-sequence state is fixed-size:
// conv state (conv_kernel - 1) × (num_heads × head_dim + 2 × num_groups × state_size) plus SSM
// state num_heads × head_dim × state_size elements.
struct SsmSpec {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t state_size = 0;
  std::int64_t num_groups = 0;
  std::int64_t conv_kernel = 0;
  bool conv_bias = true;
  bool has_state_dtype = false;      // false: the SSM state is in the model's dtype
  Dtype state_dtype = Dtype::kFp32;  // vLLM's mamba_ssm_cache_dtype when the config names one
  bool enabled() const { return num_heads > 0; }
};

// Gated DeltaNet geometry (linear-attention hybrids: Qwen3-Next, Qwen3.5). Its per-sequence state
// is fixed-size: conv state (conv_kernel - 1) × (2 × num_key_heads × key_head_dim +
// num_value_heads × value_head_dim) in the model's dtype, and recurrent state num_value_heads ×
// key_head_dim × value_head_dim in `state_dtype` (vLLM's mamba_ssm_cache_dtype).
struct GatedDeltaNetSpec {
  std::int64_t num_key_heads = 0;
  std::int64_t num_value_heads = 0;
  std::int64_t key_head_dim = 0;
  std::int64_t value_head_dim = 0;
  std::int64_t conv_kernel = 0;
  bool has_state_dtype = false;  // false: the recurrent state is in the model's dtype
  Dtype state_dtype = Dtype::kFp32;
  bool enabled() const { return num_value_heads > 0; }
  std::int64_t key_width() const { return num_key_heads * key_head_dim; }
  std::int64_t value_width() const { return num_value_heads * value_head_dim; }
};

struct ModelSpec {
  std::string name;          // catalog name, e.g. "llama-3-70b"
  std::string display_name;  // e.g. "Meta Llama 3 70B"; may be empty
  std::string family;        // e.g. "llama", "mistral", "deepseek_v2"
  std::string source;        // where the numbers come from (URL, paper, config.json path)

  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;  // dense MLP width
  std::int64_t vocab_size = 0;
  std::int64_t max_context = 0;  // max sequence length the model supports (tokens)

  AttentionSpec attention;
  std::vector<LayerKind> layer_kinds;  // one per decoder layer
  MoeSpec moe;
  // One per decoder layer for hybrid models; empty = every layer is kAttentionMlp. A layer whose
  // block has no attention has layer_kinds[i] == kNoKvCache.
  std::vector<BlockKind> block_kinds;
  SsmSpec ssm;            // geometry of the kMamba blocks
  GatedDeltaNetSpec gdn;  // geometry of the kLinearAttentionMlp blocks

  bool gated_mlp = true;  // SwiGLU/GeGLU: three matrices; false: up + down only (GPT-2, OPT)
  bool tie_word_embeddings = false;
  bool parallel_attention_mlp = false;  // Falcon/GPT-J style (one norm, one all-reduce)
  bool attention_bias = false;
  bool mlp_bias = false;
  bool learned_positions = false;    // GPT-2/OPT: a (max_context × hidden) position table
  bool layernorm_bias = false;       // LayerNorm with bias (2 vectors) vs RMSNorm (1)
  std::int64_t norms_per_layer = 2;  // 2 (pre-attention, pre-MLP); Gemma 2/3 have 4; Falcon-7B 1
  bool qk_norm = false;              // per-head RMSNorm on Q and K (Qwen3, Gemma 3)
  // With qk_norm: the norms span all heads (one weight of q_heads × head_dim and one of
  // kv_heads × head_dim, split over TP: MiniMax-M2's per_layer norm) instead of one head.
  bool qk_norm_whole = false;

  Dtype weight_dtype = Dtype::kBf16;
  // Quantized linear layers (HF quantization_config or --quantization); the rest of the weights,
  // activations and the "auto" KV cache stay in weight_dtype. gpt-oss keeps its MXFP4 experts in
  // moe.expert_dtype as well (quantization.method mxfp4 with everything else not converted).
  Quantization quantization;

  // A multimodal model's vision encoder and projector (estimated from an HF config's
  // vision_config): weights vLLM loads beside the language model, sharded over the tensor-parallel
  // GPUs of the first pipeline stage. Not in the step cost (text workloads). 0: none.
  std::uint64_t vision_parameters = 0;

  // Pipeline parallelism (model/pipeline.h): a stage's slice of the model holds the token
  // embeddings only on the first stage and the final norm and LM head only on the last. A whole
  // model holds both.
  bool holds_embedding = true;
  bool holds_lm_head = true;

  // Fixed per-sequence state of kNoKvCache layers that are SSMs (bytes per sequence, summed over
  // those layers, in weight_dtype); 0 for pure transformers.
  std::uint64_t ssm_state_bytes_per_sequence = 0;

  BlockKind block_kind(std::int64_t layer) const {
    return block_kinds.empty() ? BlockKind::kAttentionMlp
                               : block_kinds[static_cast<std::size_t>(layer)];
  }

  std::int64_t num_layers_of(LayerKind kind) const {
    std::int64_t n = 0;
    for (LayerKind k : layer_kinds) n += (k == kind) ? 1 : 0;
    return n;
  }
};

// True for an MoE model whose routed experts are MXFP4: stored so (gpt-oss) or quantized so
// (--quantization mxfp4). Their fused-MoE kernel's activations are MoeSpec::mxfp4_activation_bits.
bool has_mxfp4_experts(const ModelSpec& m);

std::string_view attention_kind_name(AttentionKind kind);  // "mha", "mqa", "gqa", "mla"
std::string_view layer_kind_name(LayerKind kind);          // "full", "sliding", "none"
// "attention_mlp", "attention", "mlp", "mamba", "linear_attention_mlp"
std::string_view block_kind_name(BlockKind kind);

}  // namespace kvsim::model
