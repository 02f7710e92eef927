// Builds RooflineCostModel::Plan in the steps the constructor performs: check the
// tensor-parallel degree, resolve the dtypes, set the roofs, group the layers that cost the
// same, and give each group (and the LM head) its op templates.
#include "cost/roofline_plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/assert.h"
#include "common/error.h"
#include "common/int_math.h"
#include "model/kv_math.h"

namespace kvsim::cost::roofline {
namespace {

using model::Dtype;
using Plan = RooflineCostModel::Plan;

Error tp_error(const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, "tensor_parallel_size"}, message);
}

// Throws unless `p` is a valid tensor-parallel degree for the model (the model layer's rule).
void check_tensor_parallel(const model::ModelSpec& m, std::int64_t p) {
  if (const std::string problem = model::tensor_parallel_problem(m, p); !problem.empty()) {
    throw tp_error(problem);
  }
}

// The quantized GEMMs' compute (roofline_model.h): the weights' own type where the GPU has tensor
// cores for it, else the activation type after dequantizing.
void resolve_quant_dtypes(const model::ModelSpec& m, const model::HardwareSpec& hw,
                          ResolvedDtypes& d) {
  d.quant_weight = d.weight;
  d.quant_compute = d.gemm_compute;
  d.quant_dequantizes = false;
  const model::Quantization& q = m.quantization;
  if (!q.enabled()) return;
  d.quant_weight = model::quant_weight_dtype(q.method);
  const Dtype act16 = d.activation == Dtype::kFp8 ? Dtype::kBf16 : d.activation;
  const auto native = [&](Dtype dt) { return hw.peak_flops.count(dt) > 0; };
  Dtype compute = act16;
  switch (q.method) {
    case model::QuantMethod::kFp8:
      if (native(Dtype::kFp8)) compute = Dtype::kFp8;
      break;
    case model::QuantMethod::kInt8:
      if (native(Dtype::kInt8)) compute = Dtype::kInt8;
      break;
    case model::QuantMethod::kMxfp4:
    case model::QuantMethod::kNvfp4:
      if (hw.compute_capability >= 10.0 && native(Dtype::kFp4)) compute = Dtype::kFp4;
      break;
    case model::QuantMethod::kAwq:
    case model::QuantMethod::kGptq:
    case model::QuantMethod::kNone:
      break;
  }
  d.quant_compute = compute;
  d.quant_dequantizes = compute == act16;
}

ResolvedDtypes resolve_dtypes(const model::ModelSpec& m, const CostOptions& options) {
  ResolvedDtypes d;
  d.weight = options.weight_dtype.value_or(m.weight_dtype);
  if (options.activation_dtype) {
    d.activation = *options.activation_dtype;
  } else if (d.weight == Dtype::kFp8) {
    d.activation = Dtype::kFp8;  // W8A8
  } else {
    // As vLLM's --dtype auto serves them (int8/int4 weights run W8A16/W4A16).
    d.activation = model::activation_dtype(d.weight);
  }
  d.kv = options.kv_dtype.value_or(d.activation == Dtype::kFp8 ? Dtype::kBf16 : d.activation);
  // fp8 activations mean W8A8: GEMMs run in fp8, everything else (attention, norms) in bf16.
  d.gemm_compute = d.activation;
  return d;
}

// Element bytes of the resolved dtypes.
struct ElementBytes {
  Dtype act16 = Dtype::kBf16;  // activations outside GEMMs (bf16 under W8A8)
  double a = 2;                // act16
  double ga = 2;               // GEMM inputs
  double w = 2;                // weights
  double c = 2;                // KV cache
  double gc = 2;               // GEMM outputs
  double qa = 2;               // quantized GEMMs' inputs (their compute dtype)
};

ElementBytes element_bytes(const ResolvedDtypes& d) {
  ElementBytes b;
  b.act16 = d.activation == Dtype::kFp8 ? Dtype::kBf16 : d.activation;
  b.a = dtype_bytes(b.act16);
  b.ga = dtype_bytes(d.gemm_compute);
  b.w = dtype_bytes(d.weight);
  b.c = dtype_bytes(d.kv);
  b.gc = gemm_output_bytes(d.gemm_compute);
  b.qa = dtype_bytes(d.quant_compute);
  return b;
}

