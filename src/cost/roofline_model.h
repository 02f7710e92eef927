#pragma once
// The roofline step-cost model (DESIGN "Cost model").
//
// For one engine step the model sums, over every decoder layer, the kernels of that layer for
// the step's batch — QKV projection (for MLA the q/kv low-rank projections), attention prefill
// (causal pairs over cached + new keys; window layers capped), attention decode (every
// sequence's cached KV, read once per KV head shared by its query-head group; the latent for
// MLA, read by all heads; window layers capped), O projection, dense MLP or MoE (router, the
// experts the batch's tokens actually touch under top-k routing — E·(1 − (1 − k/E)^T) distinct
// experts for T tokens — and shared experts), norms/rope/activation/residual kernels, and the
// tensor-parallel all-reduces (2 (p − 1)/p × bytes over the link, plus the hop latencies of
// the algorithm vLLM runs: one for its custom all-reduce inside an NVLink node, 2 (p − 1) for a
// ring over PCIe or across nodes; model::allreduce_hops) — plus the embedding gather, the LM head
// for the sampled rows and the per-step CPU overhead (per step, per sequence, per prompt token).
// Each kernel costs max(FLOPs / (peak × η_c), bytes / (bandwidth × η_m)) + launch latency with η
// from the hardware's cost profile, or its measured table where one covers the exact shape family
// and the point lies inside the measured range.
//
// Tensor parallelism splits query heads, KV heads (replicated once p exceeds them), the MLP
// and expert intermediate widths, and the vocabulary; MLA latents and the q/kv down-projections
// are replicated. Hybrid models follow their block kinds: attention-only and MLP-only blocks
// have one sublayer (one norm, one all-reduce); Mamba-2 blocks cost their in/out projections,
// the convolution/scan traffic over the inner width and the per-sequence state read and written
// once per step (op "ssm"). MoE layers are those MoeSpec::is_moe_layer names; routed experts in
// their own dtype (MXFP4) are read at that width plus their scales.
//
// Quantized linear layers (ModelSpec::quantization): their GEMMs read the weights at the
// quantized width plus scales (model::quantized_bytes_per_element) and compute at: fp8 W8A8 →
// the fp8 peak (fp8 inputs), int8 W8A8 → the int8 peak, mxfp4 / nvfp4 → the fp4 peak on a GPU
// of compute capability >= 10 with one; otherwise (AWQ/GPTQ W4A16, fp4 or fp8 without tensor
// cores for it) the activation dtype's peak plus the dequantization: 2 FLOPs per weight element
// per 128-row tile of the GEMM's rows (kDequantFlopsPerWeight, kDequantTileRows).

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "cost/cost_model.h"

namespace kvsim::cost {

struct ResolvedDtypes {
  model::Dtype weight = model::Dtype::kBf16;
  model::Dtype activation = model::Dtype::kBf16;
  model::Dtype kv = model::Dtype::kBf16;
  model::Dtype gemm_compute = model::Dtype::kBf16;  // fp8 for W8A8, else the activation dtype
  // GEMMs of the linear layers ModelSpec::quantization converts: their weights' type, the type
  // they compute in, and whether the kernel dequantizes the weights first (weight-only W4A16, or
  // a format the GPU has no tensor cores for). Equal to weight / gemm_compute without one.
  model::Dtype quant_weight = model::Dtype::kBf16;
  model::Dtype quant_compute = model::Dtype::kBf16;
  bool quant_dequantizes = false;
};

class RooflineCostModel final : public CostModel {
 public:
  // Precomputes every per-layer constant. Throws kvsim::Error when the deployment cannot be
  // costed: tensor_parallel_size < 1 or not dividing the query heads (or the KV heads, or being
  // divided by them), a missing peak FLOP/s, HBM, PCIe or (for p > 1) interconnect bandwidth.
  RooflineCostModel(const model::ModelSpec& model, const model::HardwareSpec& hardware,
                    const CostOptions& options);
  ~RooflineCostModel() override;

  TimeNs step_time(const StepBatch& batch) const override;
  StepCost breakdown(const StepBatch& batch) const override;
  // bytes / PCIe bandwidth (one direction).
  TimeNs swap_time(Bytes bytes) const override;
  // True without a sliding window (decode totals are then exact; see aggregate()).
  bool prices_decode_totals() const override;
  std::int64_t decode_totals_min_context() const override;

  const ResolvedDtypes& dtypes() const;
  // The step's CPU overhead (op "step_overhead"): step_overhead_s + seq_overhead_s × sequences
  // (prefill chunks and decodes) + prefill_token_overhead_s × prompt tokens computed +
  // context_token_overhead_s × the step's context tokens. With
  // CostOptions::async_scheduling the step waits only for what of it exceeds the GPU's time.
  double step_overhead_s() const;
  double seq_overhead_s() const;
  double prefill_token_overhead_s() const;
  double context_token_overhead_s() const;  // × Σ the step's sequences' tokens after it
  // Op classes costed with default_op_class_profile() because the hardware profile lacks them.
  const std::vector<std::string>& defaulted_classes() const;
  // Number of measured tables that cover some kernel family of this model.
  std::size_t num_tables_used() const;

  // The kernel shape families this deployment runs (per GPU): GEMMs as {n, k, batch} (weights in
  // the compute dtype only) and GQA/MHA attention as {q_heads, kv_heads, head_dim}; sorted, no
  // repeats. What `kvsim calibrate --device` measures for a model.
  struct KernelFamilies {
    std::vector<std::array<std::int64_t, 3>> gemms;
    std::vector<std::array<std::int64_t, 3>> attention;
  };
  KernelFamilies kernel_families() const;

  struct Plan;  // the precomputed constants (roofline_model.cpp)

 private:
  std::unique_ptr<const Plan> plan_;
};

}  // namespace kvsim::cost
