#include "cost/cost_model.h"

#include "cost/linear_model.h"
#include "cost/roofline_model.h"

namespace kvsim::cost {

std::int64_t batch_tokens(const StepBatch& batch) {
  std::int64_t tokens = 0;
  for (const PrefillChunk& ch : batch.prefills) tokens += ch.num_tokens;
  tokens += static_cast<std::int64_t>(batch.decode_context_tokens.size()) +
            batch.decode_totals.num_sequences;
  return tokens > 0 ? tokens + batch.num_padding_tokens : 0;
}

std::unique_ptr<CostModel> make_cost_model(const model::ModelSpec& model,
                                           const model::HardwareSpec& hardware,
                                           const CostModelConfig& config) {
  if (config.kind == CostModelKind::kLinear)
    return std::make_unique<LinearCostModel>(config.linear);
  return std::make_unique<RooflineCostModel>(model, hardware, config.roofline);
}

}  // namespace kvsim::cost