// Op-class profiles and roofs, PCIe bandwidth, step overhead and the measured tables.
void set_roofs(Plan& P, const model::HardwareSpec& hw, const CostOptions& options, Dtype act16) {
  for (int i = 0; i < kNumOpClasses; ++i) {
    const auto cls_id = static_cast<OpClass>(i);
    if (cls_id == OpClass::kMoe) continue;  // set_moe_class, once the experts' type is known
    bool defaulted = false;
    const Dtype roof_dtype = cls_id == OpClass::kGemm ? P.dtypes.gemm_compute : act16;
    // Attention's curve is its cache type's entry ("attn_decode.fp8") where the profile has one:
    // kernels over an 8-bit cache are other kernels, not 16-bit ones reading half the bytes.
    P.cls[i] = op_class_profile(hw.cost, cls_id, is_attention(cls_id) ? P.dtypes.kv : roof_dtype,
                                &defaulted);
    if (defaulted) P.defaulted.emplace_back(op_class_name(cls_id));
    P.roof[i] = roof_for(hw, cls_id, roof_dtype, cls_id == OpClass::kAllreduce ? P.tp : 1);
  }
  for (const OpClass attn : {OpClass::kAttnPrefill, OpClass::kAttnDecode}) {
    const std::size_t i = attn == OpClass::kAttnPrefill ? 0 : 1;
    P.index_cls[i] = op_class_profile(hw.cost, attn, Dtype::kFp8);
    P.index_roof[i] = roof_for(hw, attn, Dtype::kFp8, 1);  // the roof its entry was fitted to
  }
  if (!(hw.pcie_bandwidth > 0)) {
    throw Error(ErrorLocation{hw.name, 0, 0, "pcie_bandwidth"},
                "expected a positive PCIe bandwidth (swap time)");
  }
  P.pcie_bandwidth = hw.pcie_bandwidth;
  P.overhead_s = options.step_overhead_s.value_or(hw.cost.step_overhead_s);
  P.seq_overhead_s = hw.cost.seq_overhead_s + options.engine_seq_overhead_s;
  P.prefill_token_overhead_s = hw.cost.prefill_token_overhead_s;
  P.context_token_overhead_s =
      options.context_token_overhead_s.value_or(hw.cost.context_token_overhead_s);
  P.overlap_overhead = options.async_scheduling;
  for (const auto& [field, value] :
       {std::pair{"step_overhead", P.overhead_s}, std::pair{"seq_overhead", P.seq_overhead_s},
        std::pair{"prefill_token_overhead", P.prefill_token_overhead_s},
        std::pair{"context_token_overhead", P.context_token_overhead_s}}) {
    if (!(value >= 0) || !std::isfinite(value)) {
      throw Error(ErrorLocation{"", 0, 0, field},
                  "expected a non-negative time, got " + std::to_string(value));
    }
  }
  if (options.use_tables) P.tables = TableIndex(hw.cost.tables);
  const auto quant_peak = hw.peak_flops_for(P.dtypes.quant_compute);
  if (!quant_peak) {
    throw Error(ErrorLocation{hw.name, 0, 0, "peak_tflops"},
                "expected a peak FLOP/s for " +
                    std::string(model::dtype_name(P.dtypes.quant_compute)) +
                    " (the quantized GEMMs' compute type)");
  }
  P.quant_peak_flops = *quant_peak;
  P.quant_gemm_cls = op_class_profile(hw.cost, OpClass::kGemm, P.dtypes.quant_compute);
  P.quant_dequantizes = P.dtypes.quant_dequantizes;
}

// Layers that cost the same: (layer kind, block kind, MoE or dense).
struct LayerKey {
  model::LayerKind kind;
  model::BlockKind block;
  bool moe;
  bool operator<(const LayerKey& o) const {
    return std::tie(kind, block, moe) < std::tie(o.kind, o.block, o.moe);
  }
};

struct LayerCensus {
  std::map<LayerKey, std::int64_t> counts;
  std::map<LayerKey, std::int64_t> first;  // each group's first layer (its quantized modules)
};

LayerCensus count_layers(const model::ModelSpec& m) {
  LayerCensus census;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(m.layer_kinds.size()); ++i) {
    const model::BlockKind block = m.block_kind(i);
    const LayerKey key{m.layer_kinds[static_cast<std::size_t>(i)], block, m.moe.is_moe_layer(i)};
    ++census.counts[key];
    census.first.emplace(key, i);
  }
  return census;
}

// Turns each layer group, and the head, into op templates; records the measured tables and
// kernel families they use.
class TemplateBuilder {
 public:
  TemplateBuilder(const model::ModelSpec& m, std::int64_t p, const ElementBytes& b, Plan& P)
      : m_(m),
        att_(m.attention),
        p_(p),
        b_(b),
        P_(P),
        h_(m.hidden_size),
        hq_(att_.num_q_heads / p),
        gate_(m.gated_mlp ? 2.0 : 1.0) {}

  // `first_layer`: the group's first layer, whose modules decide which GEMMs are quantized.
  LayerGroup layer_group(const LayerKey& key, std::int64_t count, std::int64_t first_layer,
                         double ssm_state_per_layer);
  void add_head();
  // Sets the table count and sorts the kernel families.
  void finish();

