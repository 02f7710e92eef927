#include "cost/pipeline_model.h"

#include <string>

#include "common/assert.h"
#include "common/error.h"
#include "model/pipeline.h"

namespace kvsim::cost {

PipelineCostModel::PipelineCostModel(std::vector<std::unique_ptr<CostModel>> stages,
                                     std::vector<StageTransfer> transfers)
    : stages_(std::move(stages)), transfers_(std::move(transfers)) {
  KVSIM_ASSERT(stages_.size() >= 2 && transfers_.size() + 1 == stages_.size(),
               "a pipeline has >= 2 stages and a transfer between each two");
}

TimeNs PipelineCostModel::transfer_time(std::size_t after_stage, std::int64_t tokens) const {
  const StageTransfer& t = transfers_[after_stage];
  if (tokens <= 0) return 0;
  return seconds_to_ns(t.link.latency_s +
                       static_cast<double>(tokens) * t.bytes_per_token / t.link.bandwidth);
}

void PipelineCostModel::stage_times(const StepBatch& batch, std::span<TimeNs> out) const {
  KVSIM_ASSERT(out.size() + 1 == 2 * stages_.size(), "one slot per stage and per transfer");
  const std::int64_t tokens = batch_tokens(batch);
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    out[2 * s] = stages_[s]->step_time(batch);
    if (s + 1 < stages_.size()) out[2 * s + 1] = transfer_time(s, tokens);
  }
}

TimeNs PipelineCostModel::step_time(const StepBatch& batch) const {
  TimeNs total = 0;
  const std::int64_t tokens = batch_tokens(batch);
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    total += stages_[s]->step_time(batch);
    if (s + 1 < stages_.size()) total += transfer_time(s, tokens);
  }
  return total;
}

StepCost PipelineCostModel::breakdown(const StepBatch& batch) const {
  StepCost cost;
  const std::int64_t tokens = batch_tokens(batch);
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    for (OpCost& op : stages_[s]->breakdown(batch).ops) {
      op.name = "stage" + std::to_string(s) + "." + op.name;
      cost.ops.push_back(std::move(op));
    }
    if (s + 1 < stages_.size() && tokens > 0) {
      const double bytes = static_cast<double>(tokens) * transfers_[s].bytes_per_token;
      cost.ops.push_back(OpCost{"pp_transfer", static_cast<double>(transfer_time(s, tokens)) / 1e9,
                                0.0, bytes, false});
    }
  }
  cost.time_s = static_cast<double>(step_time(batch)) / 1e9;
  return cost;
}

TimeNs PipelineCostModel::swap_time(Bytes bytes) const {
  return stages_.front()->swap_time(bytes);
}

std::unique_ptr<PipelineCostModel> make_pipeline_cost_model(const model::ModelSpec& model,
                                                            const model::HardwareSpec& hardware,
                                                            const CostModelConfig& config,
                                                            std::int64_t pp) {
  KVSIM_ASSERT(pp >= 2, "a pipeline has at least two stages");
  if (config.kind != CostModelKind::kRoofline) {
    throw Error(ErrorLocation{"", 0, 0, "--cost-model"},
                "pipeline parallelism needs the roofline cost model (the linear model has no "
                "layers to split over stages)");
  }
  const std::int64_t tp = config.roofline.tensor_parallel_size;
  std::vector<std::unique_ptr<CostModel>> stages;
  std::vector<StageTransfer> transfers;
  for (const model::PipelineStage& st : model::pipeline_stages(model.num_layers, pp)) {
    stages.push_back(make_cost_model(model::stage_model(model, st, pp), hardware, config));
    if (st.index + 1 == pp) break;
    const model::Link link = model::stage_link(hardware, tp, st.index);
    if (!(link.bandwidth > 0)) {
      throw Error(ErrorLocation{hardware.name, 0, 0, link.field},
                  "expected a positive " + std::string(link.name) +
                      " bandwidth for the transfer between pipeline stages " +
                      std::to_string(st.index) + " and " + std::to_string(st.index + 1) +
                      (link.internode
                           ? " (they sit on different " + std::to_string(hardware.gpus_per_node) +
                                 "-GPU nodes: give internode_bandwidth_gb_s in the "
                                 "hardware YAML or --internode-bandwidth-gb-s)"
                           : ""));
    }
    transfers.push_back({model::stage_transfer_bytes_per_token(model, tp), link});
  }
  return std::make_unique<PipelineCostModel>(std::move(stages), std::move(transfers));
}

}  // namespace kvsim::cost
