#include "cost/roofline_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/assert.h"
#include "cost/ops.h"
#include "cost/roofline_plan.h"

namespace kvsim::cost {
namespace {

using namespace roofline;  // NOLINT(google-build-using-namespace): the plan's private types
using Plan = RooflineCostModel::Plan;

// Sums the step's batch into the counts the op templates are scaled by.
Aggregates aggregate(const StepBatch& batch, std::int64_t window) {
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
  // Summed in integers: every partial sum is an integer below 2^53, so adding the contexts one
  // by one in doubles gives the same values.
  std::int64_t context_sum = 0, windowed_keys = 0;
  for (const std::int64_t ctx : batch.decode_context_tokens) context_sum += ctx;
  if (window > 0) {
    for (const std::int64_t ctx : batch.decode_context_tokens) {
      windowed_keys += std::min(ctx + 1, window);
    }
  }
  const auto listed = static_cast<std::int64_t>(batch.decode_context_tokens.size());
  KVSIM_ASSERT(context_sum + listed < (std::int64_t{1} << 53), "decode sums stay exact in double");
  g.decodes = static_cast<double>(listed);
  g.decode_context_sum = static_cast<double>(context_sum);
  g.dec_keys[0] = static_cast<double>(context_sum + listed);
  g.dec_keys[1] = static_cast<double>(windowed_keys);
  // Bit-identical to listing the same sequences: every sum above adds integer-valued doubles
  // below 2^53, so each partial sum, and the total, is exact.
  if (const DecodeTotals& d = batch.decode_totals; d.num_sequences > 0) {
    KVSIM_ASSERT(d.context_tokens + d.num_sequences < (std::int64_t{1} << 53),
                 "decode totals stay exact in double");
    g.decodes += static_cast<double>(d.num_sequences);
    g.decode_context_sum += static_cast<double>(d.context_tokens);
    g.dec_keys[0] += static_cast<double>(d.context_tokens + d.num_sequences);
    // Totals come with a window only past it (decode_totals_min_context): each sequence reads
    // `window` keys, as min(ctx + 1, window) gives when listed.
    if (window > 0) g.dec_keys[1] += static_cast<double>(d.num_sequences * window);
  }
  g.sequences += g.decodes;
  g.tokens = g.prefill_tokens + g.decodes;
  if (g.tokens > 0) g.tokens += static_cast<double>(batch.num_padding_tokens);
  g.sampling = static_cast<double>(batch.num_sampling);
  g.moe_tokens = std::max(g.tokens, static_cast<double>(batch.moe_group_tokens));
  return g;
}

// Prefill attention of one layer group (× n layers). Chunks covered by the measured table are
// timed individually; the rest as one kernel.
void prefill_attention(const Plan& P, OpAcc* acc, const LayerGroup& grp, const Aggregates& g,
                       const StepBatch& batch, double n, bool time_only) {
  const int wi = grp.window > 0 ? 1 : 0;
  double q = g.prefill_tokens, pairs = g.pre_pairs[wi], keys = g.pre_keys[wi];
  if (grp.prefill_table && !grp.mla) {
    for (const PrefillChunk& ch : batch.prefills) {
      if (ch.num_tokens <= 0) continue;
      const double t = grp.prefill_table->lookup(static_cast<double>(ch.num_tokens),
                                                 static_cast<double>(ch.num_cached_tokens));
      if (t > 0) {
        const double chunk_pairs =
            static_cast<double>(causal_pairs(ch.num_tokens, ch.num_cached_tokens, 0));
        const double chunk_keys =
            static_cast<double>(keys_read(ch.num_tokens, ch.num_cached_tokens, 0));
        const Work w = attention_work(grp.prefill_geom, static_cast<double>(ch.num_tokens),
                                      chunk_pairs, chunk_keys, static_cast<double>(ch.num_tokens));
        P.add(acc, kAttnPrefill, OpClass::kAttnPrefill, w, n, t, 0.0, time_only);
        q -= static_cast<double>(ch.num_tokens);
        pairs -= chunk_pairs;
        keys -= chunk_keys;
      }
    }
  }
  if (q > 0) {
    // MLA prefill reads the decompressed keys (kv_read_bytes) and writes latents.
    const Work w = attention_work(grp.prefill_geom, q, pairs, keys, q);
    P.add(acc, kAttnPrefill, OpClass::kAttnPrefill, w, n, -1.0, 0.0, time_only);
  }
  if (grp.index_geom.q_heads > 0) {
    // The sparse attention's indexer scores every key of the chunk's causal range.
    Work w = attention_work(grp.index_geom, g.prefill_tokens, g.pre_pairs[0], g.pre_keys[0],
                            g.prefill_tokens);
    w.bytes += kIndexerLogitBytes * g.pre_pairs[0];
    P.add_priced(acc, kAttnIndex, P.index_cls[0], P.index_roof[0].peak_flops, P.index_roof[0], w, n,
                 -1.0, time_only);
  }
}

void decode_attention(const Plan& P, OpAcc* acc, const LayerGroup& grp, const Aggregates& g,
                      double n, bool time_only) {
  const int wi = grp.window > 0 ? 1 : 0;
  const Work w =
      attention_work(grp.decode_geom, g.decodes, g.dec_keys[wi], g.dec_keys[wi], g.decodes);
  const double t = grp.decode_table
                       ? grp.decode_table->lookup(g.decodes, g.decode_context_sum / g.decodes)
                       : -1.0;
  P.add(acc, kAttnDecode, OpClass::kAttnDecode, w, n, t, 0.0, time_only);
  if (grp.index_geom.q_heads > 0) {
    // The sparse attention's indexer reads every cached key of every sequence.
    Work iw = attention_work(grp.index_geom, g.decodes, g.dec_keys[0], g.dec_keys[0], g.decodes);
    iw.bytes += kIndexerLogitBytes * g.dec_keys[0];
    P.add_priced(acc, kAttnIndex, P.index_cls[1], P.index_roof[1].peak_flops, P.index_roof[1], iw,
                 n, -1.0, time_only);
  }
}

// Routed experts: the weights of this GPU's experts that the MoE tokens touch (each token picks
// top_k of num_experts, uniformly), and the activations of the assignments this GPU computes.
void routed_experts(const Plan& P, OpAcc* acc, const MoeTemplate& t, const Aggregates& g,
                    double n) {
  MoeWork w = moe_work(t.geo, g.moe_tokens);
  if (P.moe_fitted) {
    // One fused kernel: the measured time of this shape, else the fitted moe class's roofline
    // over both GEMMs' work (its curves and launch latency take in the routing and the combine).
    const double table_time = t.table ? t.table->lookup(g.moe_tokens, 0.0) : -1.0;
    P.add(acc, kMoe, OpClass::kMoe, {w.up.flops + w.down.flops, w.up.bytes + w.down.bytes}, n,
          table_time);
    return;
  }
  const double peak = t.quantized ? P.quant_peak_flops : 0.0;
  if (t.quantized) {
    // Each touched expert's weights, over the rows routed to it.
    const double rows = w.touched_experts > 0 ? w.assignments / w.touched_experts : 0.0;
    const double up_w = t.geo.gate_factor * t.geo.hidden * t.geo.width;
    const double down_w = t.geo.hidden * t.geo.width;
    w.up.flops += w.touched_experts * P.dequant_flops(up_w, rows);
    w.down.flops += w.touched_experts * P.dequant_flops(down_w, rows);
  }
  P.add(acc, kMoe, OpClass::kGemm, w.up, n, -1.0, peak);
  P.add(acc, kMoe, OpClass::kGemm, w.down, n, -1.0, peak);
}

// Which ops a pass over the layers accumulates: the attention kernels, the rest (the
// token-shaped ops: GEMMs, MoE, elementwise), or both in execution order.
enum class Pass : std::uint8_t { kAll, kTokens, kAttention };

void layer_group(const Plan& P, OpAcc* acc, const LayerGroup& grp, const Aggregates& g,
                 const StepBatch& batch, Pass pass) {
  const double n = grp.count;
  const bool tokens = pass != Pass::kAttention;
  if (tokens) {
    for (const GemmTemplate& t : grp.gemms) P.gemm(acc, t, g, n);
  }
  if (grp.attention && pass != Pass::kTokens) {
    // The memo's attention pass reads only times: a measured kernel's needs no roofline.
    const bool time_only = pass == Pass::kAttention;
    if (g.prefill_tokens > 0) prefill_attention(P, acc, grp, g, batch, n, time_only);
    if (g.decodes > 0) decode_attention(P, acc, grp, g, n, time_only);
  }
  if (!tokens) return;
  if (grp.moe) routed_experts(P, acc, grp.moe_t, g, n);
  for (const ElementwiseTemplate& e : grp.elementwise) {
    P.add(acc, e.op, OpClass::kElementwise,
          {0.0, e.bytes_per_token * g.tokens + e.bytes_per_seq * g.sequences}, n, -1.0);
  }
}

// Everything but the layers' attention kernels (layer_group's other ops, the embedding and
// final norm, the MoE exchange, the all-reduces, the LM head).
void token_ops(const Plan& P, OpAcc* acc, const Aggregates& g, const StepBatch& batch, Pass pass) {
  for (const ElementwiseTemplate& e : P.head_elementwise) {
    P.add(acc, e.op, OpClass::kElementwise,
          {0.0, e.bytes_per_token * g.tokens + e.bytes_per_seq * g.sequences}, 1.0, -1.0);
  }
  for (const LayerGroup& grp : P.groups) layer_group(P, acc, grp, g, batch, pass);
  if (P.dispatch_bytes_per_token > 0 && g.moe_tokens > g.tokens) {
    // All-gather of the other ranks' rows, reduce-scatter of their results: each GPU receives
    // and sends (moe_tokens − tokens) rows per MoE layer.
    const double bytes = 2.0 * (g.moe_tokens - g.tokens) * P.dispatch_bytes_per_token;
    OpAcc& a = acc[kMoeDispatch];
    a.time_s +=
        P.moe_layers * (2.0 * P.dispatch_link.latency_s + bytes / P.dispatch_link.bandwidth);
    a.bytes += P.moe_layers * bytes;
  }
  if (P.tp > 1 && P.allreduces > 0) {
    const double message = P.allreduce_bytes_per_token * g.tokens;
    const double p = static_cast<double>(P.tp);
    const Work w{0.0, 2.0 * (p - 1.0) / p * message};
    const double t = P.allreduce_table ? P.allreduce_table->lookup(message, 0.0) : -1.0;
    P.add(acc, kAllreduce, OpClass::kAllreduce, w, P.allreduces, t);
  }
  if (g.sampling > 0 && P.has_head) {
    P.add(acc, kLmHead, OpClass::kElementwise, {0.0, P.final_norm_bytes_per_sample * g.sampling},
          1.0, -1.0);
    for (const GemmTemplate& t : P.head_gemms) P.gemm(acc, t, g, 1.0);
  }
}

double cpu_overhead(const Plan& P, const Aggregates& g) {
  return P.overhead_s + P.seq_overhead_s * g.sequences +
         P.prefill_token_overhead_s * g.prefill_tokens +
         P.context_token_overhead_s * (g.dec_keys[0] + g.prefill_keys_full);
}

// The part of the host's time the step waits for: all of it, or with async scheduling (the
// host prepares the next step while the GPU runs this one) only what exceeds the GPU's time.
double exposed_overhead(const Plan& P, double gpu_s, double cpu_s) {
  return P.overlap_overhead ? std::max(0.0, cpu_s - gpu_s) : cpu_s;
}

// Per-thread, direct-mapped memo of the token-shaped ops' times (Plan::memo_tokens): entries
// are a pure function of (plan, counts), so a hit is the value a recomputation would give.
class StepMemo {
 public:
  struct Entry {
    std::uint64_t plan = 0;  // 0: empty
    std::array<double, 4> key{};
    std::array<double, kNumOps> time_s{};
  };

