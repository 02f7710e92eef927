#include "cost/roofline_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/int_math.h"
#include "cost/ops.h"
#include "cost/tables.h"
#include "model/kv_math.h"

namespace kvsim::cost {
namespace {

using model::Dtype;

// Breakdown entries, in execution order.
enum OpId : int {
  kEmbed,
  kQkv,
  kAttnPrefill,
  kAttnDecode,
  kOProj,
  kMlp,
  kMoe,
  kSsm,
  kNorms,
  kAllreduce,
  kLmHead,
  kNumOps
};
constexpr std::array<const char*, kNumOps> kOpNames = {
    "embed", "qkv_proj", "attn_prefill", "attn_decode", "o_proj", "mlp",
    "moe",   "ssm",      "norms",        "allreduce",   "lm_head"};

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
};

struct ElementwiseTemplate {
  OpId op = kNorms;
  double bytes_per_token = 0;  // × tokens of the step
  double bytes_per_seq = 0;    // × sequences of the step (prefills + decodes)
};

struct MoeTemplate {
  double num_experts = 0, top_k = 0;
  double hidden = 0, expert_width = 0;  // expert intermediate per GPU
  double gate_factor = 2;               // 2 for gated experts (gate + up), 1 otherwise
  double w = 2, a = 2;
};

// Layers that cost the same: same attention kind/window and same MLP kind.
struct LayerGroup {
  double count = 0;
  bool attention = false;
  bool mla = false;
  std::int64_t window = 0;  // 0 = full attention
  AttentionGeometry prefill_geom;
  AttentionGeometry decode_geom;
  const PreparedTable* prefill_table = nullptr;  // key batch=1; x1 = q_len, x2 = kv_len
  const PreparedTable* decode_table = nullptr;   // x1 = batch, x2 = kv_len
  std::vector<GemmTemplate> gemms;
  std::vector<ElementwiseTemplate> elementwise;
  bool moe = false;
  MoeTemplate moe_t;
};

struct Aggregates {
  double tokens = 0, prefill_tokens = 0, decodes = 0, sampling = 0, sequences = 0;
  double prefill_keys_full = 0;  // Σ cached + new over prefill chunks
  // Per attention window (index 0 full, 1 sliding): Σ pairs and distinct keys.
  double pre_pairs[2] = {0, 0}, pre_keys[2] = {0, 0};
  double dec_keys[2] = {0, 0};
  double decode_context_sum = 0;
};

struct OpAcc {
  double time_s = 0, flops = 0, bytes = 0, compute_bound_s = 0;
};

}  // namespace

struct RooflineCostModel::Plan {
  ResolvedDtypes dtypes;
  KernelFamilies families;
  std::int64_t tp = 1;
  std::array<model::OpClassProfile, kNumOpClasses> cls;
  std::array<Roof, kNumOpClasses> roof;
  std::vector<std::string> defaulted;
  std::vector<LayerGroup> groups;
  std::int64_t window = 0;
  double allreduces = 0;  // all-reduces per step (one per sublayer; 0 without TP)
  double allreduce_bytes_per_token = 0;
  const PreparedTable* allreduce_table = nullptr;
  std::vector<GemmTemplate> head_gemms;               // LM head
  std::vector<ElementwiseTemplate> head_elementwise;  // embedding gather, final norm
  double final_norm_bytes_per_sample = 0;
  double overhead_s = 0;
  double pcie_bandwidth = 0;
  TableIndex tables;
  std::size_t tables_used = 0;

  // Accumulates the whole step into acc[]; returns the total seconds (overhead included).
  double run(const StepBatch& batch, OpAcc* acc) const;

