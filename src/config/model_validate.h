#pragma once
// Checks the invariants model_spec.h promises, for specs from any loader. Errors name `file` and
// the loader's field name for each quantity (fields maps a canonical name such as "kv_heads" to
// the file's own key, e.g. "attention.kv_heads" in YAML or "num_key_value_heads" in HF JSON).

#include <cstdint>
#include <functional>
#include <string>

#include "common/error.h"
#include "model/model_spec.h"

namespace kvsim::config {

// Canonical quantity names: layers, hidden_size, intermediate_size, vocab_size, max_context,
// q_heads, kv_heads, head_dim, sliding_window, kv_lora_rank, qk_rope_head_dim, experts,
// experts_per_token, expert_intermediate_size, full_layer_kv_heads, full_layer_head_dim,
// layer_pattern. `locate(name)` returns where that quantity came from (file, line, column,
// field) for the error.
using FieldLocator = std::function<ErrorLocation(const std::string& canonical_name)>;

// Upper bounds on a model's dimensions (README "Limits"): far above any published model, low
// enough that a typo (layers: 3000000000) is an error rather than gigabytes of per-layer state.
// Loaders bound the layer count before they allocate per-layer data.
inline constexpr std::int64_t kMaxLayers = 10'000;
inline constexpr std::int64_t kMaxWidth = 1 << 20;  // hidden, intermediate, head and MLA dims
inline constexpr std::int64_t kMaxHeads = 1 << 16;  // query, KV and Mamba heads, Mamba groups
inline constexpr std::int64_t kMaxVocab = 1 << 24;
inline constexpr std::int64_t kMaxContext = 1 << 30;  // max_context, sliding_window (tokens)
inline constexpr std::int64_t kMaxExperts = 1 << 16;

// Throws kvsim::Error for the first violated invariant or bound, and when the model's parameter
// count, weight bytes or KV bytes of one max_context sequence would exceed 2^64.
void validate_model(const model::ModelSpec& model, const FieldLocator& locate);

}  // namespace kvsim::config
