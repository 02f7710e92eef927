#include "cost/cost_model.h"

#include "cost/linear_model.h"
#include "cost/roofline_model.h"

namespace kvsim::cost {

std::unique_ptr<CostModel> make_cost_model(const model::ModelSpec& model,
                                           const model::HardwareSpec& hardware,
                                           const CostModelConfig& config) {
  if (config.kind == CostModelKind::kLinear)
    return std::make_unique<LinearCostModel>(config.linear);
  return std::make_unique<RooflineCostModel>(model, hardware, config.roofline);
}

}  // namespace kvsim::cost