  void add(OpAcc* acc, OpId op, OpClass cls_id, const Work& work, double multiplicity,
           double table_time_s) const {
    const KernelTime kt =
        roofline_time(cls[static_cast<int>(cls_id)], roof[static_cast<int>(cls_id)].peak_flops,
                      roof[static_cast<int>(cls_id)].bandwidth,
                      roof[static_cast<int>(cls_id)].extra_latency_s, work);
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
    const Work w = gemm_work(m, t.n, t.k, t.batch, t.a, t.w, t.c);
    const double table_time = t.table ? t.table->lookup(m, 0.0) : -1.0;
    add(acc, t.op, OpClass::kGemm, w, mult, table_time);
  }
};

namespace {

Error tp_error(const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, "tensor_parallel_size"}, message);
}

}  // namespace

RooflineCostModel::RooflineCostModel(const model::ModelSpec& m, const model::HardwareSpec& hw,
                                     const CostOptions& options) {
  auto plan = std::make_unique<Plan>();
  Plan& P = *plan;
  const std::int64_t p = options.tensor_parallel_size;
  const auto& att = m.attention;
  if (p < 1) throw tp_error("expected a positive integer, got " + std::to_string(p));
  if (att.num_q_heads > 0 && att.num_q_heads % p != 0) {
    throw tp_error("expected a divisor of the " + std::to_string(att.num_q_heads) +
                   " query heads of " + m.name + ", got " + std::to_string(p));
  }
  if (att.kind != model::AttentionKind::kMla && att.num_kv_heads > 0) {
    const bool ok = att.num_kv_heads >= p ? att.num_kv_heads % p == 0 : p % att.num_kv_heads == 0;
    if (!ok) {
      throw tp_error("expected a divisor or a multiple of the " + std::to_string(att.num_kv_heads) +
                     " KV heads of " + m.name + ", got " + std::to_string(p));
    }
  }
  P.tp = p;

  // Dtypes.
  ResolvedDtypes& d = P.dtypes;
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
  const Dtype act16 = d.activation == Dtype::kFp8 ? Dtype::kBf16 : d.activation;
  const double a = dtype_bytes(act16);
  const double ga = dtype_bytes(d.gemm_compute);
  const double w = dtype_bytes(d.weight);
  const double c = dtype_bytes(d.kv);
  const double gc = gemm_output_bytes(d.gemm_compute);

  // Op-class profiles and roofs.
  for (int i = 0; i < kNumOpClasses; ++i) {
    const auto cls_id = static_cast<OpClass>(i);
    bool defaulted = false;
    P.cls[i] = op_class_profile(hw.cost, cls_id, &defaulted);
    if (defaulted) P.defaulted.emplace_back(op_class_name(cls_id));
    const Dtype roof_dtype = cls_id == OpClass::kGemm ? d.gemm_compute : act16;
    P.roof[i] = roof_for(hw, cls_id, roof_dtype, cls_id == OpClass::kAllreduce ? p : 1);
  }
  if (!(hw.pcie_bandwidth > 0)) {
    throw Error(ErrorLocation{hw.name, 0, 0, "pcie_bandwidth"},
                "expected a positive PCIe bandwidth (swap time)");
  }
  P.pcie_bandwidth = hw.pcie_bandwidth;
  P.overhead_s = options.step_overhead_s.value_or(hw.cost.step_overhead_s);
  if (!(P.overhead_s >= 0) || !std::isfinite(P.overhead_s)) {
    throw Error(ErrorLocation{"", 0, 0, "step_overhead"},
                "expected a non-negative time, got " + std::to_string(P.overhead_s));
  }
  if (options.use_tables) P.tables = TableIndex(hw.cost.tables);
  std::set<const PreparedTable*> used;
  auto find_table = [&](OpClass op, Dtype dt,
                        const std::vector<std::pair<std::string, std::int64_t>>& shape) {
    const PreparedTable* t =
        P.tables.find(table_key(op_class_name(op), model::dtype_name(dt), shape));
    if (t) used.insert(t);
    return t;
  };
  auto gemm_t = [&](OpId op, Rows rows, std::int64_t n, std::int64_t k, std::int64_t batch,
                    double weight_bytes) {
    if (weight_bytes == ga) {
      const std::array<std::int64_t, 3> f = {n, k, batch};
      if (std::find(P.families.gemms.begin(), P.families.gemms.end(), f) ==
          P.families.gemms.end()) {
        P.families.gemms.push_back(f);
      }
    }
    GemmTemplate t;
    t.op = op, t.rows = rows;
    t.n = static_cast<double>(n), t.k = static_cast<double>(k),
    t.batch = static_cast<double>(batch);
    t.a = ga, t.w = weight_bytes, t.c = gc;
    // Tables are measured with weights in the compute dtype.
    if (weight_bytes == ga) {
      t.table = find_table(OpClass::kGemm, d.gemm_compute, {{"n", n}, {"k", k}, {"batch", batch}});
    }
    return t;
  };

  const std::int64_t h = m.hidden_size;
  const std::int64_t hq = att.num_q_heads / p;
  const std::int64_t inter_p = ceil_div(m.intermediate_size, p);
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  P.window = att.sliding_window;

  // Group the layers: (layer kind, block kind, MoE or dense).
  struct Key {
    model::LayerKind kind;
    model::BlockKind block;
    bool moe;
    bool operator<(const Key& o) const {
      return std::tie(kind, block, moe) < std::tie(o.kind, o.block, o.moe);
    }
  };
  std::map<Key, std::int64_t> counts;
  std::int64_t num_mamba = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(m.layer_kinds.size()); ++i) {
    const model::BlockKind block = m.block_kind(i);
    num_mamba += block == model::BlockKind::kMamba ? 1 : 0;
    ++counts[Key{m.layer_kinds[static_cast<std::size_t>(i)], block, m.moe.is_moe_layer(i)}];
  }
  const double ssm_state_per_layer =
      num_mamba > 0 ? static_cast<double>(model::ssm_state_bytes_per_sequence(m, p)) /
                          static_cast<double>(num_mamba)
                    : 0.0;

  for (const auto& [key, count] : counts) {
    LayerGroup g;
    g.count = static_cast<double>(count);
    const bool two_sublayers = key.block == model::BlockKind::kAttentionMlp;
    const bool has_mlp =
        key.block == model::BlockKind::kAttentionMlp || key.block == model::BlockKind::kMlpOnly;
    g.attention =
        key.kind != model::LayerKind::kNoKvCache && (key.block == model::BlockKind::kAttentionMlp ||
                                                     key.block == model::BlockKind::kAttentionOnly);
    g.window = key.kind == model::LayerKind::kSlidingWindow ? att.sliding_window : 0;
    g.mla = att.kind == model::AttentionKind::kMla;
    // Norms (norms_per_layer for an ordinary block, one for a single-op hybrid block) and the
    // residual adds, per token.
    const std::int64_t norms = two_sublayers ? std::max<std::int64_t>(m.norms_per_layer, 1) : 1;
    for (std::int64_t n = 0; n < norms; ++n) g.elementwise.push_back({kNorms, 2.0 * h * a, 0});
    for (int n = 0; n < (two_sublayers ? 2 : 1); ++n)
      g.elementwise.push_back({kNorms, 3.0 * h * a, 0});
    P.allreduces += (m.parallel_attention_mlp || !two_sublayers ? 1.0 : 2.0) * g.count;
    if (key.block == model::BlockKind::kMamba && m.ssm.enabled()) {
      const auto& ssm = m.ssm;
      const std::int64_t heads_p = ceil_div(ssm.num_heads, p);
      const std::int64_t groups_p = ceil_div(std::max<std::int64_t>(ssm.num_groups, 1), p);
      const std::int64_t inner = heads_p * ssm.head_dim;
      g.gemms.push_back(gemm_t(kSsm, Rows::kTokens,
                               2 * inner + 2 * groups_p * ssm.state_size + heads_p, h, 1, w));
      g.gemms.push_back(gemm_t(kSsm, Rows::kTokens, h, inner, 1, w));
      // Convolution, scan and gating over the inner width, and the state read and written once
      // per sequence.
      g.elementwise.push_back(
          {kSsm, 4.0 * static_cast<double>(inner) * a, 2.0 * ssm_state_per_layer});
    }
    if (g.attention && g.mla) {
      const auto& mla = att.mla;
      const std::int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
      const std::int64_t v = mla.v_head_dim > 0 ? mla.v_head_dim : att.head_dim;
      const std::int64_t latent = mla.kv_lora_rank + mla.qk_rope_head_dim;
      if (mla.q_lora_rank > 0) {
        g.gemms.push_back(gemm_t(kQkv, Rows::kTokens, mla.q_lora_rank, h, 1, w));
        g.gemms.push_back(gemm_t(kQkv, Rows::kTokens, hq * qk, mla.q_lora_rank, 1, w));
      } else {
        g.gemms.push_back(gemm_t(kQkv, Rows::kTokens, hq * qk, h, 1, w));
      }
      g.gemms.push_back(gemm_t(kQkv, Rows::kTokens, latent, h, 1, w));
      // Prefill: decompress K (nope part) and V of every key of the chunk from the latent.
      g.gemms.push_back(gemm_t(kAttnPrefill, Rows::kPrefillKeys, hq * (mla.qk_nope_head_dim + v),
                               mla.kv_lora_rank, 1, w));
      // Decode (weight absorption): q_nope → latent space, and latent → v, per head.
      g.gemms.push_back(
          gemm_t(kAttnDecode, Rows::kDecodes, mla.kv_lora_rank, mla.qk_nope_head_dim, hq, w));
      g.gemms.push_back(gemm_t(kAttnDecode, Rows::kDecodes, v, mla.kv_lora_rank, hq, w));
      g.gemms.push_back(gemm_t(kOProj, Rows::kTokens, h, hq * v, 1, w));
      g.prefill_geom.q_heads = static_cast<double>(hq);
      g.prefill_geom.qk_dim = static_cast<double>(qk);
      g.prefill_geom.v_dim = static_cast<double>(v);
      g.prefill_geom.kv_read_bytes = static_cast<double>(hq * (qk + v)) * a;  // decompressed
      g.prefill_geom.kv_write_bytes = static_cast<double>(latent) * c;
      g.prefill_geom.act_bytes = a;
      g.decode_geom.q_heads = static_cast<double>(hq);
      g.decode_geom.qk_dim = static_cast<double>(latent);
      g.decode_geom.v_dim = static_cast<double>(mla.kv_lora_rank);
      g.decode_geom.kv_read_bytes = static_cast<double>(latent) * c;
      g.decode_geom.kv_write_bytes = static_cast<double>(latent) * c;
      g.decode_geom.act_bytes = a;
      g.elementwise.push_back(
          {kNorms, 2.0 * static_cast<double>((hq + 1) * mla.qk_rope_head_dim) * a, 0});
    } else if (g.attention) {
      // The cache's own geometry: K = V (one tensor) only where the KV math stores no V.
      const model::LayerKvGeometry lg = model::layer_kv_geometry(m, key.kind);
      const std::int64_t hd = lg.k_dim;
      const std::int64_t vd = lg.v_dim;
      const std::int64_t kvg = model::kv_heads_per_rank(lg.kv_heads, p);
      const std::int64_t kv_cols = lg.stores_v ? kvg * (hd + vd) : kvg * hd;
      g.gemms.push_back(gemm_t(kQkv, Rows::kTokens, hq * hd + kv_cols, h, 1, w));
      g.gemms.push_back(gemm_t(kOProj, Rows::kTokens, h, hq * vd, 1, w));
      AttentionGeometry geom;
      geom.q_heads = static_cast<double>(hq);
      geom.qk_dim = static_cast<double>(hd);
      geom.v_dim = static_cast<double>(vd);
      geom.kv_read_bytes = geom.kv_write_bytes = static_cast<double>(kv_cols) * c;
      geom.act_bytes = a;
      g.prefill_geom = g.decode_geom = geom;
      g.elementwise.push_back({kNorms, 2.0 * static_cast<double>((hq + kvg) * hd) * a, 0});  // rope
      if (m.qk_norm)
        g.elementwise.push_back({kNorms, 2.0 * static_cast<double>((hq + kvg) * hd) * a, 0});
      if (lg.stores_v && hd == vd) {
        const std::array<std::int64_t, 3> f = {hq, kvg, hd};
        auto& fams = P.families.attention;
        if (std::find(fams.begin(), fams.end(), f) == fams.end()) fams.push_back(f);
      }
      if (g.window == 0 && lg.stores_v && hd == vd) {
        g.prefill_table =
            find_table(OpClass::kAttnPrefill, d.kv,
                       {{"batch", 1}, {"q_heads", hq}, {"kv_heads", kvg}, {"head_dim", hd}});
        g.decode_table = find_table(OpClass::kAttnDecode, d.kv,
                                    {{"q_heads", hq}, {"kv_heads", kvg}, {"head_dim", hd}});
      }
    }
    if (key.moe && has_mlp) {
      g.moe = true;
      const auto& moe = m.moe;
      MoeTemplate& t = g.moe_t;
      t.num_experts = static_cast<double>(moe.num_experts);
      t.top_k = static_cast<double>(moe.experts_per_token);
      t.hidden = static_cast<double>(h);
      t.expert_width = static_cast<double>(ceil_div(moe.expert_intermediate_size, p));
      t.gate_factor = gate;
      t.w = w, t.a = ga;
      if (moe.has_expert_dtype) {
        // Routed experts stored in their own type (e.g. MXFP4) with one 8-bit scale per group.
        t.w = dtype_bytes(moe.expert_dtype) +
              (moe.expert_scale_group_size > 0
                   ? 1.0 / static_cast<double>(moe.expert_scale_group_size)
                   : 0.0);
      }
      g.gemms.push_back(gemm_t(kMoe, Rows::kTokens, moe.num_experts, h, 1, w));  // router
      if (moe.num_shared_experts > 0) {
        const std::int64_t shared = moe.num_shared_experts * moe.shared_expert_size();
        const std::int64_t shared_p = ceil_div(shared, p);
        g.gemms.push_back(
            gemm_t(kMoe, Rows::kTokens, static_cast<std::int64_t>(gate) * shared_p, h, 1, w));
        g.gemms.push_back(gemm_t(kMoe, Rows::kTokens, h, shared_p, 1, w));
        g.elementwise.push_back({kNorms, (gate + 1.0) * static_cast<double>(shared_p) * a, 0});
      }
      // Expert activation and the token permutation (gather + scatter of hidden rows).
      g.elementwise.push_back(
          {kNorms, t.top_k * ((gate + 1.0) * t.expert_width + 4.0 * static_cast<double>(h)) * a,
           0});
    } else if (has_mlp && m.intermediate_size > 0) {
      g.gemms.push_back(
          gemm_t(kMlp, Rows::kTokens, static_cast<std::int64_t>(gate) * inter_p, h, 1, w));
      g.gemms.push_back(gemm_t(kMlp, Rows::kTokens, h, inter_p, 1, w));
      g.elementwise.push_back({kNorms, (gate + 1.0) * static_cast<double>(inter_p) * a, 0});
    }
    P.groups.push_back(std::move(g));
  }

  if (p > 1) {
    P.allreduce_bytes_per_token = static_cast<double>(h) * a;
    P.allreduce_table = find_table(OpClass::kAllreduce, act16, {{"num_gpus", p}});
  }
  P.head_elementwise.push_back({kEmbed, 2.0 * static_cast<double>(h) * a, 0});
  P.final_norm_bytes_per_sample = 2.0 * static_cast<double>(h) * a;
  P.head_gemms.push_back(gemm_t(kLmHead, Rows::kSampling, ceil_div(m.vocab_size, p), h, 1, w));
  P.tables_used = used.size();
  std::sort(P.families.gemms.begin(), P.families.gemms.end());
  std::sort(P.families.attention.begin(), P.families.attention.end());
  plan_ = std::move(plan);
}

