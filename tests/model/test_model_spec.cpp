// model/model_spec.cpp: the report names of attention, layer and block kinds.
#include <catch2/catch.hpp>

#include "model/model_spec.h"

using namespace kvsim::model;

TEST_CASE("model spec: attention, layer and block kinds have their YAML names", "[model][spec]") {
  CHECK(attention_kind_name(AttentionKind::kMha) == "mha");
  CHECK(attention_kind_name(AttentionKind::kMqa) == "mqa");
  CHECK(attention_kind_name(AttentionKind::kGqa) == "gqa");
  CHECK(attention_kind_name(AttentionKind::kMla) == "mla");
  CHECK(layer_kind_name(LayerKind::kFullAttention) == "full");
  CHECK(layer_kind_name(LayerKind::kSlidingWindow) == "sliding");
  CHECK(layer_kind_name(LayerKind::kNoKvCache) == "none");
  CHECK(block_kind_name(BlockKind::kAttentionMlp) == "attention_mlp");
  CHECK(block_kind_name(BlockKind::kAttentionOnly) == "attention");
  CHECK(block_kind_name(BlockKind::kMlpOnly) == "mlp");
  CHECK(block_kind_name(BlockKind::kMamba) == "mamba");
}
