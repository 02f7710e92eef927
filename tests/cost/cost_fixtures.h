#pragma once
// Model and GPU specs built in code (header-only) for the cost tests: the numbers are those of the
// public configs (Hugging Face config.json, vendor datasheets), so expected values can be derived
// by hand without depending on the shipped catalog.

#include "model/hardware_spec.h"
#include "model/model_spec.h"

namespace kvsim::test {

using model::Dtype;
using model::LayerKind;

inline model::ModelSpec llama3_70b() {
  model::ModelSpec m;
  m.name = "llama-3-70b";
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.intermediate_size = 28672;
  m.vocab_size = 128256;
  m.max_context = 8192;
  m.attention.kind = model::AttentionKind::kGqa;
  m.attention.num_q_heads = 64;
  m.attention.num_kv_heads = 8;
  m.attention.head_dim = 128;
  m.layer_kinds.assign(80, LayerKind::kFullAttention);
  m.weight_dtype = Dtype::kBf16;
  return m;
}

inline model::ModelSpec mistral_7b_window() {
  model::ModelSpec m;
  m.name = "mistral-7b-v0.1";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.intermediate_size = 14336;
  m.vocab_size = 32000;
  m.max_context = 32768;
  m.attention.kind = model::AttentionKind::kGqa;
  m.attention.num_q_heads = 32;
  m.attention.num_kv_heads = 8;
  m.attention.head_dim = 128;
  m.attention.sliding_window = 4096;
  m.layer_kinds.assign(32, LayerKind::kSlidingWindow);
  m.weight_dtype = Dtype::kBf16;
  return m;
}

// Llama-3-70B's dimensions in three hybrid blocks: a Mamba mixer (no KV cache), an
// attention-only block and an MLP-only block.
inline model::ModelSpec hybrid_mamba_attention_mlp() {
  model::ModelSpec m = llama3_70b();
  m.num_layers = 3;
  m.layer_kinds = {LayerKind::kNoKvCache, LayerKind::kFullAttention, LayerKind::kNoKvCache};
  m.block_kinds = {model::BlockKind::kMamba, model::BlockKind::kAttentionOnly,
                   model::BlockKind::kMlpOnly};
  m.ssm = {128, 64, 128, 8, 4, true};  // heads, head_dim, state, groups, conv kernel
  return m;
}

// Llama-3-70B's dimensions in two hybrid blocks: a gated DeltaNet mixer then the MLP (no KV
// cache), and gated full attention (q_proj also projects the output gate) then the MLP.
inline model::ModelSpec hybrid_gated_delta_net() {
  model::ModelSpec m = llama3_70b();
  m.num_layers = 2;
  m.layer_kinds = {LayerKind::kNoKvCache, LayerKind::kFullAttention};
  m.block_kinds = {model::BlockKind::kLinearAttentionMlp, model::BlockKind::kAttentionMlp};
  m.gdn.num_key_heads = 16;
  m.gdn.num_value_heads = 32;
  m.gdn.key_head_dim = 128;
  m.gdn.value_head_dim = 128;
  m.gdn.conv_kernel = 4;
  m.attention.output_gate = true;
  return m;
}

inline model::ModelSpec deepseek_v2_lite() {
  model::ModelSpec m;
  m.name = "deepseek-v2-lite";
  m.num_layers = 27;
  m.hidden_size = 2048;
  m.intermediate_size = 10944;
  m.vocab_size = 102400;
  m.max_context = 163840;
  m.attention.kind = model::AttentionKind::kMla;
  m.attention.num_q_heads = 16;
  m.attention.num_kv_heads = 16;
  m.attention.head_dim = 192;
  m.attention.v_head_dim = 128;
  m.attention.mla = {512, 64, 128, 128, 0};
  m.layer_kinds.assign(27, LayerKind::kFullAttention);
  m.moe.num_experts = 64;
  m.moe.experts_per_token = 6;
  m.moe.expert_intermediate_size = 1408;
  m.moe.num_shared_experts = 2;
  m.moe.first_dense_layers = 1;
  m.weight_dtype = Dtype::kBf16;
  return m;
}

// DeepSeek-V2-Lite with DeepSeek Sparse Attention (as V3.2 adds it): a lightning indexer of 8
// heads of 128 scoring every key, the attention reading the best 256.
inline model::ModelSpec deepseek_v2_lite_sparse() {
  model::ModelSpec m = deepseek_v2_lite();
  m.name = "deepseek-v2-lite-sparse";
  m.attention.indexer = {8, 128, 256};
  return m;
}

inline model::HardwareSpec h100_sxm() {
  model::HardwareSpec h;
  h.name = "h100-sxm";
  h.memory_bytes = 80ull * 1000 * 1000 * 1000;
  h.memory_bandwidth = 3.35e12;
  h.peak_flops = {{Dtype::kBf16, 989.4e12}, {Dtype::kFp16, 989.4e12}, {Dtype::kFp8, 1978.9e12}};
  h.interconnect_bandwidth = 450e9;
  h.interconnect_latency_s = 2e-6;
  h.pcie_bandwidth = 64e9;
  return h;
}

inline model::HardwareSpec a100_sxm() {
  model::HardwareSpec h;
  h.name = "a100-sxm";
  h.memory_bytes = 80ull * 1000 * 1000 * 1000;
  h.memory_bandwidth = 2.039e12;
  h.peak_flops = {{Dtype::kBf16, 312e12}, {Dtype::kFp16, 312e12}, {Dtype::kFp32, 19.5e12}};
  h.interconnect_bandwidth = 300e9;
  h.interconnect_latency_s = 2e-6;
  h.pcie_bandwidth = 32e9;
  return h;
}

}  // namespace kvsim::test
