#include "cost/step_analysis.h"

#include <functional>
#include <vector>

namespace kvsim::cost {
namespace {

StepCost decode_step(const CostModel& model, std::int64_t batch, std::int64_t context) {
  const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), context);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = batch;
  return model.breakdown(b);
}

std::optional<std::int64_t> first_true(std::int64_t max_batch,
                                       const std::function<bool(std::int64_t)>& pred) {
  std::int64_t lo = 0, hi = 1;  // pred(lo) false (lo = 0 is virtual), probe hi
  while (hi <= max_batch && !pred(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > max_batch) {
    if (lo >= max_batch || !pred(max_batch)) return std::nullopt;
    hi = max_batch;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (pred(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

BoundSplit bound_split(const StepCost& cost) {
  BoundSplit s;
  for (const OpCost& op : cost.ops) {
    if (op_kind(op.name) == "step_overhead") continue;
    (op.compute_bound ? s.compute_s : s.memory_s) += op.time_s;
  }
  return s;
}

DecodeCrossover decode_crossover(const CostModel& model, std::int64_t context,
                                 std::int64_t max_batch) {
  DecodeCrossover c;
  c.step_batch = first_true(max_batch, [&](std::int64_t b) {
    return bound_split(decode_step(model, b, context)).compute_bound();
  });
  c.gemm_batch = first_true(max_batch, [&](std::int64_t b) {
    const StepCost cost = decode_step(model, b, context);
    const OpCost* mlp = nullptr;
    const OpCost* qkv = nullptr;
    for (const OpCost& op : cost.ops) {
      // The first stage's with pipeline stages: every stage's GEMMs have the batch's rows.
      if (op_kind(op.name) == "mlp" && mlp == nullptr) mlp = &op;
      if (op_kind(op.name) == "qkv_proj" && qkv == nullptr) qkv = &op;
    }
    const OpCost* gemm = mlp ? mlp : qkv;
    return gemm && gemm->compute_bound;
  });
  return c;
}

}  // namespace kvsim::cost
