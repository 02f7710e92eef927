#include "model/model_spec.h"

#include "common/enum_names.h"

namespace kvsim::model {

constexpr EnumNames<AttentionKind, 4> kAttentionKindNames{{{
    {AttentionKind::kMha, "mha"},
    {AttentionKind::kMqa, "mqa"},
    {AttentionKind::kGqa, "gqa"},
    {AttentionKind::kMla, "mla"},
}}};

bool has_mxfp4_experts(const ModelSpec& m) {
  return m.moe.enabled() && ((m.moe.has_expert_dtype && m.moe.expert_dtype == Dtype::kFp4) ||
                             m.quantization.method == QuantMethod::kMxfp4);
}

std::string_view attention_kind_name(AttentionKind kind) {
  return kAttentionKindNames.name(kind);
}

constexpr EnumNames<LayerKind, 3> kLayerKindNames{{{
    {LayerKind::kFullAttention, "full"},
    {LayerKind::kSlidingWindow, "sliding"},
    {LayerKind::kNoKvCache, "none"},
}}};

std::string_view layer_kind_name(LayerKind kind) {
  return kLayerKindNames.name(kind);
}

constexpr EnumNames<BlockKind, 5> kBlockKindNames{{{
    {BlockKind::kAttentionMlp, "attention_mlp"},
    {BlockKind::kAttentionOnly, "attention"},
    {BlockKind::kMlpOnly, "mlp"},
    {BlockKind::kMamba, "mamba"},
    {BlockKind::kLinearAttentionMlp, "linear_attention_mlp"},
}}};

std::string_view block_kind_name(BlockKind kind) {
  return kBlockKindNames.name(kind);
}

}  // namespace kvsim::model
