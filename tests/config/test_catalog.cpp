// config/catalog.cpp: the shipped models and GPUs by name.
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

TEST_CASE("catalog: names, paths and unknown names with a suggestion", "[config][catalog]") {
  CHECK(error_of([] {
          config::load_model("llama3-70b");
        }).find("got unknown name 'llama3-70b', did you mean 'llama-3-70b'?") != std::string::npos);
  CHECK(error_of([] {
          config::load_hardware("h100");
        }).rfind("--gpu: expected a shipped GPU name (a100-40gb, ", 0) == 0);
  CHECK(error_of([] { config::load_model("/nonexistent/m.yaml"); }) ==
        "/nonexistent/m.yaml: --model: cannot open file");
  const std::string dir = test::temp_dir();
  const std::string yaml = test::write_temp_file(dir, "mine.yaml", kMinimal);
  CHECK(config::load_model(yaml).name == "tiny");
  // A JSON file without the .json suffix is recognised by its content.
  const std::string json =
      test::write_temp_file(dir, "hfconfig",
                            R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 128,
          "intermediate_size": 128})");
  CHECK(config::load_model(json).family == "llama");
}
