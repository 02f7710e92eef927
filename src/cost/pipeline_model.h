#pragma once
// Step times of a pipeline-parallel replica: one cost model per stage (the stage's slice of the
// model, model/pipeline.h, at the replica's tensor-parallel size) and the activation transfer
// between consecutive stages over the link they share (model::stage_link: NVLink inside a node,
// the inter-node link across nodes).
//
// One batch's latency (step_time) is the sum of its stage times and transfers. The simulator's
// pipeline clock (sim/pipeline_clock.h) uses stage_times to overlap the batches of several
// virtual engines, one stage each at a time.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cost/cost_model.h"
#include "model/hardware_spec.h"
#include "model/model_spec.h"

namespace kvsim::cost {

// The transfer after one stage: bytes per token of the batch, over `link`.
struct StageTransfer {
  double bytes_per_token = 0;
  model::Link link;
};

class PipelineCostModel final : public CostModel {
 public:
  // `transfers` has one entry fewer than `stages` (>= 2 stages).
  PipelineCostModel(std::vector<std::unique_ptr<CostModel>> stages,
                    std::vector<StageTransfer> transfers);

  std::int64_t num_stages() const { return static_cast<std::int64_t>(stages_.size()); }
  // Stage s's compute time of `batch` into out[2s], the transfer after it into out[2s + 1]
  // (out.size() == 2 × stages − 1). An empty batch costs 0 everywhere. No allocation.
  void stage_times(const StepBatch& batch, std::span<TimeNs> out) const;
  // transfer = latency + tokens × bytes_per_token / bandwidth, in ns.
  TimeNs transfer_time(std::size_t after_stage, std::int64_t tokens) const;

  // Σ stage_times: the latency of one batch through every stage.
  TimeNs step_time(const StepBatch& batch) const override;
  // Each stage's ops prefixed "stageN.", then "pp_transfer" per link; time_s is step_time's.
  StepCost breakdown(const StepBatch& batch) const override;
  // Every stage swaps its own layers' KV over its own PCIe link at once: stage 0's time for the
  // bytes one GPU of the busiest stage moves (the caller's byte count is per GPU already).
  TimeNs swap_time(Bytes bytes) const override;

 private:
  std::vector<std::unique_ptr<CostModel>> stages_;
  std::vector<StageTransfer> transfers_;
};

// The pipeline cost model of `model` on `hardware` over `pp` stages (vLLM's layer split) at
// config.roofline.tensor_parallel_size. Throws kvsim::Error when the linear cost model is chosen
// (it has no layers to split), or when a transfer crosses a link without bandwidth.
std::unique_ptr<PipelineCostModel> make_pipeline_cost_model(const model::ModelSpec& model,
                                                            const model::HardwareSpec& hardware,
                                                            const CostModelConfig& config,
                                                            std::int64_t pp);

}  // namespace kvsim::cost
