#pragma once
// kvsim model YAML (configs/models/*.yaml) → model::ModelSpec.
//
//   name: llama-3-70b                 # required; lower-case catalog name
//   display_name: Meta Llama 3 70B    # optional
//   family: llama                     # optional
//   source: https://...               # required: where the numbers come from
//   layers: 80                        # required, > 0
//   hidden_size: 8192                 # required, > 0
//   intermediate_size: 28672          # required for dense models (MLP width), > 0
//   vocab_size: 128256                # required
//   max_context: 8192                 # required: the model's maximum sequence length
//   weight_dtype: bf16                # fp32|fp16|bf16|fp8|int8|int4|fp4, default bf16
//   mlp: gated                        # gated (SwiGLU/GeGLU, 3 matrices) | plain (2); default gated
//   norm: rmsnorm                     # rmsnorm | layernorm (with bias); default rmsnorm
//   norms_per_layer: 2                # default 2
//   tie_word_embeddings: false        # default false
//   learned_positions: false          # default false (GPT-2/OPT: true)
//   parallel_attention_mlp: false     # default false
//   attention_bias: false             # default false
//   mlp_bias: false                   # default false
//   qk_norm: false                    # default false
//   attention:                        # required
//     kind: gqa                       # mha|mqa|gqa|mla; inferred from the heads when absent
//     q_heads: 64                     # required, > 0
//     kv_heads: 8                     # required (not for mla), divides q_heads
//     head_dim: 128                   # default hidden_size / q_heads
//     v_head_dim: 128                 # optional
//     sliding_window: 4096            # tokens window layers keep; optional
//     layer_pattern: [sliding, full]  # kinds (full|sliding|linear) cycled over the layers;
//                                     # default: all sliding when sliding_window is set, else all
//                                     # full; linear: a gated DeltaNet layer (linear_attention)
//     output_gate: false              # q_proj also projects a sigmoid gate on the output
//     full_layer_kv_heads: 2          # hybrid local/global: full layers' own geometry (optional)
//     full_layer_head_dim: 512
//     k_eq_v: false                   # full layers store K only (K and V shared)
//     kv_lora_rank: 512               # mla only (required), with qk_rope_head_dim (required),
//     qk_rope_head_dim: 64            #   qk_nope_head_dim, v_head_dim, q_lora_rank (optional)
//     index_topk: 2048                # mla only, optional: DeepSeek Sparse Attention, each query
//     index_heads: 64                 #   attends its top-k keys; the lightning indexer's heads
//     index_head_dim: 128             #   and head size (both required with index_topk)
//   moe:                              # optional
//     experts: 8                      # routed experts, > 0
//     experts_per_token: 2            # 1..experts
//     expert_intermediate_size: 14336 # > 0
//     shared_experts: 0               # default 0
//     shared_expert_intermediate_size: 0  # default expert_intermediate_size
//     first_dense_layers: 0           # leading dense layers, default 0
//     layer_interval: 1               # every n-th later layer is MoE, default 1
//   linear_attention:                 # required with linear layers (Qwen3-Next, Qwen3.5)
//     key_heads: 16                   # > 0
//     value_heads: 32                 # a multiple of key_heads
//     key_head_dim: 128
//     value_head_dim: 128
//     conv_kernel: 4
//     state_dtype: fp32               # the recurrent state's dtype; default the model's
//   quantization:                     # optional: the checkpoint's weights (an HF config's
//     method: fp8                     #   quantization_config): fp8|int8|awq|gptq|mxfp4|nvfp4
//     weight_block_size: [128, 128]   # fp8 / int8: one scale per block (default per tensor /
//                                     #   channel)
//     group_size: 128                 # awq / gptq: inputs per scale (default 128)
//
// Unknown keys are errors with a suggestion; every error names file, line, column and field.

#include <string>
#include <string_view>

#include "model/model_spec.h"

namespace kvsim::config {

// Parses and validates a model YAML file.
model::ModelSpec load_model_yaml_file(const std::string& path);
// The same from text; `display_path` stands for the file in errors.
model::ModelSpec parse_model_yaml(std::string_view text, const std::string& display_path);

}  // namespace kvsim::config
