// config/json_reader.cpp: the JSON reader under the HF importer: non-finite numbers, numbers
// beyond double range and nesting depth, each a located error.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/hf_import.h"
#include "model/model_spec.h"
#include "test_util.h"

using Catch::Matchers::Contains;
using kvsim::test::error_of;
using namespace kvsim;
using namespace kvsim::config;
using kvsim::model::ModelSpec;

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

}  // namespace

TEST_CASE("non-finite JSON numbers are tolerated outside strings only", "[config][hf]") {
  const std::string text =
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 128,
          "intermediate_size": 128, "limits": [0.0, Infinity, -Infinity, NaN],
          "note": "Infinity stays text"})";
  const ModelSpec m = config::parse_hf_config(text, "x/config.json");
  CHECK(m.num_layers == 2);
  CHECK(m.name == "x");  // a config.json is named after its folder
}

TEST_CASE("hf: a number beyond double range is an error, not an internal error",
          "[config][hf][hostile]") {
  CHECK_THAT(error_of([] { (void)parse_hf_config(R"({"schema":"s","x":1e400})", "c.json"); }),
             Contains("c.json:1:19: ") && Contains("1e400 is beyond the range of a double"));
  CHECK_THAT(error_of([] {
               (void)parse_hf_config(hf_with("\"vocab_size\": 100", "\"vocab_size\": -1e999"),
                                     "c.json");
             }),
             Contains("c.json:7:17: ") && Contains("beyond the range"));
}

TEST_CASE("hf: 20,000-deep JSON is an error, not a stack overflow or gigabytes of paths",
          "[config][hf][hostile]") {
  const std::string lists =
      R"({"model_type":"llama","x":)" + std::string(20000, '[') + std::string(20000, ']') + "}";
  CHECK_THAT(error_of([&] { (void)parse_hf_config(lists, "c.json"); }),
             Contains("c.json:1:") && Contains("nested deeper than 64 levels"));
  std::string objects = R"({"model_type":"llama","x":)";
  for (int i = 0; i < 20000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(20000, '}') + "}";
  CHECK_THAT(error_of([&] { (void)parse_hf_config(objects, "c.json"); }),
             Contains("nested deeper than 64 levels"));
  // 60 levels are fine (and located only as deep as the importer reads).
  const std::string ok =
      hf_with("\"vocab_size\": 100",
              "\"vocab_size\": 100, \"x\": " + std::string(60, '[') + std::string(60, ']'));
  CHECK(parse_hf_config(ok, "c.json").vocab_size == 100);
}
