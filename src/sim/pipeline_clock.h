#pragma once
// The stages of one pipeline-parallel replica as a shared resource of its virtual engines.
//
// Mechanism (vLLM V0 with --pipeline-parallel-size pp): the engine runs pp virtual engines, each
// with its own scheduler, running batch and 1/pp of the KV blocks; a request goes to the engine
// with the fewest unfinished requests. Each engine has at most one batch in flight; its batch
// passes stage 0, then the activation transfer, stage 1, ..., and its tokens exist when the last
// stage ends, when that engine schedules its next batch. A stage runs one batch at a time, in the
// order the batches entered the pipeline. So with pp busy engines the stages overlap (throughput
// up to pp times one engine's), while one batch's latency is the sum of its stage times and
// transfers plus any wait for a stage still busy with an earlier batch; with fewer busy engines
// than stages the idle stages are the bubble.
//
// Entering batches in event order keeps the schedule first-in first-out on every stage, so a
// batch's whole path can be booked when it starts: stage s starts at max(ready_s, free_s), where
// ready_0 is the step's start and ready_{s+1} = end_s + transfer_s.

#include <vector>

#include "common/units.h"
#include "cost/cost_model.h"
#include "cost/pipeline_model.h"

namespace kvsim::sim {

class PipelineClock {
 public:
  explicit PipelineClock(const cost::PipelineCostModel& model);

  // Books `batch` entering stage 0 at `ready` (>= every earlier call's `ready`); returns when its
  // last stage ends.
  TimeNs run(TimeNs ready, const cost::StepBatch& batch);
  // When each stage finishes the batches booked so far.
  const std::vector<TimeNs>& stage_free() const { return stage_free_; }

 private:
  const cost::PipelineCostModel* model_;
  std::vector<TimeNs> times_;  // stage, transfer, stage, ...
  std::vector<TimeNs> stage_free_;
};

}  // namespace kvsim::sim