RooflineCostModel::~RooflineCostModel() = default;

double RooflineCostModel::Plan::run(const StepBatch& batch, OpAcc* acc) const {
  Aggregates g;
  for (const PrefillChunk& ch : batch.prefills) {
    if (ch.num_tokens <= 0) continue;
    g.prefill_tokens += static_cast<double>(ch.num_tokens);
    g.sequences += 1;
    g.prefill_keys_full += static_cast<double>(ch.num_tokens + ch.num_cached_tokens);
    g.pre_pairs[0] += static_cast<double>(causal_pairs(ch.num_tokens, ch.num_cached_tokens, 0));
    g.pre_keys[0] += static_cast<double>(keys_read(ch.num_tokens, ch.num_cached_tokens, 0));
    if (window > 0) {
      g.pre_pairs[1] +=
          static_cast<double>(causal_pairs(ch.num_tokens, ch.num_cached_tokens, window));
      g.pre_keys[1] += static_cast<double>(keys_read(ch.num_tokens, ch.num_cached_tokens, window));
    }
  }
  for (const std::int64_t ctx : batch.decode_context_tokens) {
    g.decodes += 1;
    g.decode_context_sum += static_cast<double>(ctx);
    g.dec_keys[0] += static_cast<double>(ctx + 1);
    if (window > 0) g.dec_keys[1] += static_cast<double>(std::min(ctx + 1, window));
  }
  g.sequences += g.decodes;
  g.tokens = g.prefill_tokens + g.decodes;
  g.sampling = static_cast<double>(batch.num_sampling);
  if (g.tokens <= 0) return 0.0;

  for (const ElementwiseTemplate& e : head_elementwise) {
    add(acc, e.op, OpClass::kElementwise,
        {0.0, e.bytes_per_token * g.tokens + e.bytes_per_seq * g.sequences}, 1.0, -1.0);
  }
  for (const LayerGroup& grp : groups) {
    const double n = grp.count;
    for (const GemmTemplate& t : grp.gemms) gemm(acc, t, g, n);
    if (grp.attention) {
      const int wi = grp.window > 0 ? 1 : 0;
      if (g.prefill_tokens > 0) {
        // Chunks covered by the measured table are timed individually; the rest as one kernel.
        double q = g.prefill_tokens, pairs = g.pre_pairs[wi], keys = g.pre_keys[wi];
        double table_time = 0;
        if (grp.prefill_table && !grp.mla) {
          for (const PrefillChunk& ch : batch.prefills) {
            if (ch.num_tokens <= 0) continue;
            const double t = grp.prefill_table->lookup(static_cast<double>(ch.num_tokens),
                                                       static_cast<double>(ch.num_cached_tokens));
            if (t > 0) {
              table_time += t;
              const double chunk_pairs =
                  static_cast<double>(causal_pairs(ch.num_tokens, ch.num_cached_tokens, 0));
              const double chunk_keys =
                  static_cast<double>(keys_read(ch.num_tokens, ch.num_cached_tokens, 0));
              const Work w =
                  attention_work(grp.prefill_geom, static_cast<double>(ch.num_tokens), chunk_pairs,
                                 chunk_keys, static_cast<double>(ch.num_tokens));
              add(acc, kAttnPrefill, OpClass::kAttnPrefill, w, n, t);
              q -= static_cast<double>(ch.num_tokens);
              pairs -= chunk_pairs;
              keys -= chunk_keys;
            }
          }
        }
        if (q > 0) {
          // MLA prefill reads the decompressed keys (kv_read_bytes) and writes latents.
          const Work w = attention_work(grp.prefill_geom, q, pairs, keys, q);
          add(acc, kAttnPrefill, OpClass::kAttnPrefill, w, n, -1.0);
        }
      }
      if (g.decodes > 0) {
        const Work w =
            attention_work(grp.decode_geom, g.decodes, g.dec_keys[wi], g.dec_keys[wi], g.decodes);
        const double t = grp.decode_table
                             ? grp.decode_table->lookup(g.decodes, g.decode_context_sum / g.decodes)
                             : -1.0;
        add(acc, kAttnDecode, OpClass::kAttnDecode, w, n, t);
      }
    }
    if (grp.moe) {
      const MoeTemplate& t = grp.moe_t;
      const double assignments = g.tokens * t.top_k;
      const double touched =
          t.top_k >= t.num_experts
              ? t.num_experts
              : t.num_experts * (1.0 - std::pow(1.0 - t.top_k / t.num_experts, g.tokens));
      const double up_w = t.gate_factor * t.hidden * t.expert_width;
      const double down_w = t.hidden * t.expert_width;
      const Work up{
          2.0 * assignments * up_w,
          touched * up_w * t.w + assignments * (t.hidden + t.gate_factor * t.expert_width) * t.a};
      const Work down{2.0 * assignments * down_w,
                      touched * down_w * t.w + assignments * (t.expert_width + t.hidden) * t.a};
      add(acc, kMoe, OpClass::kGemm, up, n, -1.0);
      add(acc, kMoe, OpClass::kGemm, down, n, -1.0);
    }
    for (const ElementwiseTemplate& e : grp.elementwise) {
      add(acc, e.op, OpClass::kElementwise,
          {0.0, e.bytes_per_token * g.tokens + e.bytes_per_seq * g.sequences}, n, -1.0);
    }
  }
  if (tp > 1 && allreduces > 0) {
    const double message = allreduce_bytes_per_token * g.tokens;
    const double p = static_cast<double>(tp);
    const Work w{0.0, 2.0 * (p - 1.0) / p * message};
    const double t = allreduce_table ? allreduce_table->lookup(message, 0.0) : -1.0;
    add(acc, kAllreduce, OpClass::kAllreduce, w, allreduces, t);
  }
  if (g.sampling > 0) {
    add(acc, kLmHead, OpClass::kElementwise, {0.0, final_norm_bytes_per_sample * g.sampling}, 1.0,
        -1.0);
    for (const GemmTemplate& t : head_gemms) gemm(acc, t, g, 1.0);
  }
  double total = 0;
  for (int i = 0; i < kNumOps; ++i) total += acc[i].time_s;
  return total + overhead_s;
}

