#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/catalog.h"
#include "config/catalog_data.h"
#include "config/hardware_yaml.h"
#include "config/model_yaml.h"
#include "model/kv_math.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::model;

using kvsim::test::error_of;

namespace {

const char* kMinimal = R"(name: tiny
source: test
layers: 4
hidden_size: 64
intermediate_size: 128
vocab_size: 100
max_context: 256
attention:
  q_heads: 4
  kv_heads: 2
)";

}  // namespace

TEST_CASE("model YAML: defaults, inferred kind and head_dim", "[config][yaml]") {
  const ModelSpec m = config::parse_model_yaml(kMinimal, "m.yaml");
  CHECK(m.attention.kind == AttentionKind::kGqa);
  CHECK(m.attention.head_dim == 16);
  CHECK(m.weight_dtype == Dtype::kBf16);
  CHECK(m.gated_mlp);
  CHECK(m.norms_per_layer == 2);
  CHECK(m.num_layers_of(LayerKind::kFullAttention) == 4);
}

TEST_CASE("model YAML: a layer pattern is cycled over the layers", "[config][yaml]") {
  const std::string text =
      std::string(kMinimal) + "  sliding_window: 32\n  layer_pattern: [sliding, sliding, full]\n";
  const ModelSpec m = config::parse_model_yaml(text, "m.yaml");
  CHECK(m.layer_kinds ==
        std::vector<LayerKind>{LayerKind::kSlidingWindow, LayerKind::kSlidingWindow,
                               LayerKind::kFullAttention, LayerKind::kSlidingWindow});
  // A window without a pattern windows every layer (Mistral).
  const ModelSpec all =
      config::parse_model_yaml(std::string(kMinimal) + "  sliding_window: 32\n", "m.yaml");
  CHECK(all.num_layers_of(LayerKind::kSlidingWindow) == 4);
}

TEST_CASE("model YAML errors are located and say what was expected", "[config][yaml]") {
  const auto bad = [](const std::string& from, const std::string& to) {
    std::string text = kMinimal;
    const auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
    return error_of([&] { config::parse_model_yaml(text, "m.yaml"); });
  };
  CHECK(bad("kv_heads: 2", "kv_heads: 3") ==
        "m.yaml:10:13: attention.kv_heads: expected a divisor of the 4 query heads (each KV head "
        "serves a whole group of query heads), got 3");
  CHECK(bad("kv_heads: 2", "kv_head: 2") ==
        "m.yaml:10:12: attention.kv_head: unknown key 'kv_head', did you mean 'kv_heads'?");
  CHECK(bad("layers: 4", "layers: 0") ==
        "m.yaml:3:9: layers: expected a positive integer, got '0'");
  CHECK(bad("vocab_size: 100", "vocab_sise: 100") ==
        "m.yaml:6:13: vocab_sise: unknown key 'vocab_sise', did you mean 'vocab_size'?");
  CHECK(bad("vocab_size: 100\n", "") == "m.yaml:1:1: vocab_size: missing required field");
  CHECK(bad("source: test\n", "source: test\nweight_dtype: fp6\n")
            .rfind("m.yaml:3:15: weight_dtype: expected one of fp32|fp16|bf16|fp8|int8|int4|fp4, "
                   "got 'fp6'",
                   0) == 0);
  CHECK(bad("source: test\n", "source: test\nnorms: rmsnorm\n") ==
        "m.yaml:3:1: norms: unknown key 'norms', did you mean 'norm'?");
  CHECK(bad("name: tiny", "name: Tiny Model")
            .rfind("m.yaml:1:7: name: expected a lower-case name", 0) == 0);
}
