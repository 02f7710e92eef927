#pragma once
// JSON of resolved inputs, for every report's `inputs` object: the model, the hardware and the
// memory-related serving settings. Stable field names (add, never rename).

#include <optional>

#include "common/units.h"
#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "report/json.h"

namespace kvsim::report {

// {name, display_name, family, source, num_layers, hidden_size, intermediate_size, vocab_size,
//  max_context, weight_dtype, attention{kind, num_q_heads, num_kv_heads, head_dim, v_head_dim,
//  sliding_window, [mla{...}], [full_layer_num_kv_heads, full_layer_head_dim, k_eq_v]},
//  layer_kinds{full, sliding, none} (counts), [layer_pattern[] when not all one kind],
//  [moe{...}], [ssm{...}], gated_mlp, tie_word_embeddings, num_parameters, weights_bytes}
Json model_json(const model::ModelSpec& model);

// {name, display_name, vendor, source, memory_bytes, memory_bandwidth_bytes_per_s,
//  peak_flops{dtype: FLOP/s}, interconnect_bandwidth_bytes_per_s, interconnect_latency_s,
//  pcie_bandwidth_bytes_per_s, gpus_per_node, price_per_hour, cost_model_provenance{...}}
Json hardware_json(const model::HardwareSpec& hardware);

// The memory-related serving settings:
// {tensor_parallel_size, gpu_memory_utilization, block_size, max_model_len, kv_cache_dtype,
//  kv_format{dtype, scale_group_size, scale_dtype}, activation_reserve_bytes (null: estimated),
//  runtime_overhead_bytes}. Callers add their own fields (scheduler,
// max_num_seqs, ...) to the returned object.
struct ServingMemoryInputs {
  std::int64_t tensor_parallel_size = 1;
  double gpu_memory_utilization = 0.9;
  std::int64_t block_size = 16;
  std::int64_t max_model_len = 0;
  std::string kv_cache_dtype = "auto";  // as given
  model::KvFormat kv_format;
  std::optional<Bytes> activation_reserve_bytes;  // as given; nullopt (JSON null): estimated
  Bytes runtime_overhead_bytes = model::kDefaultRuntimeOverheadBytes;
  // kVllmV1 adds engine "vllm-v1", vllm_version and the overrides; kV0 adds nothing (reports
  // written before V1 stay byte-identical).
  model::MemoryEngine engine = model::MemoryEngine::kV0;
  model::VllmRelease vllm_release = model::kDefaultVllmRelease;
  std::optional<Bytes> kv_cache_memory_bytes;
  std::optional<std::int64_t> num_gpu_blocks_override;
};
Json serving_json(const ServingMemoryInputs& serving);

}  // namespace kvsim::report