 private:
  const PreparedTable* find_table(OpClass op, Dtype dt,
                                  const std::vector<std::pair<std::string, std::int64_t>>& shape);
  GemmTemplate gemm(OpId op, Rows rows, std::int64_t n, std::int64_t k, std::int64_t batch,
                    double weight_bytes);
  // A linear layer's GEMM: quantized unless ModelSpec::quantization keeps `module` (vLLM's name
  // in the current layer) at the model's dtype.
  GemmTemplate linear(OpId op, Rows rows, std::int64_t n, std::int64_t k, const char* module);
  bool quantized(const char* module) const {
    return model::is_quantized_module(m_.quantization, layer_, module);
  }
  void add_ssm(LayerGroup& g, double ssm_state_per_layer);
  void add_gated_delta_net(LayerGroup& g, double state_per_layer);
  void add_mla_attention(LayerGroup& g);
  void add_sparse_mla_attention(LayerGroup& g);
  void add_attention(LayerGroup& g, model::LayerKind kind);
  void add_moe(LayerGroup& g);
  void add_dense_mlp(LayerGroup& g);

  const model::ModelSpec& m_;
  const model::AttentionSpec& att_;
  const std::int64_t p_;
  const ElementBytes b_;
  Plan& P_;
  const std::int64_t h_;     // hidden size
  const std::int64_t hq_;    // query heads per GPU
  const double gate_;        // 2 for a gated MLP (gate + up), 1 otherwise
  std::int64_t layer_ = -1;  // the layer group's first layer
  std::set<const PreparedTable*> used_;
};

const PreparedTable* TemplateBuilder::find_table(
    OpClass op, Dtype dt, const std::vector<std::pair<std::string, std::int64_t>>& shape) {
  const PreparedTable* t =
      P_.tables.find(table_key(op_class_name(op), model::dtype_name(dt), shape));
  if (t) used_.insert(t);
  return t;
}

GemmTemplate TemplateBuilder::gemm(OpId op, Rows rows, std::int64_t n, std::int64_t k,
                                   std::int64_t batch, double weight_bytes) {
  const double ga = b_.ga;
  if (weight_bytes == ga) {
    const std::array<std::int64_t, 3> f = {n, k, batch};
    if (std::find(P_.families.gemms.begin(), P_.families.gemms.end(), f) ==
        P_.families.gemms.end()) {
      P_.families.gemms.push_back(f);
    }
  }
  GemmTemplate t;
  t.op = op, t.rows = rows;
  t.n = static_cast<double>(n), t.k = static_cast<double>(k), t.batch = static_cast<double>(batch);
  t.a = ga, t.w = weight_bytes, t.c = b_.gc;
  // Tables are measured with weights in the compute dtype.
  if (weight_bytes == ga) {
    t.table =
        find_table(OpClass::kGemm, P_.dtypes.gemm_compute, {{"n", n}, {"k", k}, {"batch", batch}});
  }
  return t;
}

GemmTemplate TemplateBuilder::linear(OpId op, Rows rows, std::int64_t n, std::int64_t k,
                                     const char* module) {
  if (!quantized(module)) return gemm(op, rows, n, k, 1, b_.w);
  GemmTemplate t;
  t.op = op, t.rows = rows;
  t.n = static_cast<double>(n), t.k = static_cast<double>(k);
  t.a = b_.qa, t.c = gemm_output_bytes(b_.act16), t.quantized = true;
  t.w = model::quantized_bytes_per_element(m_.quantization, static_cast<std::uint64_t>(k));
  return t;
}

LayerGroup TemplateBuilder::layer_group(const LayerKey& key, std::int64_t count,
                                        std::int64_t first_layer, double ssm_state_per_layer) {
  const double a = b_.a;
  layer_ = first_layer;
  LayerGroup g;
  g.count = static_cast<double>(count);
  const bool two_sublayers = key.block == model::BlockKind::kAttentionMlp ||
                             key.block == model::BlockKind::kLinearAttentionMlp;
  const bool has_mlp = two_sublayers || key.block == model::BlockKind::kMlpOnly;
  g.attention =
      key.kind != model::LayerKind::kNoKvCache && (key.block == model::BlockKind::kAttentionMlp ||
                                                   key.block == model::BlockKind::kAttentionOnly);
  g.window = key.kind == model::LayerKind::kSlidingWindow ? att_.sliding_window : 0;
  g.mla = att_.kind == model::AttentionKind::kMla;
  if (g.attention && g.mla && att_.indexer.enabled()) g.window = att_.indexer.topk;
  // Norms (norms_per_layer for an ordinary block, one for a single-op hybrid block) and the
  // residual adds, per token.
  const std::int64_t norms = two_sublayers ? std::max<std::int64_t>(m_.norms_per_layer, 1) : 1;
  for (std::int64_t n = 0; n < norms; ++n) g.elementwise.push_back({kNorms, 2.0 * h_ * a, 0});
  for (int n = 0; n < (two_sublayers ? 2 : 1); ++n)
    g.elementwise.push_back({kNorms, 3.0 * h_ * a, 0});
  P_.allreduces += (m_.parallel_attention_mlp || !two_sublayers ? 1.0 : 2.0) * g.count;
  if (key.block == model::BlockKind::kMamba && m_.ssm.enabled()) add_ssm(g, ssm_state_per_layer);
  if (key.block == model::BlockKind::kLinearAttentionMlp) {
    add_gated_delta_net(g, ssm_state_per_layer);
  }
  if (g.attention && g.mla) {
    add_mla_attention(g);
  } else if (g.attention) {
    add_attention(g, key.kind);
  }
  if (key.moe && has_mlp) {
    add_moe(g);
  } else if (has_mlp && m_.intermediate_size > 0) {
    add_dense_mlp(g);
  }
  return g;
}

