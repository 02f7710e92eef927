#include "model/model_spec.h"

namespace kvsim::model {

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kMha: return "mha";
    case AttentionKind::kMqa: return "mqa";
    case AttentionKind::kGqa: return "gqa";
    case AttentionKind::kMla: return "mla";
  }
  return "?";
}

std::string_view layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kFullAttention: return "full";
    case LayerKind::kSlidingWindow: return "sliding";
    case LayerKind::kNoKvCache: return "none";
  }
  return "?";
}

}  // namespace kvsim::model
