#pragma once
// The `kv` object of kvsim.report/v1 and the `kvsim kv` report (JSON, table, CSV).
//
// kv object (stable names; added fields may follow):
//   bytes_per_token             logical (tp = 1), all layers
//   bytes_per_token_per_layer[] logical, one per decoder layer (0 for layers without KV)
//   total_bytes                 batch × context KV of the whole model (window-capped)
//   weights_bytes               whole model
//   kv_budget_bytes             per GPU; null without a GPU; 0 when the model does not fit
//   max_cached_tokens           per GPU budget / per GPU bytes per token; null without a GPU
//   block_size
//   num_blocks                  null without a GPU
//   max_concurrent_sequences    at `context`; null without a GPU
// and, added: kv_cache_dtype, tensor_parallel_size, batch, context, bytes_per_sequence,
// bytes_per_token_per_gpu, total_bytes_per_gpu, weights_bytes_per_gpu, num_parameters,
// ssm_state_bytes_per_sequence, groups[] (layers[] with KvDetail::kLayers), fits, budget{...} (the
// breakdown), block_bytes, bytes_per_sequence_per_gpu, and with --engine v1 and a GPU vllm{version,
// profile{...}, available_kv_cache_bytes, available_kv_cache_gib, num_gpu_blocks,
// gpu_kv_cache_tokens, max_concurrency, max_model_len, log_lines[3], ...}.

#include <optional>
#include <string>
#include <vector>

#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/model_spec.h"
#include "model/pipeline.h"
#include "model/vllm_memory.h"
#include "report/json.h"
#include "report/spec_json.h"

namespace kvsim::report {

// How much per-layer detail the `kv` object carries. kLayers adds each group's layer indices
// (groups[].layers): `kvsim kv` always, simulate/compare only with --verbose.
// bytes_per_token_per_layer[] is a stable field (DESIGN.md) and is always there.
enum class KvDetail { kSummary, kLayers };

// The `kv` object for an analysis (from model::analyze_kv).
Json kv_json(const model::KvAnalysis& analysis, const std::string& kv_cache_dtype, KvDetail detail);

// One alternative attention layout of the same model, for --compare-attention.
struct AttentionVariant {
  std::string label;  // "MHA", "GQA (model)", "MQA"
  std::int64_t kv_heads = 0;
  Bytes bytes_per_token = 0;                             // logical
  Bytes total_bytes = 0;                                 // batch × context
  double compression_vs_mha = 0;                         // MHA bytes / these bytes
  std::optional<std::int64_t> max_concurrent_sequences;  // with a GPU
};

// Everything `kvsim kv` prints.
struct KvReport {
  model::ModelSpec model;
  const model::HardwareSpec* hardware = nullptr;  // may be null
  ServingMemoryInputs serving;
  model::KvAnalysis analysis;
  std::vector<AttentionVariant> attention_variants;  // empty without --compare-attention
  // When the model does not fit: the smallest tensor-parallel degree that would (if any).
  std::optional<std::int64_t> min_fitting_tensor_parallel_size;
  // False when the activation reserve was given (--activation-reserve-gib), not estimated.
  bool activation_reserve_estimated = true;
  // --engine v1 with a GPU: the worker's memory profile and the cache layout vLLM logs.
  std::optional<model::VllmMemoryProfile> vllm_profile;
  std::optional<model::VllmKvCacheLayout> vllm_layout;
  std::optional<std::int64_t> num_gpu_blocks_override;
  // --pipeline-parallel-size > 1: `model` is this stage's part (model::stage_model) and every
  // per-GPU figure is its GPUs'.
  std::int64_t pipeline_parallel_size = 1;
  std::optional<model::PipelineStage> stage;
};

// The full document: envelope("kvsim.report/v1", "kv"), inputs{model, hardware (null without a
// GPU), serving}, kv{...}, and attention_comparison[] when variants are present.
std::string kv_report_json(const KvReport& report);
// The readable derivation (see README).
std::string kv_report_table(const KvReport& report);
// One header line and one row.
std::string kv_report_csv(const KvReport& report);

}  // namespace kvsim::report