void TemplateBuilder::add_ssm(LayerGroup& g, double ssm_state_per_layer) {
  const auto& ssm = m_.ssm;
  const std::int64_t heads_p = ceil_div(ssm.num_heads, p_);
  const std::int64_t groups_p = ceil_div(std::max<std::int64_t>(ssm.num_groups, 1), p_);
  const std::int64_t inner = heads_p * ssm.head_dim;
  g.gemms.push_back(linear(kSsm, Rows::kTokens, 2 * inner + 2 * groups_p * ssm.state_size + heads_p,
                           h_, "mixer.in_proj"));
  g.gemms.push_back(linear(kSsm, Rows::kTokens, h_, inner, "mixer.out_proj"));
  // Convolution, scan and gating over the inner width, and the state read and written once
  // per sequence.
  g.elementwise.push_back(
      {kSsm, 4.0 * static_cast<double>(inner) * b_.a, 2.0 * ssm_state_per_layer});
}

void TemplateBuilder::add_gated_delta_net(LayerGroup& g, double state_per_layer) {
  const auto& gdn = m_.gdn;
  const std::int64_t kw = ceil_div(gdn.num_key_heads, p_) * gdn.key_head_dim;
  const std::int64_t vh = ceil_div(gdn.num_value_heads, p_);
  const std::int64_t vw = vh * gdn.value_head_dim;
  const double a = b_.a;
  g.gemms.push_back(linear(kSsm, Rows::kTokens, 2 * kw + 2 * vw, h_, "linear_attn.in_proj_qkvz"));
  g.gemms.push_back(linear(kSsm, Rows::kTokens, 2 * vh, h_, "linear_attn.in_proj_ba"));
  g.gemms.push_back(linear(kSsm, Rows::kTokens, h_, vw, "linear_attn.out_proj"));
  // Memory-bound terms, as for the Mamba mixer: per token, the conv over q/k/v (read and
  // written), the delta-rule kernel's q/k/v in and output out, and the gated norm over the output
  // and z; per sequence, the state read and written once. A prefill's chunked kernel also writes
  // and reads the state at each 64-token chunk boundary: 2 × state / 64 per token.
  const double conv = static_cast<double>(2 * kw + vw);
  const double per_token = (2.0 * conv + conv + static_cast<double>(vw) + 3.0 * vw) * a;
  g.elementwise.push_back({kSsm, per_token + 2.0 * state_per_layer / 64.0, 2.0 * state_per_layer});
}

