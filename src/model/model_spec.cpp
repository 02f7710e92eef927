#include "model/model_spec.h"

namespace kvsim::model {

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kMha:
      return "mha";
    case AttentionKind::kMqa:
      return "mqa";
    case AttentionKind::kGqa:
      return "gqa";
    case AttentionKind::kMla:
      return "mla";
  }
  return "?";
}

std::string_view layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kFullAttention:
      return "full";
    case LayerKind::kSlidingWindow:
      return "sliding";
    case LayerKind::kNoKvCache:
      return "none";
  }
  return "?";
}

std::string_view block_kind_name(BlockKind kind) {
  switch (kind) {
    case BlockKind::kAttentionMlp:
      return "attention_mlp";
    case BlockKind::kAttentionOnly:
      return "attention";
    case BlockKind::kMlpOnly:
      return "mlp";
    case BlockKind::kMamba:
      return "mamba";
  }
  return "?";
}

}  // namespace kvsim::model
