#pragma once
// Private to the Hugging Face import (hf_import.h): what a family reader fills, the helpers the
// readers share (hf_import.cpp), and one reader per model_type family (hf_families_llama.cpp:
// the Llama lineage; hf_families_other.cpp: Falcon, GPT-2, OPT and Nemotron-H).

#include <map>
#include <string>
#include <vector>

#include "config/json_reader.h"
#include "model/model_spec.h"

namespace kvsim::config::hf {

// Where each canonical quantity came from, for validate_model's errors.
using FieldMap = std::map<std::string, std::string>;

struct Import {
  model::ModelSpec m;
  FieldMap fields;  // canonical name → key in the config object
};

// The dtype vLLM's --dtype auto serves the checkpoint in: its torch_dtype (or dtype), except
// that float32 checkpoints are served in float16 (bfloat16 for the Gemma 2+ families, which
// overflow in float16).
model::Dtype read_dtype(const JsonReader& r, model::Dtype when_absent,
                        model::Dtype fp32_served_as = model::Dtype::kFp16);

void set_all_layers(model::ModelSpec& m, model::LayerKind kind);

// `layer_types` (when present) decides the windowed layers.
bool read_layer_types(const JsonReader& r, Import& im);

// The fields every decoder-only transformer config shares (Llama naming).
void read_llama_like(const JsonReader& r, Import& im, bool tie_default);

void infer_attention_kind(model::AttentionSpec& a);

// sliding_window applied to every layer (Mistral, Phi-3); null = none.
void window_all_layers(const JsonReader& r, Import& im);

void read_moe_common(const JsonReader& r, Import& im, const std::string& experts_key,
                     const std::vector<std::string>& top_k_keys, const std::string& width_key);

// quantization_config (when `r` has one) → im.m.quantization (hf_quantization.cpp). Throws at
// quant_method for a method kvsim cannot cost.
void read_quantization(const JsonReader& r, Import& im);

// The family readers: each fills im.m and im.fields from the (text) config object `r`.
void family_llama(const JsonReader& r, Import& im);
void family_mistral(const JsonReader& r, Import& im);
void family_mixtral(const JsonReader& r, Import& im);
void family_qwen2(const JsonReader& r, Import& im);
void family_qwen2_moe(const JsonReader& r, Import& im);
void family_qwen3(const JsonReader& r, Import& im);
void family_qwen3_moe(const JsonReader& r, Import& im);
void family_qwen3_next(const JsonReader& r, Import& im);
void family_phi3(const JsonReader& r, Import& im);
void family_gemma(const JsonReader& r, Import& im);
void family_gemma2(const JsonReader& r, Import& im);
void family_gemma3(const JsonReader& r, Import& im);
void family_gemma4(const JsonReader& r, Import& im);
void family_deepseek(const JsonReader& r, Import& im);
void family_minimax_m2(const JsonReader& r, Import& im);
void family_glm4(const JsonReader& r, Import& im);
void family_glm4_moe(const JsonReader& r, Import& im);
void family_llama4(const JsonReader& r, Import& im);
void family_gpt_oss(const JsonReader& r, Import& im);
void family_falcon(const JsonReader& r, Import& im, const std::string& model_type);
void family_gpt2(const JsonReader& r, Import& im);
void family_opt(const JsonReader& r, Import& im);
void family_nemotron_h(const JsonReader& r, Import& im);

}  // namespace kvsim::config::hf