void TemplateBuilder::add_mla_attention(LayerGroup& g) {
  const double a = b_.a, c = b_.c, w = b_.w;
  const auto& mla = att_.mla;
  const std::int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  const std::int64_t v = mla.v_head_dim > 0 ? mla.v_head_dim : att_.head_dim;
  const std::int64_t latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
  if (mla.q_lora_rank > 0) {
    g.gemms.push_back(linear(kQkv, Rows::kTokens, mla.q_lora_rank, h_, "self_attn.q_a_proj"));
    g.gemms.push_back(linear(kQkv, Rows::kTokens, hq_ * qk, mla.q_lora_rank, "self_attn.q_b_proj"));
  } else {
    g.gemms.push_back(linear(kQkv, Rows::kTokens, hq_ * qk, h_, "self_attn.q_proj"));
  }
  g.gemms.push_back(linear(kQkv, Rows::kTokens, latent, h_, "self_attn.kv_a_proj_with_mqa"));
  if (att_.indexer.enabled()) {
    add_sparse_mla_attention(g);
    return;
  }
  // Prefill: decompress K (nope part) and V of every key of the chunk from the latent.
  g.gemms.push_back(linear(kAttnPrefill, Rows::kPrefillKeys, hq_ * (mla.qk_nope_head_dim + v),
                           mla.kv_lora_rank, "self_attn.kv_b_proj"));
  // Decode (weight absorption): q_nope → latent space, and latent → v, per head (vLLM
  // dequantizes these absorbed kv_b_proj halves to the model's dtype when loading).
  g.gemms.push_back(
      gemm(kAttnDecode, Rows::kDecodes, mla.kv_lora_rank, mla.qk_nope_head_dim, hq_, w));
  g.gemms.push_back(gemm(kAttnDecode, Rows::kDecodes, v, mla.kv_lora_rank, hq_, w));
  g.gemms.push_back(linear(kOProj, Rows::kTokens, h_, hq_ * v, "self_attn.o_proj"));
  g.prefill_geom.q_heads = static_cast<double>(hq_);
  g.prefill_geom.qk_dim = static_cast<double>(qk);
  g.prefill_geom.v_dim = static_cast<double>(v);
  g.prefill_geom.kv_read_bytes = static_cast<double>(hq_ * (qk + v)) * a;  // decompressed
  g.prefill_geom.kv_write_bytes = static_cast<double>(latent) * c;
  g.prefill_geom.act_bytes = a;
  g.decode_geom.q_heads = static_cast<double>(hq_);
  g.decode_geom.qk_dim = static_cast<double>(latent);
  g.decode_geom.v_dim = static_cast<double>(mla.kv_lora_rank);
  g.decode_geom.kv_read_bytes = static_cast<double>(latent) * c;
  g.decode_geom.kv_write_bytes = static_cast<double>(latent) * c;
  g.decode_geom.act_bytes = a;
  g.elementwise.push_back(
      {kNorms, 2.0 * static_cast<double>((hq_ + 1) * mla.qk_rope_head_dim) * a, 0});
}

// DeepSeek Sparse Attention (vLLM's FlashMLA sparse backend): every token, prefill or decode,
// runs the absorbed form over the latent, attending its top-k keys (the group's window), so no
// key is decompressed; the cache rows are read as stored (fp8_ds_mla: 656 B). The lightning
// indexer, whole on every GPU, projects its queries, key and head weights per token and scores
// every cached key: an fp8 MQA of its heads over its own key cache (attn_index), whose logits
// are written and read back for the top-k.
void TemplateBuilder::add_sparse_mla_attention(LayerGroup& g) {
  const double a = b_.a, w = b_.w;
  const auto& mla = att_.mla;
  const auto& ix = att_.indexer;
  const std::int64_t v = mla.v_head_dim > 0 ? mla.v_head_dim : att_.head_dim;
  const std::int64_t latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
  model::KvFormat format;
  format.dtype = P_.dtypes.kv;
  const auto row = static_cast<double>(model::mla_latent_row_bytes(att_, format));
  // The absorbed kv_b_proj halves, per head, over every token (token-shaped: q and o sides).
  g.gemms.push_back(gemm(kQkv, Rows::kTokens, mla.kv_lora_rank, mla.qk_nope_head_dim, hq_, w));
  g.gemms.push_back(gemm(kOProj, Rows::kTokens, v, mla.kv_lora_rank, hq_, w));
  g.gemms.push_back(linear(kOProj, Rows::kTokens, h_, hq_ * v, "self_attn.o_proj"));
  AttentionGeometry geom;
  geom.q_heads = static_cast<double>(hq_);
  geom.qk_dim = static_cast<double>(latent);
  geom.v_dim = static_cast<double>(mla.kv_lora_rank);
  geom.kv_read_bytes = geom.kv_write_bytes = row;
  geom.act_bytes = a;
  g.prefill_geom = g.decode_geom = geom;
  g.elementwise.push_back(
      {kNorms, 2.0 * static_cast<double>((hq_ + 1) * mla.qk_rope_head_dim) * a, 0});
  // The indexer: queries from the low-rank query (else the hidden state), key, head weights.
  const std::int64_t q_in = mla.q_lora_rank > 0 ? mla.q_lora_rank : h_;
  g.gemms.push_back(
      linear(kQkv, Rows::kTokens, ix.heads * ix.head_dim, q_in, "self_attn.indexer.wq_b"));
  g.gemms.push_back(linear(kQkv, Rows::kTokens, ix.head_dim, h_, "self_attn.indexer.wk"));
  g.gemms.push_back(gemm(kQkv, Rows::kTokens, ix.heads, h_, 1, w));  // weights_proj (16-bit)
  // Its key norm, rope and the fp8 quantization of queries and key.
  g.elementwise.push_back({kNorms, 3.0 * static_cast<double>((ix.heads + 1) * ix.head_dim) * a, 0});
  g.index_geom.q_heads = static_cast<double>(ix.heads);
  g.index_geom.qk_dim = static_cast<double>(ix.head_dim);
  g.index_geom.v_dim = 0;
  g.index_geom.kv_read_bytes = g.index_geom.kv_write_bytes =
      static_cast<double>(model::indexer_key_row_bytes(ix));
  g.index_geom.act_bytes = 1;  // fp8 queries
}

