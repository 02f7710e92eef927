#pragma once
// Op classes, the FLOPs and bytes of one kernel, and the roofline time of a kernel under a fitted
// op-class profile. Shared by the step-cost model and the calibration fit, so that a fitted
// efficiency means the same thing in both.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/cost_profile.h"
#include "model/dtype.h"
#include "model/hardware_spec.h"

namespace kvsim::cost {

// Kernel families with their own efficiencies. Measurement rows and profile sections use the
// names below.
enum class OpClass : std::uint8_t {
  kGemm,         // dense matrix multiply (projections, MLP, experts, LM head)
  kAttnPrefill,  // causal attention of new prompt tokens over cached + new keys
  kAttnDecode,   // one query token per sequence over its cached keys (paged)
  kAllreduce,    // tensor-parallel all-reduce over the GPU interconnect (ring)
  kMemcpy,       // device-to-device copy (the bandwidth kernel)
  kElementwise,  // norms, residual adds, rotary embedding, activations, embedding gather
  kMoe,          // a fused-MoE layer's routed experts: routing, both expert GEMMs, the combine
};
inline constexpr int kNumOpClasses = 7;

// "gemm", "attn_prefill", "attn_decode", "allreduce", "memcpy", "elementwise", "moe".
std::string_view op_class_name(OpClass op);
std::optional<OpClass> parse_op_class(std::string_view name);
std::vector<std::string> op_class_names();
// True for classes with a compute roof (gemm, attention, moe); the others are bandwidth-only.
bool has_compute_roof(OpClass op);
// True for attn_prefill and attn_decode (whose per-dtype entries are per KV-cache type).
bool is_attention(OpClass op);

// FLOPs and bytes of one kernel. `bytes` is HBM traffic, except for allreduce where it is the
// ring's bytes over the link per GPU: 2 (p - 1) / p × message bytes.
struct Work {
  double flops = 0;
  double bytes = 0;
};

// C[m×n] = A[m×k] · W[k×n], `batch` independent times. Element sizes in bytes.
Work gemm_work(double m, double n, double k, double batch, double a_bytes, double w_bytes,
               double c_bytes);

// Per-GPU attention geometry of one layer.
struct AttentionGeometry {
  double q_heads = 0;         // query heads on this GPU
  double qk_dim = 0;          // Q·K dot-product length per head
  double v_dim = 0;           // V (and output) width per head
  double kv_read_bytes = 0;   // bytes read per cached key token (all KV heads on this GPU)
  double kv_write_bytes = 0;  // bytes written to the cache per new token
  double act_bytes = 2;       // element size of Q and O
};

// Attention over aggregates of a batch: `q_tokens` query rows, `pairs` (query, key) dot products,
// `kv_read_tokens` distinct cached key tokens read, `kv_write_tokens` new tokens written.
// FLOPs = 2 × pairs × q_heads × (qk_dim + v_dim); bytes = Q and O rows + keys read + keys written.
Work attention_work(const AttentionGeometry& g, double q_tokens, double pairs,
                    double kv_read_tokens, double kv_write_tokens);

// The routed experts of one MoE layer on one GPU: `experts` experts, `top_k` of them per token
// (routing assumed uniform), `local_experts` of them on this GPU taking `assignment_share` of the
// token-expert assignments (all and 1 without expert parallelism). Each expert projects hidden →
// gate_factor × width (gate and up: 2 for gated experts) and width → hidden. Element sizes w
// (weights, scales included) and a (activations) in bytes.
struct MoeGeometry {
  double experts = 0, top_k = 0;
  double local_experts = 0, assignment_share = 1;
  double hidden = 0, width = 0, gate_factor = 2;
  double w = 2, a = 2;
  // Balanced routing (a measured kernel's: aiconfigurator's "balanced" rows give every expert an
  // equal share of the assignments), so min(local experts, assignments) experts are touched;
  // false: uniformly random routing, local_experts × (1 - (1 - top_k / experts)^tokens).
  bool balanced = false;
};
struct MoeWork {
  Work up, down;               // the two expert GEMMs over the rows routed to this GPU
  double assignments = 0;      // token-expert rows computed here
  double touched_experts = 0;  // experts that receive at least one row (expected)
};
// FLOPs and bytes of `tokens` tokens through the layer: each GEMM's FLOPs over the rows routed
// here, its bytes the touched experts' weights plus the rows in and out.
MoeWork moe_work(const MoeGeometry& g, double tokens);

// Causal (query, key) pairs of a chunk of `n` new tokens after `cached` ones: query i (0-based)
// sees min(cached + i + 1, window) keys (window 0 = unlimited). Exact integer.
std::int64_t causal_pairs(std::int64_t n, std::int64_t cached, std::int64_t window);
// Distinct keys such a chunk reads: cached + n, or min(cached + n, window + n - 1) with a window.
std::int64_t keys_read(std::int64_t n, std::int64_t cached, std::int64_t window);

// One timed kernel as a measurement row gives it (per-GPU dimensions; 0 = the cell is empty).
//   gemm:         m, n, k, batch (0 = 1)
//   attn_prefill: batch sequences, each q_len new tokens after kv_len cached; q/kv heads, head_dim
//   attn_decode:  batch sequences, each with kv_len cached tokens; q/kv heads, head_dim
//                 (attention's dtype is the KV cache's; the query and output are 16-bit)
//   allreduce:    bytes (message size), num_gpus
//   memcpy:       bytes copied (HBM traffic is twice that)
//   elementwise:  bytes of HBM traffic
//   moe:          m tokens, n expert width per GPU, k hidden, experts, top_k (a gated fused-MoE
//                 layer with every expert on the GPU, weights in `dtype`, activations 8-bit for
//                 fp8 and 16-bit otherwise, routing balanced: MoeGeometry::balanced)
// activation_bits: 0 for a kernel whose activations take the weights' type (W8A8, NVFP4's W4A4)
// or are 16-bit over 16-bit weights; 16 or 8 for one whose activations are wider than its 8- or
// 4-bit weights: W4A16 (it dequantizes the weights and multiplies in 16 bits: MXFP4 experts over
// bf16, AWQ/GPTQ int4) or W4A8 (MXFP4 weights x MXFP8 activations on the fp8 tensor cores).
// Another kernel: its own profile entry (entry_key) and the peak of its activations' type.
// block_scales: fp8 weights with one scale per 128 × 128 block (DeepSeek-style checkpoints), which
// vLLM runs with its block-fp8 kernels (Triton's, DeepGEMM's), not the per-tensor fp8 ones: for
// the fused MoE its own entry "moe.fp8.block" (block_key).
struct KernelShape {
  OpClass op = OpClass::kGemm;
  model::Dtype dtype = model::Dtype::kFp16;
  std::int64_t m = 0, n = 0, k = 0, batch = 0;
  std::int64_t q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  double bytes = 0;
  std::int64_t num_gpus = 0;
  std::int64_t experts = 0, top_k = 0;
  int activation_bits = 0;
  bool block_scales = false;
};

// Element size in bytes (0.5 for int4).
double dtype_bytes(model::Dtype dtype);
// Output element size of a GEMM whose inputs are `dtype`: 8- and 4-bit GEMMs write 16-bit.
double gemm_output_bytes(model::Dtype dtype);

// FLOPs and bytes of a measured kernel (the same formulas the step-cost model uses).
Work kernel_work(const KernelShape& shape);

// Fixed dimensions of a kernel shape's measured-table family, and its interpolation coordinates
// (x1 = the token dimension; x2 = 0 when the family is one-dimensional). nullopt: the class keeps
// no tables (elementwise).
struct TableCoordinates {
  std::vector<std::pair<std::string, std::int64_t>> shape;
  double x1 = 0;
  double x2 = 0;
};
std::optional<TableCoordinates> table_coordinates(const KernelShape& shape);

// One canonical text key for a table family: "gemm|fp16|n=2560,k=8192,batch=1". bf16 and fp16
// share a key (the two run at the same speed).
std::string table_key(std::string_view op, std::string_view dtype,
                      const std::vector<std::pair<std::string, std::int64_t>>& shape);

// Efficiencies used for an op class the profile does not list (documented defaults: a profile
// without a class is a datasheet guess for it). Compute/memory efficiency and launch latency:
//   gemm 0.75/0.80/4 us, attn_prefill 0.50/0.80/5 us, attn_decode 0.50/0.75/5 us,
//   allreduce -/0.70/8 us, memcpy -/0.90/3 us, elementwise -/0.70/3 us, moe 0.50/0.60/10 us.
model::OpClassProfile default_op_class_profile(OpClass op);
// The profile's entry for `op`, else default_op_class_profile(op) (and *defaulted = true).
model::OpClassProfile op_class_profile(const model::CostProfile& profile, OpClass op,
                                       bool* defaulted = nullptr);

// Kernels of one class reach different fractions of their peaks in different dtypes (an fp8
// GEMM is not a bf16 GEMM at twice the rate), so a profile may hold a curve per dtype: the
// entry "<class>.<dtype>" ("gemm.fp8"). 16-bit kernels (fp16, bf16) use the plain "<class>".
// nullopt for a 16-bit dtype.
std::optional<std::string> op_class_dtype_key(OpClass op, model::Dtype dtype);
// The entry for `op` in `dtype`: "<class>.<dtype>" when the profile has it; for fp4 (int4)
// without one, "<class>.fp8" ("<class>.int8") when present; else as above.
model::OpClassProfile op_class_profile(const model::CostProfile& profile, OpClass op,
                                       model::Dtype dtype, bool* defaulted = nullptr);
// True for "gemm", "attn_decode", ... and "gemm.fp8"-style per-dtype entries, and for the entries
// of kernels with wider activations than weights such as "moe.fp4.a16" (activation_key).
bool is_op_class_key(std::string_view key);

// The entry of a kernel of `op` over `dtype` weights with `activation_bits`-bit activations (8 or
// 16, wider than the weights: KernelShape::activation_bits): "<class>.<dtype>.a<bits>"
// ("moe.fp4.a16", "moe.fp4.a8"). nullopt where the activations are not wider than the weights.
std::optional<std::string> activation_key(OpClass op, model::Dtype dtype, int activation_bits);
// The entry of a fused-MoE kernel over fp8 weights with block scales (KernelShape::block_scales):
// "moe.fp8.block". nullopt for other kernels (a GEMM's block scales cost what its per-channel
// ones do in the tables: one entry).
std::optional<std::string> block_key(OpClass op, model::Dtype dtype, bool block_scales);
// The profile entry a kernel of this shape is fitted into and priced by: activation_key or
// block_key where it has one, else op_class_dtype_key (nullopt: the plain "<class>").
std::optional<std::string> entry_key(const KernelShape& shape);
// The type whose peak a kernel's entry is fitted against and priced at: the activations' (bf16,
// fp8) for an activation_key entry, else `dtype`.
model::Dtype roof_dtype(model::Dtype dtype, int activation_bits);

// A fitted entry and the type of the peak its efficiencies are fractions of.
struct ResolvedEntry {
  model::OpClassProfile profile;
  model::Dtype roof_dtype = model::Dtype::kBf16;
  bool defaulted = false;  // no entry: default_op_class_profile
};
// The entry that prices a kernel of `op` over `dtype` weights with `activation_bits`: its
// activation_key entry against its activations' peak where the profile fitted one, its block_key
// entry where it has block scales and the profile fitted one, else (and for every other kernel)
// op_class_profile(profile, op, dtype) against the `dtype` peak.
ResolvedEntry resolve_entry(const model::CostProfile& profile, OpClass op, model::Dtype dtype,
                            int activation_bits, bool block_scales = false);

// Roofline of one kernel: max(flops / (peak × η_c(log10 flops)), bytes / (bandwidth ×
// η_m(log10 bytes))) + launch latency + extra_latency_s. Zero flops or bytes contribute nothing.
struct KernelTime {
  double time_s = 0;
  double compute_s = 0;  // the compute side of the max
  double memory_s = 0;   // the memory side of the max
  bool compute_bound() const { return compute_s > memory_s; }
};
KernelTime roofline_time(const model::OpClassProfile& profile, double peak_flops, double bandwidth,
                         double extra_latency_s, const Work& work);

// The peak, bandwidth and extra latency a class of kernels runs against on `hardware`:
// gemm/attention use peak_flops_for(dtype) (attention: the 16-bit peak over an 8- or 4-bit
// cache) and HBM bandwidth; allreduce the interconnect
// (extra latency: model::allreduce_hops link latencies); memcpy/elementwise HBM bandwidth. Throws
// kvsim::Error when the hardware lacks the number needed.
struct Roof {
  double peak_flops = 0;
  double bandwidth = 0;
  double extra_latency_s = 0;
};
Roof roof_for(const model::HardwareSpec& hardware, OpClass op, model::Dtype dtype,
              std::int64_t num_gpus);

}  // namespace kvsim::cost