TimeNs RooflineCostModel::step_time(const StepBatch& batch) const {
  OpAcc acc[kNumOps];
  return seconds_to_ns(plan_->run(batch, acc));
}

StepCost RooflineCostModel::breakdown(const StepBatch& batch) const {
  OpAcc acc[kNumOps];
  StepCost cost;
  cost.time_s = plan_->run(batch, acc);
  if (cost.time_s <= 0) return cost;
  for (int i = 0; i < kNumOps; ++i) {
    if (acc[i].time_s <= 0) continue;
    cost.ops.push_back(OpCost{kOpNames[static_cast<std::size_t>(i)], acc[i].time_s, acc[i].flops,
                              acc[i].bytes, acc[i].compute_bound_s * 2.0 > acc[i].time_s});
  }
  cost.ops.push_back(OpCost{"step_overhead", plan_->overhead_s, 0.0, 0.0, false});
  return cost;
}

TimeNs RooflineCostModel::swap_time(Bytes bytes) const {
  return seconds_to_ns(static_cast<double>(bytes) / plan_->pcie_bandwidth);
}

const ResolvedDtypes& RooflineCostModel::dtypes() const {
  return plan_->dtypes;
}
double RooflineCostModel::step_overhead_s() const {
  return plan_->overhead_s;
}
const std::vector<std::string>& RooflineCostModel::defaulted_classes() const {
  return plan_->defaulted;
}
std::size_t RooflineCostModel::num_tables_used() const {
  return plan_->tables_used;
}

RooflineCostModel::KernelFamilies RooflineCostModel::kernel_families() const {
  return plan_->families;
}

}  // namespace kvsim::cost