void TemplateBuilder::add_attention(LayerGroup& g, model::LayerKind kind) {
  const double a = b_.a;
  // The cache's own geometry: K = V (one tensor) only where the KV math stores no V.
  const model::LayerKvGeometry lg = model::layer_kv_geometry(m_, kind);
  const std::int64_t hd = lg.k_dim;
  const std::int64_t vd = lg.v_dim;
  const std::int64_t kvg = model::kv_heads_per_rank(lg.kv_heads, p_);
  const std::int64_t kv_cols = lg.stores_v ? kvg * (hd + vd) : kvg * hd;
  // With an output gate the query projection also yields the gate, applied to the output.
  const std::int64_t q_cols = hq_ * hd * (att_.output_gate ? 2 : 1);
  g.gemms.push_back(linear(kQkv, Rows::kTokens, q_cols + kv_cols, h_, "self_attn.q_proj"));
  if (att_.output_gate) {
    g.elementwise.push_back({kNorms, 3.0 * static_cast<double>(hq_ * vd) * a, 0});
  }
  g.gemms.push_back(linear(kOProj, Rows::kTokens, h_, hq_ * vd, "self_attn.o_proj"));
  AttentionGeometry geom;
  geom.q_heads = static_cast<double>(hq_);
  geom.qk_dim = static_cast<double>(hd);
  geom.v_dim = static_cast<double>(vd);
  geom.kv_read_bytes = geom.kv_write_bytes = static_cast<double>(kv_cols) * b_.c;
  geom.act_bytes = a;
  g.prefill_geom = g.decode_geom = geom;
  g.elementwise.push_back({kNorms, 2.0 * static_cast<double>((hq_ + kvg) * hd) * a, 0});  // rope
  if (m_.qk_norm)
    g.elementwise.push_back({kNorms, 2.0 * static_cast<double>((hq_ + kvg) * hd) * a, 0});
  if (lg.stores_v && hd == vd) {
    const std::array<std::int64_t, 3> f = {hq_, kvg, hd};
    auto& fams = P_.families.attention;
    if (std::find(fams.begin(), fams.end(), f) == fams.end()) fams.push_back(f);
  }
  if (g.window == 0 && lg.stores_v && hd == vd) {
    g.prefill_table =
        find_table(OpClass::kAttnPrefill, P_.dtypes.kv,
                   {{"batch", 1}, {"q_heads", hq_}, {"kv_heads", kvg}, {"head_dim", hd}});
    g.decode_table = find_table(OpClass::kAttnDecode, P_.dtypes.kv,
                                {{"q_heads", hq_}, {"kv_heads", kvg}, {"head_dim", hd}});
  }
}

