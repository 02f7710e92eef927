#pragma once
// Private to the roofline model (roofline_model.cpp runs a step over the plan,
// roofline_plan.cpp builds it): the per-layer constants RooflineCostModel precomputes.

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/ops.h"
#include "cost/roofline_model.h"
#include "cost/tables.h"
#include "model/hardware_spec.h"

namespace kvsim::cost {
namespace roofline {

// Breakdown entries, in execution order.
enum OpId : int {
  kEmbed,
  kQkv,
  kAttnPrefill,
  kAttnDecode,
  kAttnIndex,
  kOProj,
  kMlp,
  kMoe,
  kMoeDispatch,
  kSsm,
  kNorms,
  kAllreduce,
  kLmHead,
  kNumOps
};
constexpr std::array<const char*, kNumOps> kOpNames = {
    "embed", "qkv_proj",     "attn_prefill", "attn_decode", "attn_index", "o_proj", "mlp",
    "moe",   "moe_dispatch", "ssm",          "norms",       "allreduce",  "lm_head"};

// Whether op `i` is an attention kernel (its time depends on the step's contexts).
constexpr bool is_attention_op(int i) {
  return i == kAttnPrefill || i == kAttnDecode || i == kAttnIndex;
}

// A sparse-attention indexer writes and reads back one fp32 logit per (query, key) pair before
// its top-k selection.
constexpr double kIndexerLogitBytes = 8.0;

// Where a GEMM's m (rows) comes from in a step.
enum class Rows : std::uint8_t {
  kTokens,       // every token computed this step (prefill tokens + decode sequences)
  kSampling,     // rows that sample a token (LM head)
  kDecodes,      // decode sequences (MLA absorbed projections)
  kPrefillKeys,  // cached + new tokens of the prefill chunks (MLA K/V decompression)
};

struct GemmTemplate {
  OpId op = kQkv;
  Rows rows = Rows::kTokens;
  double n = 0, k = 0, batch = 1;
  double a = 2, w = 2, c = 2;  // element bytes of input, weight, output
  const PreparedTable* table = nullptr;
  bool quantized = false;  // a quantized linear layer: Plan::quant_peak_flops, dequantization
};

// Dequantizing weights before a GEMM (roofline_model.h): FLOPs per weight element per tile.
constexpr double kDequantFlopsPerWeight = 2.0;
constexpr double kDequantTileRows = 128.0;

struct ElementwiseTemplate {
  OpId op = kNorms;
  double bytes_per_token = 0;  // × tokens of the step
  double bytes_per_seq = 0;    // × sequences of the step (prefills + decodes)
};

struct MoeTemplate {
  // This GPU's routed experts (all of them unless expert parallelism spreads them, then
  // assignment_share = 1 / GPUs) and their expert width per GPU.
  MoeGeometry geo;
  bool quantized = false;  // experts quantized (or in their own dtype): as GemmTemplate
  model::Dtype weight_dtype = model::Dtype::kBf16;  // the experts' stored type
  // The fused-MoE kernel's activations where wider than the experts' weights (cost/ops.h
  // KernelShape::activation_bits): 16 for W4A16 (MXFP4 experts by default, AWQ/GPTQ int4), 8 for
  // MXFP4 x MXFP8; 0 otherwise.
  int activation_bits = 0;
  // fp8 experts with block scales (a DeepSeek-style checkpoint): vLLM's block-fp8 fused MoE,
  // priced by the "moe.fp8.block" entry where the profile fitted one (cost/ops.h block_key).
  bool block_scales = false;
  // Measured fused-MoE times; x1 = MoE tokens (used with the fitted class, Plan::moe_fitted).
  const PreparedTable* table = nullptr;
};

// Layers that cost the same: same attention kind/window and same MLP kind.
struct LayerGroup {
  double count = 0;
  bool attention = false;
  bool mla = false;
  // 0 = full attention; else the keys each query reads: a sliding window, or a sparse
  // attention's top-k (the aggregates' second slot, Plan::window).
  std::int64_t window = 0;
  AttentionGeometry prefill_geom;
  AttentionGeometry decode_geom;
  // Sparse attention's indexer: its scores over every cached key (full causal pairs), priced
  // as the attn_index op. q_heads 0: none.
  AttentionGeometry index_geom;
  const PreparedTable* prefill_table = nullptr;  // key batch=1; x1 = q_len, x2 = kv_len
  const PreparedTable* decode_table = nullptr;   // x1 = batch, x2 = kv_len
  std::vector<GemmTemplate> gemms;
  std::vector<ElementwiseTemplate> elementwise;
  bool moe = false;
  MoeTemplate moe_t;
  std::int64_t moe_permute = -1;  // index in `elementwise` of the experts' activation/permutation
};

struct Aggregates {
  double tokens = 0, prefill_tokens = 0, decodes = 0, sampling = 0, sequences = 0;
  double moe_tokens = 0;         // tokens the MoE layers compute (every data-parallel rank's)
  double prefill_keys_full = 0;  // Σ cached + new over prefill chunks
  // Per attention window (index 0 full, 1 sliding): Σ pairs and distinct keys.
  double pre_pairs[2] = {0, 0}, pre_keys[2] = {0, 0};
  double dec_keys[2] = {0, 0};
  double decode_context_sum = 0;
};

struct OpAcc {
  double time_s = 0, flops = 0, bytes = 0, compute_bound_s = 0;
};

}  // namespace roofline

struct RooflineCostModel::Plan {
  using OpId = roofline::OpId;
  using OpAcc = roofline::OpAcc;
  using Rows = roofline::Rows;
  using GemmTemplate = roofline::GemmTemplate;
  using ElementwiseTemplate = roofline::ElementwiseTemplate;
  using LayerGroup = roofline::LayerGroup;
  using Aggregates = roofline::Aggregates;

