#pragma once
// Data parallelism and expert parallelism of an MoE model, as vLLM deploys them
// (`--data-parallel-size D`, `--enable-expert-parallel`).
//
// Attention and the dense layers are data parallel: each of the D ranks (a TP group of its own)
// holds them whole, sharded over its TP GPUs, with its own requests and KV cache. The routed
// experts of every MoE layer are spread over all D × TP GPUs (vLLM's FusedMoEParallelConfig
// flattens TP across DP): with expert parallelism each GPU holds ceil(num_experts / (D × TP))
// whole experts (vLLM gives the remainder one each to the first ranks; the largest rank sizes the
// memory), without it every expert's intermediate size is split over the D × TP GPUs. Shared
// experts and the router stay with the dense layers. Because an MoE layer computes the tokens of
// every rank at once, the D ranks step in lockstep (sim/simulator.h).
//
// A dense model has nothing to spread: its D ranks are independent engines.

#include <cstdint>
#include <string>

#include "model/model_spec.h"

namespace kvsim::model {

// Empty when the deployment is valid for the model, else the reason (naming the flag):
// data_parallel_size >= 1; expert parallelism only for an MoE model; at least one expert per GPU.
std::string expert_parallel_problem(const ModelSpec& model, std::int64_t tp,
                                    std::int64_t data_parallel_size, bool expert_parallel);

// The model as one GPU of the deployment holds it: MoeSpec::shard_ranks = D × TP and
// expert_parallel set when the routed experts are spread beyond the TP group (D > 1, or expert
// parallelism), the model unchanged otherwise. Requires a valid deployment.
ModelSpec shard_experts(const ModelSpec& model, std::int64_t tp, std::int64_t data_parallel_size,
                        bool expert_parallel);

// Whether the D ranks must step together: an MoE model with D > 1.
bool data_parallel_lockstep(const ModelSpec& model, std::int64_t data_parallel_size);

}  // namespace kvsim::model
