#include "model/pipeline.h"

#include "common/assert.h"
#include "model/kv_math.h"

namespace kvsim::model {
namespace {

template <typename T>
std::vector<T> slice(const std::vector<T>& v, const PipelineStage& s) {
  if (v.empty()) return v;
  return std::vector<T>(v.begin() + s.first_layer, v.begin() + s.end_layer);
}

// MoE layers are first_dense + k × interval; the slice's own first MoE layer keeps the pattern.
void shift_moe_pattern(MoeSpec& moe, std::int64_t offset) {
  if (!moe.enabled()) return;
  const std::int64_t interval = moe.moe_layer_interval > 0 ? moe.moe_layer_interval : 1;
  if (offset <= moe.first_dense_layers) {
    moe.first_dense_layers -= offset;
  } else {
    moe.first_dense_layers = (interval - (offset - moe.first_dense_layers) % interval) % interval;
  }
}

// Layers without a KV cache in [first, end): where a model's given SSM state lives.
std::int64_t stateful_layers(const ModelSpec& m, std::int64_t first, std::int64_t end) {
  std::int64_t n = 0;
  for (std::int64_t i = first; i < end; ++i) {
    n += m.layer_kinds[static_cast<std::size_t>(i)] == LayerKind::kNoKvCache ? 1 : 0;
  }
  return n;
}

}  // namespace

std::string pipeline_parallel_problem(const ModelSpec& model, std::int64_t pp) {
  if (pp < 1) return "expected a positive pipeline parallel size, got " + std::to_string(pp);
  if (pp > model.num_layers) {
    return "expected at most one stage per decoder layer (" + std::to_string(model.num_layers) +
           " layers for " + model.name + "), got " + std::to_string(pp);
  }
  return "";
}

std::vector<PipelineStage> pipeline_stages(std::int64_t num_layers, std::int64_t pp) {
  KVSIM_ASSERT(pp >= 1 && pp <= num_layers, "pipeline_stages: 1 <= pp <= num_layers");
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(pp), num_layers / pp);
  const std::int64_t remaining = num_layers % pp;
  for (std::int64_t i = 2; i < remaining + 2; ++i) sizes[static_cast<std::size_t>(pp - i)] += 1;
  std::vector<PipelineStage> stages;
  std::int64_t first = 0;
  for (std::int64_t s = 0; s < pp; ++s) {
    stages.push_back({s, first, first + sizes[static_cast<std::size_t>(s)]});
    first += sizes[static_cast<std::size_t>(s)];
  }
  return stages;
}

ModelSpec stage_model(const ModelSpec& model, const PipelineStage& stage, std::int64_t num_stages) {
  KVSIM_ASSERT(
      stage.first_layer >= 0 && stage.end_layer <= model.num_layers && stage.num_layers() >= 1,
      "stage_model: a non-empty stage within the model");
  if (num_stages == 1) return model;
  ModelSpec m = model;
  m.num_layers = stage.num_layers();
  m.layer_kinds = slice(model.layer_kinds, stage);
  m.block_kinds = slice(model.block_kinds, stage);
  shift_moe_pattern(m.moe, stage.first_layer);
  // With an SSM geometry the state follows the sliced blocks; a given total is shared out evenly.
  if (!model.ssm.enabled() && !model.gdn.enabled() && model.ssm_state_bytes_per_sequence > 0) {
    const std::int64_t all = stateful_layers(model, 0, model.num_layers);
    const std::int64_t here = stateful_layers(model, stage.first_layer, stage.end_layer);
    m.ssm_state_bytes_per_sequence = all > 0 ? model.ssm_state_bytes_per_sequence /
                                                   static_cast<std::uint64_t>(all) *
                                                   static_cast<std::uint64_t>(here)
                                             : 0;
  }
  if (m.attention.sliding_window > 0 && m.num_layers_of(LayerKind::kSlidingWindow) == 0) {
    m.attention.sliding_window = 0;  // the ModelSpec invariant: a window iff a window layer
  }
  m.holds_embedding = stage.index == 0;
  m.holds_lm_head = stage.index == num_stages - 1;
  return m;
}

double stage_transfer_bytes_per_token(const ModelSpec& model, std::int64_t tp) {
  KVSIM_ASSERT(tp >= 1, "stage_transfer_bytes_per_token: tp < 1");
  const double act_bytes = static_cast<double>(bits_per_element(activation_dtype(model))) / 8.0;
  return 2.0 * static_cast<double>(model.hidden_size) * act_bytes / static_cast<double>(tp);
}

}  // namespace kvsim::model