  ResolvedDtypes dtypes;
  KernelFamilies families;
  std::int64_t tp = 1;
  std::array<model::OpClassProfile, kNumOpClasses> cls;
  std::array<Roof, kNumOpClasses> roof;
  std::vector<std::string> defaulted;
  std::vector<LayerGroup> groups;
  std::int64_t window = 0;     // the sliding window or the sparse attention's top-k; 0 = neither
  bool sparse_window = false;  // `window` is a sparse attention's top-k (no sliding window)
  double allreduces = 0;       // all-reduces per step (one per sublayer; 0 without TP)
  double allreduce_bytes_per_token = 0;
  // Data parallelism of an MoE model: per MoE layer, an all-gather of the other ranks' hidden
  // states and a reduce-scatter back, over `dispatch_link`.
  double moe_layers = 0;
  double dispatch_bytes_per_token = 0;  // hidden × activation bytes; 0 without data parallelism
  model::Link dispatch_link;
  const PreparedTable* allreduce_table = nullptr;
  std::vector<GemmTemplate> head_gemms;               // LM head
  std::vector<ElementwiseTemplate> head_elementwise;  // embedding gather, final norm
  double final_norm_bytes_per_sample = 0;
  bool has_head = true;   // false on a pipeline stage other than the last (no final norm, LM head)
  double overhead_s = 0;  // CPU time per step
  double seq_overhead_s = 0;            // per sequence of the step (prefill chunks + decodes)
  double prefill_token_overhead_s = 0;  // per prompt token computed in the step
  double context_token_overhead_s = 0;  // per context token of the step's sequences
  bool overlap_overhead = false;        // async scheduling: a step is max(GPU, host), not the sum
  double eager_host_s = 0;  // a step without a CUDA graph lasts at least this (its layers issued)
  double pcie_bandwidth = 0;
  double quant_peak_flops = 0;           // peak of the quantized GEMMs' compute dtype
  model::OpClassProfile quant_gemm_cls;  // their efficiencies (the profile's curve for that dtype)
  // A sparse-attention indexer's kernels (attn_index), whatever the KV cache's type: fp8 queries
  // over fp8 keys, priced by the attention entries of an fp8 cache (and their roof). Index 0
  // prefill, 1 decode.
  std::array<model::OpClassProfile, 2> index_cls;
  std::array<Roof, 2> index_roof;
  // The profile has a fused-MoE curve for the experts' type (fitted to fused-MoE kernels): the
  // routed experts are costed as one `moe` kernel (cls/roof[kMoe]); else as two GEMMs.
  bool moe_fitted = false;
  bool quant_dequantizes = false;
  TableIndex tables;
  std::size_t tables_used = 0;

