#include "cost/linear_model.h"

#include <cmath>

#include "common/error.h"

namespace kvsim::cost {
namespace {

void check(double value, const char* field) {
  if (!std::isfinite(value) || value < 0) {
    throw Error(ErrorLocation{"", 0, 0, field},
                "expected a non-negative number, got " + std::to_string(value));
  }
}

}  // namespace

LinearCostModel::LinearCostModel(const LinearCostParams& params) : params_(params) {
  check(params.base_ns, "linear.base_ns");
  check(params.per_prefill_token_ns, "linear.per_prefill_token_ns");
  check(params.per_decode_seq_ns, "linear.per_decode_seq_ns");
  check(params.per_context_token_ns, "linear.per_context_token_ns");
  check(params.swap_bytes_per_s, "linear.swap_bytes_per_s");
  if (!(params.swap_bytes_per_s > 0)) {
    throw Error(ErrorLocation{"", 0, 0, "linear.swap_bytes_per_s"},
                "expected a positive bandwidth");
  }
}

LinearCostModel::Terms LinearCostModel::terms(const StepBatch& batch) const {
  std::int64_t prefill_tokens = 0, cached = 0, context = 0;
  for (const PrefillChunk& ch : batch.prefills) {
    prefill_tokens += ch.num_tokens;
    cached += ch.num_cached_tokens;
  }
  for (const std::int64_t ctx : batch.decode_context_tokens) context += ctx;
  context += batch.decode_totals.context_tokens;
  const auto decodes = static_cast<std::int64_t>(batch.decode_context_tokens.size()) +
                       batch.decode_totals.num_sequences;
  Terms t;
  if (prefill_tokens <= 0 && decodes == 0) return t;
  t.base = params_.base_ns;
  t.prefill = params_.per_prefill_token_ns * static_cast<double>(prefill_tokens);
  t.decode = params_.per_decode_seq_ns * static_cast<double>(decodes);
  t.context = params_.per_context_token_ns * static_cast<double>(context + cached);
  return t;
}

TimeNs LinearCostModel::step_time(const StepBatch& batch) const {
  const Terms t = terms(batch);
  return std::llround(t.base + t.prefill + t.decode + t.context);
}

StepCost LinearCostModel::breakdown(const StepBatch& batch) const {
  const Terms t = terms(batch);
  StepCost cost;
  const double total_ns = t.base + t.prefill + t.decode + t.context;
  cost.time_s = static_cast<double>(std::llround(total_ns)) * 1e-9;
  if (total_ns <= 0) return cost;
  const std::pair<const char*, double> parts[] = {{"base", t.base},
                                                  {"prefill_tokens", t.prefill},
                                                  {"decode_seqs", t.decode},
                                                  {"context_tokens", t.context}};
  for (const auto& [name, ns] : parts) {
    if (ns > 0) cost.ops.push_back(OpCost{name, ns * 1e-9, 0.0, 0.0, false});
  }
  cost.ops.push_back(OpCost{"step_overhead", 0.0, 0.0, 0.0, false});
  return cost;
}

TimeNs LinearCostModel::swap_time(Bytes bytes) const {
  return std::llround(static_cast<double>(bytes) / params_.swap_bytes_per_s * 1e9);
}

}  // namespace kvsim::cost
