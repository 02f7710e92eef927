#pragma once
// Pipeline parallelism: a model's decoder layers split over `pp` stages, each stage a slice of the
// model that the memory math (weights, KV, budget) and the cost model take as a model of its own.
//
// The split is vLLM's (vllm/distributed/utils.py get_pp_indices, without
// VLLM_PP_LAYER_PARTITION): contiguous, num_layers / pp layers each, and the remainder given one
// layer each to the stages before the last, from the second-to-last backwards (the last stage also
// runs the final norm, LM head and sampling). 80 layers / 2: [0, 40) [40, 80); 10 / 4: 2, 3, 3, 2.
//
// A stage's slice keeps the layers' kinds, blocks and MoE pattern at their original indices; it
// holds the token embeddings only on the first stage, the final norm and LM head only on the last
// (ModelSpec::holds_embedding / holds_lm_head), and its Mamba layers' share of the SSM state.

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace kvsim::model {

struct PipelineStage {
  std::int64_t index = 0;
  std::int64_t first_layer = 0;  // [first_layer, end_layer)
  std::int64_t end_layer = 0;
  std::int64_t num_layers() const { return end_layer - first_layer; }
};

// Empty when `pp` stages are valid for the model (1 <= pp <= num_layers), else the reason.
std::string pipeline_parallel_problem(const ModelSpec& model, std::int64_t pp);

// The stages of vLLM's split, in order. Requires a valid pp.
std::vector<PipelineStage> pipeline_stages(std::int64_t num_layers, std::int64_t pp);

// The model slice stage `stage` of `num_stages` holds (see above). With one stage: the model.
ModelSpec stage_model(const ModelSpec& model, const PipelineStage& stage, std::int64_t num_stages);

// Bytes each GPU of a stage sends the next per token: vLLM's IntermediateTensors of a decoder
// stack, hidden_states and residual (2 × hidden_size elements) in the activation dtype, split
// over the `tp` ranks (send_tensor_dict with all_gather_group = the TP group: each rank sends
// 1/tp, the next stage all-gathers over its own intra-node link, not priced here).
double stage_transfer_bytes_per_token(const ModelSpec& model, std::int64_t tp);

}  // namespace kvsim::model