  // Memo of the step's token-shaped ops (roofline_model.cpp, StepMemo). Every op but the two
  // attention kernels depends only on the step's tokens, sampled rows, sequences (where some
  // elementwise op is per sequence) and MoE tokens, so its time is kept per thread under those
  // counts. Possible only when no template writes an attention op (MLA's absorbed GEMMs do): the
  // attention accumulators are then the attention kernels' alone, and each op's sum keeps its
  // order. `id` tells one plan's entries from another's (never reused).
  bool memo_tokens = false;
  bool memo_keys_sequences = false;
  bool memo_keys_moe_tokens = false;
  std::uint64_t id = 0;

  // Accumulates the whole step into acc[]; returns the total seconds (overhead included). The
  // step's CPU overhead (per step + per sequence + per prompt token) goes to `overhead`.
  double run(const StepBatch& batch, OpAcc* acc, double* overhead = nullptr) const;
  // The same total as run(), bit for bit, with the token-shaped ops' times memoized (memo_tokens).
  double seconds(const StepBatch& batch) const;

  // `peak_flops` > 0 replaces the class's peak and efficiencies (quantized GEMMs). `time_only`:
  // only acc[op].time_s is wanted (a measured kernel then skips the roofline).
  void add(OpAcc* acc, OpId op, OpClass cls_id, const Work& work, double multiplicity,
           double table_time_s, double peak_flops = 0, bool time_only = false) const {
    const Roof& r = roof[static_cast<int>(cls_id)];
    add_priced(acc, op, peak_flops > 0 ? quant_gemm_cls : cls[static_cast<int>(cls_id)],
               peak_flops > 0 ? peak_flops : r.peak_flops, r, work, multiplicity, table_time_s,
               time_only);
  }
  // add() under an explicit entry and roof (the indexer's, index_cls / index_roof).
  void add_priced(OpAcc* acc, OpId op, const model::OpClassProfile& profile, double peak_flops,
                  const Roof& r, const Work& work, double multiplicity, double table_time_s,
                  bool time_only) const {
    if (time_only && table_time_s > 0) {
      acc[op].time_s += table_time_s * multiplicity;
      return;
    }
    const KernelTime kt = roofline_time(profile, peak_flops, r.bandwidth, r.extra_latency_s, work);
    const double t = (table_time_s > 0 ? table_time_s : kt.time_s) * multiplicity;
    OpAcc& a = acc[op];
    a.time_s += t;
    a.flops += work.flops * multiplicity;
    a.bytes += work.bytes * multiplicity;
    if (kt.compute_bound()) a.compute_bound_s += t;
  }

  double rows_of(Rows rows, const Aggregates& g) const {
    switch (rows) {
      case Rows::kTokens:
        return g.tokens;
      case Rows::kSampling:
        return g.sampling;
      case Rows::kDecodes:
        return g.decodes;
      case Rows::kPrefillKeys:
        return g.prefill_keys_full;
    }
    return 0;
  }

  void gemm(OpAcc* acc, const GemmTemplate& t, const Aggregates& g, double mult) const {
    const double m = rows_of(t.rows, g);
    if (m <= 0) return;
    Work w = gemm_work(m, t.n, t.k, t.batch, t.a, t.w, t.c);
    const double table_time = t.table ? t.table->lookup(m, 0.0) : -1.0;
    if (!t.quantized) {
      add(acc, t.op, OpClass::kGemm, w, mult, table_time);
      return;
    }
    w.flops += dequant_flops(t.n * t.k * t.batch, m);
    add(acc, t.op, OpClass::kGemm, w, mult, -1.0, quant_peak_flops);
  }

  // FLOPs to dequantize `weights` elements for a GEMM of `rows` rows (0 when the kernel computes
  // in the weights' type).
  double dequant_flops(double weights, double rows) const {
    if (!quant_dequantizes) return 0.0;
    return roofline::kDequantFlopsPerWeight * weights *
           std::ceil(rows / roofline::kDequantTileRows);
  }
};

namespace roofline {

// Builds the plan for `model` on `hardware` (the constructor's contract in roofline_model.h).
std::unique_ptr<RooflineCostModel::Plan> build_plan(const model::ModelSpec& model,
                                                    const model::HardwareSpec& hardware,
                                                    const CostOptions& options);

}  // namespace roofline
}  // namespace kvsim::cost
