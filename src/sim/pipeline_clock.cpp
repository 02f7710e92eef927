#include "sim/pipeline_clock.h"

#include <algorithm>

#include "common/assert.h"

namespace kvsim::sim {

PipelineClock::PipelineClock(const cost::PipelineCostModel& model)
    : model_(&model),
      times_(static_cast<std::size_t>(2 * model.num_stages() - 1), 0),
      stage_free_(static_cast<std::size_t>(model.num_stages()), 0) {}

TimeNs PipelineClock::run(TimeNs ready, const cost::StepBatch& batch) {
  model_->stage_times(batch, times_);
  TimeNs t = ready;
  for (std::size_t s = 0; s < stage_free_.size(); ++s) {
    const TimeNs start = std::max(t, stage_free_[s]);
    const TimeNs end = start + times_[2 * s];
    KVSIM_ASSERT(end >= start, "stage times are non-negative");
    stage_free_[s] = end;
    t = end + (s + 1 < stage_free_.size() ? times_[2 * s + 1] : 0);
  }
  return t;
}

}  // namespace kvsim::sim
