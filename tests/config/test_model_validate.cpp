// config/model_validate.cpp: the bounds every model is checked against, from HF JSON or YAML.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/hf_import.h"
#include "config/model_yaml.h"
#include "test_util.h"

using Catch::Matchers::Contains;
using kvsim::test::error_of;
using namespace kvsim::config;

namespace {

const char* kHf = R"({
  "model_type": "llama",
  "num_hidden_layers": 2,
  "hidden_size": 64,
  "num_attention_heads": 4,
  "num_key_value_heads": 2,
  "vocab_size": 100,
  "max_position_embeddings": 256,
  "intermediate_size": 128
})";

std::string hf_with(const std::string& from, const std::string& to) {
  std::string text = kHf;
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), to);
  return text;
}

const char* kModel = R"(name: tiny
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

std::string model_with(const std::string& from, const std::string& to) {
  std::string text = kModel;
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("hf and yaml: model dimensions have upper bounds", "[config][hf][model][hostile]") {
  CHECK_THAT(error_of([] {
               (void)parse_hf_config(
                   hf_with("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3000000000"),
                   "c.json");
             }),
             Contains("c.json:3:24: num_hidden_layers: expected an integer in [1, 10000], got "
                      "3000000000"));
  CHECK_THAT(error_of([] {
               (void)parse_hf_config(
                   hf_with("\"vocab_size\": 100", "\"vocab_size\": 100, \"head_dim\": 1e12"),
                   "c.json");
             }),
             Contains("head_dim: expected an integer in [1, 1099511627776]") ||
                 Contains("head_dim: expected at most 1048576"));
  CHECK_THAT(error_of([] {
               (void)parse_hf_config(hf_with("\"hidden_size\": 64", "\"hidden_size\": 1e18"),
                                     "c.json");
             }),
             Contains("c.json:4:18: hidden_size: expected an integer in [1, 1099511627776]"));
  CHECK_THAT(error_of([] {
               (void)parse_hf_config(hf_with("\"hidden_size\": 64", "\"hidden_size\": 2097152"),
                                     "c.json");
             }),
             Contains("c.json:4:18: hidden_size: expected at most 1048576, got 2097152"));
  CHECK_THAT(error_of([] {
               (void)parse_model_yaml(model_with("layers: 4", "layers: 3000000000"), "m.yaml");
             }),
             Contains("m.yaml:3:9: layers: expected an integer in [1, 10000], got 3000000000"));
  CHECK_THAT(error_of([] {
               (void)parse_model_yaml(
                   model_with("  kv_heads: 2\n", "  kv_heads: 2\n  head_dim: 1000000000000\n"),
                   "m.yaml");
             }),
             Contains("m.yaml:11:13: attention.head_dim: expected at most 1048576"));
  CHECK_THAT(error_of([] {
               (void)parse_model_yaml(
                   model_with("hidden_size: 64", "hidden_size: 1000000000000000000"), "m.yaml");
             }),
             Contains("m.yaml:4:14: hidden_size: expected at most 1048576"));
}

TEST_CASE("model: products of in-bound dimensions past 2^64 are an error, never a wrap",
          "[config][model][hostile]") {
  const std::string huge = R"(name: big
source: test
layers: 10000
hidden_size: 1048576
intermediate_size: 1048576
vocab_size: 16777216
max_context: 1073741824
attention:
  q_heads: 65536
  kv_heads: 65536
  head_dim: 1048576
moe:
  experts: 65536
  experts_per_token: 8
  expert_intermediate_size: 1048576
)";
  CHECK_THAT(error_of([&] { (void)parse_model_yaml(huge, "m.yaml"); }),
             Contains("m.yaml:3:9: layers: ") && Contains("exceeds 2^64"));
}
