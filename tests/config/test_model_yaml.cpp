#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/catalog.h"
#include "config/catalog_data.h"
#include "config/hardware_yaml.h"
#include "config/model_yaml.h"
#include "model/kv_math.h"
#include "model/weights.h"
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

TEST_CASE("model YAML: linear layers with their gated DeltaNet section", "[config][yaml]") {
  const std::string hybrid = std::string(kMinimal) +
                             "  output_gate: true\n"
                             "  layer_pattern: [linear, full]\n"
                             "linear_attention:\n"
                             "  key_heads: 2\n"
                             "  value_heads: 4\n"
                             "  key_head_dim: 8\n"
                             "  value_head_dim: 8\n"
                             "  conv_kernel: 4\n"
                             "  state_dtype: fp32\n";
  const ModelSpec m = config::parse_model_yaml(hybrid, "h.yaml");
  CHECK(m.attention.output_gate);
  CHECK(m.block_kinds ==
        std::vector<BlockKind>{BlockKind::kLinearAttentionMlp, BlockKind::kAttentionMlp,
                               BlockKind::kLinearAttentionMlp, BlockKind::kAttentionMlp});
  CHECK(m.num_layers_of(LayerKind::kNoKvCache) == 2);
  // Two layers × (conv 3 × (2·2·8 + 4·8) bf16 + recurrent 4 × 8 × 8 fp32).
  CHECK(ssm_state_bytes_per_sequence(m) == 2ULL * (3 * 64 * 2 + 256 * 4));
  // Linear layers need the section, the section needs linear layers, and heads must group.
  CHECK(error_of([&] {
          config::parse_model_yaml(std::string(kMinimal) + "  layer_pattern: [linear, full]\n",
                                   "a.yaml");
        }).find("a.yaml:11:18: attention.layer_pattern: expected a linear_attention section") !=
        std::string::npos);
  std::string no_linear = hybrid;
  no_linear.replace(no_linear.find("[linear, full]"), 14, "[full]");
  CHECK(error_of([&] {
          config::parse_model_yaml(no_linear, "b.yaml");
        }).find("linear_attention: expected linear layers") != std::string::npos);
  std::string odd = hybrid;
  odd.replace(odd.find("value_heads: 4"), 14, "value_heads: 3");
  CHECK(error_of([&] {
          config::parse_model_yaml(odd, "c.yaml");
        }).find("linear_attention.value_heads: expected a multiple of key_heads (2)") !=
        std::string::npos);
}

TEST_CASE("model YAML: the checkpoint's quantization and sparse attention", "[config][yaml]") {
  const std::string fp8 = std::string(kMinimal) +
                          "quantization:\n"
                          "  method: fp8\n"
                          "  weight_block_size: [128, 64]\n";
  const ModelSpec m = config::parse_model_yaml(fp8, "q.yaml");
  CHECK(m.quantization.method == QuantMethod::kFp8);
  CHECK(m.quantization.scales == ScaleLayout::kBlock);
  CHECK((m.quantization.block_n == 128 && m.quantization.block_k == 64));
  CHECK(m.quantization.origin == "model YAML");
  const ModelSpec awq = config::parse_model_yaml(
      std::string(kMinimal) + "quantization: {method: awq, group_size: 64}\n", "awq.yaml");
  CHECK((awq.quantization.scales == ScaleLayout::kGroup && awq.quantization.group_size == 64));
  const auto error = [](const std::string& tail) {
    return error_of([&] { config::parse_model_yaml(std::string(kMinimal) + tail, "e.yaml"); });
  };
  CHECK_THAT(error("quantization: {method: fp9}\n"),
             Catch::Contains("e.yaml:11:") &&
                 Catch::Contains("quantization.method: expected one of") &&
                 Catch::Contains("got 'fp9'"));
  CHECK_THAT(
      error("quantization: {method: awq, weight_block_size: [128, 128]}\n"),
      Catch::Contains("weight_block_size: expected block scales only with method fp8 or int8"));
  CHECK_THAT(error("quantization: {method: fp8, weight_block_size: [128]}\n"),
             Catch::Contains("weight_block_size: expected [rows, cols], two positive integers"));
  CHECK_THAT(error("quantization: {method: fp8, group_size: 128}\n"),
             Catch::Contains("group_size: expected a group size only with method awq or gptq"));
  CHECK_THAT(error("quantization: {method: fp8, blocks: [1, 2]}\n"),
             Catch::Contains("quantization.blocks"));

  // The shipped DeepSeek-V3.2 is its config.json, byte for byte in every figure kvsim derives.
  const ModelSpec yaml = config::load_model("deepseek-v3.2");
  const ModelSpec hf =
      config::load_model(test::source_dir() + "/tests/config/data/hf/deepseek-v3.2.json");
  CHECK(yaml.attention.indexer.topk == hf.attention.indexer.topk);
  CHECK(yaml.attention.indexer.heads == hf.attention.indexer.heads);
  CHECK(yaml.attention.indexer.head_dim == hf.attention.indexer.head_dim);
  CHECK(weights_bytes(yaml) == weights_bytes(hf));
  CHECK(weights_bytes_per_gpu(yaml, 8) == weights_bytes_per_gpu(hf, 8));
  const KvFormat f = *kv_format_from_name(yaml, "auto");
  CHECK(kv_bytes_per_token(yaml, f) == kv_bytes_per_token(hf, f));
  // Sparse attention over sliding-window layers is not a model kvsim prices.
  const std::string mla_sparse = R"(name: tiny
source: test
layers: 2
hidden_size: 64
intermediate_size: 128
vocab_size: 100
max_context: 256
attention:
  kind: mla
  q_heads: 4
  kv_lora_rank: 32
  qk_rope_head_dim: 16
  index_topk: 64
  index_heads: 2
  index_head_dim: 16
  sliding_window: 32
)";
  CHECK_THAT(error_of([&] { config::parse_model_yaml(mla_sparse, "s.yaml"); }),
             Catch::Contains("expected no sliding-window layers with sparse attention"));
  // An indexer needs MLA, and its sizes.
  CHECK_THAT(error_of([] {
               config::parse_model_yaml(
                   std::string(kMinimal).replace(std::string(kMinimal).find("  kv_heads: 2\n"), 13,
                                                 "  kv_heads: 2\n  index_topk: 64\n"),
                   "i.yaml");
             }),
             Catch::Contains("attention.index_topk"));
}