void TemplateBuilder::add_moe(LayerGroup& g) {
  const double a = b_.a, w = b_.w;
  g.moe = true;
  const auto& moe = m_.moe;
  MoeTemplate& t = g.moe_t;
  MoeGeometry& geo = t.geo;
  geo.experts = static_cast<double>(moe.num_experts);
  geo.top_k = static_cast<double>(moe.experts_per_token);
  geo.hidden = static_cast<double>(h_);
  // Spread over the TP group, or over every data-parallel rank's GPUs (model/expert_parallel.h).
  const std::int64_t ranks = moe.shard_ranks > 0 ? moe.shard_ranks : p_;
  std::int64_t width = moe.expert_intermediate_size;
  if (moe.expert_parallel) {
    geo.local_experts = static_cast<double>(ceil_div(moe.num_experts, ranks));
    geo.assignment_share = 1.0 / static_cast<double>(ranks);
  } else {
    geo.local_experts = geo.experts;
    width = ceil_div(moe.expert_intermediate_size, ranks);
  }
  geo.width = static_cast<double>(width);
  P_.moe_layers += g.count;
  geo.gate_factor = gate_;
  geo.w = w, geo.a = b_.ga;
  t.weight_dtype = P_.dtypes.weight;
  t.quantized = quantized("mlp.experts");
  if (t.quantized) {
    geo.a = b_.qa;
    geo.w = model::quantized_bytes_per_element(m_.quantization, static_cast<std::uint64_t>(h_));
    t.weight_dtype = P_.dtypes.quant_weight;
  }
  if (moe.has_expert_dtype) {
    // Routed experts stored in their own type (e.g. MXFP4) with one 8-bit scale per group.
    geo.w =
        dtype_bytes(moe.expert_dtype) +
        (moe.expert_scale_group_size > 0 ? 1.0 / static_cast<double>(moe.expert_scale_group_size)
                                         : 0.0);
    t.weight_dtype = moe.expert_dtype;
  }
  // The kernel's activations: vLLM's fused-MoE kernels over int4 (AWQ/GPTQ) experts, and over
  // any quantized experts on a GPU without tensor cores for their type, dequantize them and
  // multiply in 16 bits; over MXFP4 experts (gpt-oss's own, or --quantization mxfp4) they take the
  // deployment's MXFP4 backend's activations (bf16 by default, also on Blackwell: FlashInfer's
  // MXFP4 x BF16 kernel; MXFP8 when asked). fp8, int8 and NVFP4 experts run W8A8 / W4A4.
  t.activation_bits = model::has_mxfp4_experts(m_)                 ? moe.mxfp4_activation_bits
                      : t.quantized && P_.dtypes.quant_dequantizes ? 16
                                                                   : 0;
  // Experts the method left unconverted (16-bit) have no wider activations.
  if (!activation_key(OpClass::kMoe, t.weight_dtype, t.activation_bits)) t.activation_bits = 0;
  t.block_scales = t.quantized && m_.quantization.scales == model::ScaleLayout::kBlock &&
                   block_key(OpClass::kMoe, t.weight_dtype, true).has_value();
  if (t.activation_bits > 0) geo.a = t.activation_bits / 8.0;
  if (!moe.expert_parallel && gate_ == 2.0) {
    // A measured fused-MoE kernel of this shape (tables hold gated layers, every expert on the
    // GPU), keyed as table_coordinates keys it.
    std::vector<std::pair<std::string, std::int64_t>> shape = {
        {"n", width}, {"k", h_}, {"experts", moe.num_experts}, {"top_k", moe.experts_per_token}};
    if (t.activation_bits > 0) shape.emplace_back("a", t.activation_bits);
    if (t.block_scales) shape.emplace_back("block", 1);
    t.table = find_table(OpClass::kMoe, t.weight_dtype, shape);
  }
  g.gemms.push_back(gemm(kMoe, Rows::kTokens, moe.num_experts, h_, 1, w));  // router
  if (moe.num_shared_experts > 0) {
    const std::int64_t shared = moe.num_shared_experts * moe.shared_expert_size();
    const std::int64_t shared_p = ceil_div(shared, p_);
    g.gemms.push_back(linear(kMoe, Rows::kTokens, static_cast<std::int64_t>(gate_) * shared_p, h_,
                             "mlp.shared_experts"));
    g.gemms.push_back(linear(kMoe, Rows::kTokens, h_, shared_p, "mlp.shared_experts"));
    g.elementwise.push_back({kNorms, (gate_ + 1.0) * static_cast<double>(shared_p) * a, 0});
  }
  // Expert activation and the token permutation (gather + scatter of hidden rows), part of a
  // fused-MoE kernel's time where the profile fitted one (set_moe_class drops it then).
  g.moe_permute = static_cast<std::int64_t>(g.elementwise.size());
  g.elementwise.push_back(
      {kNorms, geo.top_k * ((gate_ + 1.0) * geo.width + 4.0 * static_cast<double>(h_)) * a, 0});
}

void TemplateBuilder::add_dense_mlp(LayerGroup& g) {
  const std::int64_t inter_p = ceil_div(m_.intermediate_size, p_);
  g.gemms.push_back(linear(kMlp, Rows::kTokens, static_cast<std::int64_t>(gate_) * inter_p, h_,
                           m_.gated_mlp ? "mlp.gate_proj" : "mlp.up_proj"));
  g.gemms.push_back(linear(kMlp, Rows::kTokens, h_, inter_p, "mlp.down_proj"));
  g.elementwise.push_back({kNorms, (gate_ + 1.0) * static_cast<double>(inter_p) * b_.a, 0});
}

void TemplateBuilder::add_head() {
  const double a = b_.a;
  if (p_ > 1) {
    P_.allreduce_bytes_per_token = static_cast<double>(h_) * a;
    P_.allreduce_table = find_table(OpClass::kAllreduce, b_.act16, {{"num_gpus", p_}});
  }
  // A pipeline stage runs the embedding only when it is the first, the head only when the last.
  if (m_.holds_embedding) {
    P_.head_elementwise.push_back({kEmbed, 2.0 * static_cast<double>(h_) * a, 0});
  }
  P_.has_head = m_.holds_lm_head;
  if (!m_.holds_lm_head) return;
  P_.final_norm_bytes_per_sample = 2.0 * static_cast<double>(h_) * a;
  P_.head_gemms.push_back(gemm(kLmHead, Rows::kSampling, ceil_div(m_.vocab_size, p_), h_, 1, b_.w));
}