  static Entry& slot(std::uint64_t plan, const std::array<double, 4>& key) {
    thread_local std::vector<Entry> entries(kSize);
    std::uint64_t h = plan * 0x9E3779B97F4A7C15ULL;
    for (const double k : key) h = (h ^ static_cast<std::uint64_t>(k)) * 0x100000001B3ULL;
    return entries[(h ^ (h >> 29)) & (kSize - 1)];
  }

 private:
  static constexpr std::size_t kSize = 1024;
};

}  // namespace

RooflineCostModel::RooflineCostModel(const model::ModelSpec& m, const model::HardwareSpec& hw,
                                     const CostOptions& options)
    : plan_(roofline::build_plan(m, hw, options)) {}

RooflineCostModel::~RooflineCostModel() = default;

double RooflineCostModel::Plan::run(const StepBatch& batch, OpAcc* acc, double* overhead) const {
  const Aggregates g = aggregate(batch, window);
  if (g.tokens <= 0) return 0.0;
  token_ops(*this, acc, g, batch, Pass::kAll);
  double total = 0;
  for (int i = 0; i < kNumOps; ++i) total += acc[i].time_s;
  if (batch.eager) total = std::max(total, eager_host_s);
  const double cpu = exposed_overhead(*this, total, cpu_overhead(*this, g));
  if (overhead != nullptr) *overhead = cpu;
  return total + cpu;
}

double RooflineCostModel::Plan::seconds(const StepBatch& batch) const {
  OpAcc acc[kNumOps];
  if (!memo_tokens) return run(batch, acc);
  const Aggregates g = aggregate(batch, window);
  if (g.tokens <= 0) return 0.0;
  const std::array<double, 4> key = {g.tokens, g.sampling, memo_keys_sequences ? g.sequences : 0,
                                     memo_keys_moe_tokens ? g.moe_tokens : 0};
  StepMemo::Entry& e = StepMemo::slot(id, key);
  if (e.plan != id || e.key != key) {
    token_ops(*this, acc, g, batch, Pass::kTokens);
    e.plan = id;
    e.key = key;
    for (int i = 0; i < kNumOps; ++i) e.time_s[static_cast<std::size_t>(i)] = acc[i].time_s;
  }
  // The attention kernels alone write their accumulators (memo_tokens): run()'s per-op sums.
  OpAcc att[kNumOps];
  for (const LayerGroup& grp : groups) layer_group(*this, att, grp, g, batch, Pass::kAttention);
  double total = 0;
  for (int i = 0; i < kNumOps; ++i) {
    total += is_attention_op(i) ? att[i].time_s : e.time_s[static_cast<std::size_t>(i)];
  }
  if (batch.eager) total = std::max(total, eager_host_s);
  return total + exposed_overhead(*this, total, cpu_overhead(*this, g));
}

TimeNs RooflineCostModel::step_time(const StepBatch& batch) const {
  return seconds_to_ns(plan_->seconds(batch));
}

StepCost RooflineCostModel::breakdown(const StepBatch& batch) const {
  OpAcc acc[kNumOps];
  StepCost cost;
  double overhead = 0;
  cost.time_s = plan_->run(batch, acc, &overhead);
  if (cost.time_s <= 0) return cost;
  for (int i = 0; i < kNumOps; ++i) {
    if (acc[i].time_s <= 0) continue;
    cost.ops.push_back(OpCost{kOpNames[static_cast<std::size_t>(i)], acc[i].time_s, acc[i].flops,
                              acc[i].bytes, acc[i].compute_bound_s * 2.0 > acc[i].time_s});
  }
  // A step without a CUDA graph that its kernels' issue outlasts: the GPU waits for the host.
  double kernels = 0;
  for (const OpCost& op : cost.ops) kernels += op.time_s;
  if (const double wait = cost.time_s - overhead - kernels; batch.eager && wait > 0) {
    cost.ops.push_back(OpCost{"eager_launch_wait", wait, 0.0, 0.0, false});
  }
  cost.ops.push_back(OpCost{"step_overhead", overhead, 0.0, 0.0, false});
  return cost;
}

bool RooflineCostModel::prices_decode_totals() const {
  // A sliding window caps each sequence's keys separately: it needs every context. A sparse
  // attention's top-k prices totals once every sequence is past it (decode_totals_min_context).
  return plan_->window == 0 || plan_->sparse_window;
}

std::int64_t RooflineCostModel::decode_totals_min_context() const {
  return plan_->sparse_window ? plan_->window - 1 : 0;
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
double RooflineCostModel::seq_overhead_s() const {
  return plan_->seq_overhead_s;
}
double RooflineCostModel::context_token_overhead_s() const {
  return plan_->context_token_overhead_s;
}
double RooflineCostModel::prefill_token_overhead_s() const {
  return plan_->prefill_token_overhead_s;
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
