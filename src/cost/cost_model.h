#pragma once
// The simulator's clock: how long one engine step of a given batch takes on one replica.
//
// Two implementations, chosen by CostModelConfig::kind and built by make_cost_model():
//   - the roofline model (cost/roofline_model.h): per-layer ops (QKV, attention prefill/decode,
//     O projection, MLP or MoE, norms, TP all-reduce, LM head) each timed as
//     max(FLOPs / (peak × η_c), bytes / (bandwidth × η_m)) + launch latency, with η from the
//     hardware's fitted cost profile, or a measured table where one covers the exact shape;
//   - the linear model (cost/linear_model.h): explicit coefficients, for hand-checkable times.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.h"
#include "model/dtype.h"
#include "model/hardware_spec.h"
#include "model/model_spec.h"

namespace kvsim::cost {

// Part of a prompt computed in this step.
struct PrefillChunk {
  std::int64_t num_tokens = 0;         // new tokens computed now
  std::int64_t num_cached_tokens = 0;  // tokens of this sequence already in the KV cache
};

// Decoding sequences given by their totals rather than one by one (the simulator's fast
// forward over runs of pure-decode steps, so that a step costs O(1) in the batch size).
struct DecodeTotals {
  std::int64_t num_sequences = 0;
  std::int64_t context_tokens = 0;  // Σ tokens in their KV caches before this step's token
};

struct StepBatch {
  std::span<const PrefillChunk> prefills;
  // For each decoding sequence: tokens in its KV cache before this step's token.
  std::span<const std::int64_t> decode_context_tokens;
  // More decoding sequences, as totals (with or instead of the list above). Only for a cost
  // model whose prices_decode_totals() is true; it prices them exactly (bit for bit) as the
  // same sequences listed one by one.
  DecodeTotals decode_totals;
  // Sequences that sample a token this step (every decode, plus prefills finishing their prompt);
  // the LM head runs for these rows only.
  std::int64_t num_sampling = 0;
  // Rows a CUDA graph adds to reach its capture size (sim::cuda_graph_padded_tokens): computed
  // by the token-wise layers (GEMMs, norms, all-reduce, MoE), not by attention or the LM head.
  // Only a batch with tokens is padded.
  std::int64_t num_padding_tokens = 0;
  // The step runs without a CUDA graph, its kernels issued one by one by the host: it lasts at
  // least the profile's eager_layer_host_us × the layers this GPU runs.
  bool eager = false;
  // Data parallelism of an MoE model (model/expert_parallel.h): the tokens, padding included, that
  // every data-parallel rank of the step feeds its MoE layers together; the routed experts of
  // this GPU compute their share of them, and the ranks exchange hidden states for them. 0: this
  // batch's own tokens (one rank).
  std::int64_t moe_group_tokens = 0;
};

// Tokens a batch computes in its token-wise layers: prefill chunks' new tokens, decoding
// sequences (listed and as totals), and CUDA-graph padding when there is any token.
std::int64_t batch_tokens(const StepBatch& batch);

struct OpCost {
  std::string name;  // "qkv_proj", "attn_prefill", "attn_decode", "o_proj", "mlp", ...
  double time_s = 0;
  double flops = 0;  // per GPU
  double bytes = 0;  // per GPU, moved to/from HBM (or over the link for all-reduce)
  bool compute_bound = false;
};

struct StepCost {
  double time_s = 0;
  std::vector<OpCost> ops;  // in execution order; per-step CPU overhead is the last entry
};

// An op's name without the "stageN." prefix a pipeline's breakdown gives its stages' ops
// (PipelineCostModel::breakdown): "stage1.mlp" -> "mlp"; other names as they are.
inline std::string_view op_kind(std::string_view name) {
  if (!name.starts_with("stage")) return name;
  std::size_t i = 5;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 5 && i < name.size() && name[i] == '.' ? name.substr(i + 1) : name;
}

// Interface: a CostModel is immutable after construction and safe to share across threads.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Step time of `batch` on one replica (hot path: no allocation). Deterministic: the same batch
  // always gives the same TimeNs. An empty batch (no prefill, no decode) costs 0.
  virtual TimeNs step_time(const StepBatch& batch) const = 0;
  // The same with the per-op breakdown (for `kvsim cost` and reports). Its time_s, rounded to
  // nanoseconds, equals step_time(batch).
  virtual StepCost breakdown(const StepBatch& batch) const = 0;
  // Time to move `bytes` of KV between GPU and host memory (swap), one direction.
  virtual TimeNs swap_time(Bytes bytes) const = 0;
  // Whether StepBatch::decode_totals may be used: the step time then depends on the decoding
  // sequences only through their number and summed context, and the totals give bit-identical
  // times. Default: false (the list only).
  virtual bool prices_decode_totals() const { return false; }
  // The smallest context (cached tokens) each sequence given by StepBatch::decode_totals must
  // have for those times to hold: a model whose queries read at most k keys (a sparse
  // attention's top-k) prices totals exactly once every sequence reads k, past k − 1. 0: any.
  virtual std::int64_t decode_totals_min_context() const { return 0; }
};

