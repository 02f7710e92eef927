#pragma once
// Checks the invariants model_spec.h promises, for specs from any loader. Errors name `file` and
// the loader's field name for each quantity (fields maps a canonical name such as "kv_heads" to
// the file's own key, e.g. "attention.kv_heads" in YAML or "num_key_value_heads" in HF JSON).

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

// Throws kvsim::Error for the first violated invariant.
void validate_model(const model::ModelSpec& model, const FieldLocator& locate);

}  // namespace kvsim::config
