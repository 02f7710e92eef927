#include "sim/step_plan.h"

namespace kvsim::sim {

void StepPlan::clear() {
  items_.clear();
  num_items_ = 0;
  num_tokens_ = 0;
  swap_out_bytes = 0;
}

void StepPlan::add(RequestPool::Slot request, StepItemKind kind, std::int64_t num_tokens,
                   std::int64_t context_tokens) {
  items_.push_back(StepItem{request, kind, false, num_tokens, context_tokens});
  ++num_items_;
  if (kind != StepItemKind::kPadding) num_tokens_ += num_tokens;
}

std::int64_t StepPlan::cancel(RequestPool::Slot request) {
  std::int64_t given_back = 0;
  for (StepItem& item : items_) {
    if (item.canceled || item.request != request) continue;
    item.canceled = true;
    --num_items_;
    if (item.kind != StepItemKind::kPadding) {
      num_tokens_ -= item.num_tokens;
      given_back += item.num_tokens;
    }
  }
  return given_back;
}

}  // namespace kvsim::sim