void TemplateBuilder::finish() {
  P_.tables_used = used_.size();
  std::sort(P_.families.gemms.begin(), P_.families.gemms.end());
  std::sort(P_.families.attention.begin(), P_.families.attention.end());
}

// Whether the step's token-shaped ops can be memoized, and under which counts (Plan::id).
void set_memo(Plan& P) {
  static std::atomic<std::uint64_t> next_id{1};
  P.id = next_id.fetch_add(1, std::memory_order_relaxed);
  const auto per_seq = [](const std::vector<ElementwiseTemplate>& es) {
    return std::any_of(es.begin(), es.end(),
                       [](const ElementwiseTemplate& e) { return e.bytes_per_seq != 0; });
  };
  bool attention_gemms = false;
  bool seqs = per_seq(P.head_elementwise);
  for (const LayerGroup& g : P.groups) {
    for (const GemmTemplate& t : g.gemms) {
      attention_gemms = attention_gemms || is_attention_op(t.op) || t.rows == Rows::kDecodes ||
                        t.rows == Rows::kPrefillKeys;
    }
    seqs = seqs || per_seq(g.elementwise);
  }
  P.memo_tokens = !attention_gemms;
  P.memo_keys_sequences = seqs;
  P.memo_keys_moe_tokens = P.moe_layers > 0;
}

}  // namespace

// The fused-MoE class for the routed experts' stored type, where the profile fitted one (no
// datasheet default: without it the experts are costed as GEMMs, with the fitted GEMM curves).
void set_moe_class(Plan& P, const model::HardwareSpec& hw) {
  const auto moe =
      std::find_if(P.groups.begin(), P.groups.end(), [](const LayerGroup& g) { return g.moe; });
  if (moe == P.groups.end()) return;
  const ResolvedEntry entry = resolve_entry(hw.cost, OpClass::kMoe, moe->moe_t.weight_dtype,
                                            moe->moe_t.activation_bits, moe->moe_t.block_scales);
  if (entry.defaulted) return;
  const auto i = static_cast<int>(OpClass::kMoe);
  P.cls[i] = entry.profile;
  P.roof[i] = roof_for(hw, OpClass::kMoe, entry.roof_dtype, 1);
  P.moe_fitted = true;
  for (LayerGroup& g : P.groups) {
    if (g.moe && g.moe_permute >= 0) g.elementwise.erase(g.elementwise.begin() + g.moe_permute);
  }
}

std::unique_ptr<Plan> build_plan(const model::ModelSpec& m, const model::HardwareSpec& hw,
                                 const CostOptions& options) {
  const std::int64_t p = options.tensor_parallel_size;
  check_tensor_parallel(m, p);
  auto plan = std::make_unique<Plan>();
  Plan& P = *plan;
  P.tp = p;
  P.dtypes = resolve_dtypes(m, options);
  resolve_quant_dtypes(m, hw, P.dtypes);
  const ElementBytes bytes = element_bytes(P.dtypes);
  set_roofs(P, hw, options, bytes.act16);
  P.window = m.attention.sliding_window;
  if (m.attention.kind == model::AttentionKind::kMla && m.attention.indexer.enabled()) {
    KVSIM_ASSERT(P.window == 0, "a sparse-attention model has no sliding window");
    P.window = m.attention.indexer.topk;
    P.sparse_window = true;
  }

  const LayerCensus census = count_layers(m);
  const double ssm_state_per_layer = static_cast<double>(model::state_bytes_per_layer(m, p));
  TemplateBuilder builder(m, p, bytes, P);
  for (const auto& [key, count] : census.counts) {
    P.groups.push_back(builder.layer_group(key, count, census.first.at(key), ssm_state_per_layer));
  }
  P.eager_host_s = hw.cost.eager_layer_host_s * static_cast<double>(m.layer_kinds.size());
  builder.add_head();
  builder.finish();
  set_moe_class(P, hw);
  set_memo(P);
  if (options.data_parallel_size > 1 && P.moe_layers > 0) {
    KVSIM_ASSERT(m.moe.shard_ranks == p * options.data_parallel_size,
                 "a data-parallel MoE plan is built from the GPU's model (model::shard_experts)");
    P.dispatch_bytes_per_token = static_cast<double>(m.hidden_size) * bytes.a;
    P.dispatch_link = model::allreduce_link(hw, p * options.data_parallel_size);
    if (!(P.dispatch_link.bandwidth > 0)) {
      throw Error(ErrorLocation{hw.name, 0, 0, P.dispatch_link.field},
                  "expected a positive " + std::string(P.dispatch_link.name) +
                      " bandwidth for the MoE layers' exchange between " +
                      std::to_string(options.data_parallel_size) + " data-parallel ranks");
    }
  }
  return plan;
}

}  // namespace kvsim::cost::roofline
