#pragma once
// Hugging Face config.json → model::ModelSpec.
//
// Families (model_type): llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma,
// gemma2, gemma3, gemma3_text, gemma4, gemma4_text, falcon / RefinedWeb / RefinedWebModel (old
// `multi_query`/`n_head_kv` and new `new_decoder_architecture`/`num_kv_heads` forms), gpt2, opt,
// phi3, deepseek_v2, deepseek_v3, glm4, glm4_moe, glm4_moe_lite, gpt_oss, nemotron_h,
// qwen3_next, qwen3_5_text, qwen3_5_moe_text, kimi_k2, llama4_text, and the Qwen-VL language models
// (qwen2_vl, qwen2_5_vl and their _text forms as qwen2; qwen3_vl_text, qwen3_vl_moe_text).
// Multimodal wrappers (and any config whose own model_type is unknown) are read from their
// `text_config`. A model_type kvsim does not know is read as the family of its `architectures`
// class, as vLLM picks the implementation (a fine-tune of DeepseekV3ForCausalLM under its own
// model_type). A `vision_config` beside the language model adds its
// vision encoder's estimated parameters (ModelSpec::vision_parameters); one without its depth,
// widths and patch size is a warning and counts 0. Non-standard JSON number tokens (bare Infinity,
// -Infinity, NaN, as Python's json writes them) are accepted and read as null; kvsim reads no such
// field.
//
// Rules worth knowing: `head_dim` when present wins over hidden/heads; `sliding_window` counts
// only when the family uses it (`use_sliding_window: false` disables it for Qwen); `layer_types`
// when present decides which layers are windowed; Mistral, Mixtral and Phi-3 window every layer
// when sliding_window is set (Phi-3-mini-4k: 2,047); Gemma 2 alternates (even layers local),
// Gemma 3 makes every sliding_window_pattern-th layer global; torch_dtype float32 or absent serves
// as fp16 (vLLM --dtype auto); a name for the model is derived from the file name.
//
// Errors (kvsim::Error) name the file, the line and column of the offending value, the field
// (dotted, e.g. "text_config.num_key_value_heads") and what was expected; an unknown model_type
// lists the supported ones. Keys kvsim does not read are ignored, except that one a single edit
// away from a key it read and did not find (`num_key_value_head`) is a warning (common/warning.h).
// Limits: nesting ≤ 64 levels, integers ≤ 2^40, numbers within double range (README "Input
// limits").

#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace kvsim::config {

// `display_path` stands for the file in errors and names the model.
model::ModelSpec parse_hf_config(std::string_view text, const std::string& display_path);

// The model_type values parse_hf_config understands, sorted.
std::vector<std::string> hf_model_types();

}  // namespace kvsim::config