// vLLM V0's host work per scheduled sequence and step, on top of the GPU's fitted step overhead:
// V0 runs the scheduler, the block tables, sampling output and detokenisation of every running
// sequence in the engine loop between GPU steps (V1 moved them out of it). 50 us: what replaying
// three V0 ground-truth sets in ../shared/data/groundtruth on A100s needed (the llm-k8s
// Llama-3.3-70B TP8 and TP4 x PP2 runs, vLLM 0.8.3; DistServe's OPT-13B vLLM runs, early 2024):
// TPOT errors rose from -31..-12% (TP8) and -25..-13% (TP4 x PP2) with 0 toward 0 with 40-80 us.
inline constexpr double kVllmV0SeqOverheadS = 50e-6;

// How the roofline model reads a deployment. Defaults follow vLLM.
struct CostOptions {
  // GPUs sharing each layer (Megatron-style: heads and MLP columns split, two all-reduces per
  // layer). Must be >= 1; KV heads are replicated when it exceeds the model's KV heads.
  std::int64_t tensor_parallel_size = 1;
  // Data-parallel ranks whose MoE layers compute together (StepBatch::moe_group_tokens): each
  // MoE layer all-gathers the ranks' hidden states before the experts and reduce-scatters after
  // (vLLM's default all2all backend) over the link that spans data_parallel_size × TP GPUs.
  std::int64_t data_parallel_size = 1;
  // Element type of the KV cache; nullopt = "auto" = the activation dtype.
  std::optional<model::Dtype> kv_dtype;
  // Element type of the weights; nullopt = the model's weight_dtype.
  std::optional<model::Dtype> weight_dtype;
  // Element type of activations and of GEMM compute; nullopt = the weight dtype when it is
  // fp16/bf16/fp8 (fp8 means W8A8: attention and norms then run in bf16), fp16 for fp32
  // weights, bf16 for int8/int4 weights (W8A16/W4A16).
  std::optional<model::Dtype> activation_dtype;
  // CPU time per engine step (scheduling, input preparation, sampling); nullopt = the hardware
  // profile's step_overhead_s.
  std::optional<double> step_overhead_s;
  // CPU time per context token of the step (model::CostProfile::context_token_overhead_s);
  // nullopt = the hardware profile's.
  std::optional<double> context_token_overhead_s;
  // Host time per scheduled sequence that the engine generation adds to the profile's
  // seq_overhead_s (kVllmV0SeqOverheadS for vLLM V0; 0 for V1).
  double engine_seq_overhead_s = 0;
  // vLLM's --async-scheduling: the host schedules and prepares step N+1 while the GPU runs step
  // N, so a step lasts max(GPU time, host overhead) instead of their sum.
  bool async_scheduling = false;
  // Disable measured-table lookups and use the fitted roofline everywhere (for comparisons).
  bool use_tables = true;
};

// The explicit linear model, in nanoseconds:
//   step = base + per_prefill_token × Σ prefill num_tokens + per_decode_seq × #decodes
//        + per_context_token × (Σ decode context tokens + Σ prefill num_cached_tokens)
// rounded to the nearest nanosecond; an empty batch costs 0. swap = bytes / swap_bytes_per_s.
struct LinearCostParams {
  double base_ns = 0;
  double per_prefill_token_ns = 0;
  double per_decode_seq_ns = 0;
  double per_context_token_ns = 0;
  double swap_bytes_per_s = 25e9;  // host↔device bandwidth for swap (PCIe 4.0 x16 effective)
};

enum class CostModelKind { kRoofline, kLinear };

struct CostModelConfig {
  CostModelKind kind = CostModelKind::kRoofline;
  CostOptions roofline;     // kind == kRoofline
  LinearCostParams linear;  // kind == kLinear
};

// Builds the chosen model. The roofline model throws kvsim::Error when the deployment cannot be
// costed (tensor_parallel_size < 1, or the GPU has no peak FLOP/s or bandwidth); the linear one
// when a coefficient is negative or non-finite.
std::unique_ptr<CostModel> make_cost_model(const model::ModelSpec& model,
                                           const model::HardwareSpec& hardware,
                                           const CostModelConfig& config);

}  // namespace kvsim::cost
