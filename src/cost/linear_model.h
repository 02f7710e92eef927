#pragma once
// The explicit linear step-cost model (CostModelKind::kLinear): hand-checkable times for the
// simulator's golden tests and for users who fitted their own coefficients.
//   step = base + per_prefill_token × Σ prefill tokens + per_decode_seq × #decodes
//        + per_context_token × (Σ decode context + Σ prefill cached tokens)   [ns, rounded]
// An empty batch (no prefill tokens, no decodes) costs 0.

#include "cost/cost_model.h"

namespace kvsim::cost {

class LinearCostModel final : public CostModel {
 public:
  // Throws kvsim::Error when a coefficient is negative or not finite, or the swap bandwidth is
  // not positive.
  explicit LinearCostModel(const LinearCostParams& params);

  TimeNs step_time(const StepBatch& batch) const override;
  // Ops "base", "prefill_tokens", "decode_seqs", "context_tokens" (zero terms left out), then
  // "step_overhead" with 0 s (the base is the overhead).
  StepCost breakdown(const StepBatch& batch) const override;
  TimeNs swap_time(Bytes bytes) const override;
  // Integer sums: the totals give the same terms exactly.
  bool prices_decode_totals() const override { return true; }

 private:
  struct Terms {
    double base = 0, prefill = 0, decode = 0, context = 0;
  };
  Terms terms(const StepBatch& batch) const;
  LinearCostParams params_;
};

}  // namespace kvsim::cost
