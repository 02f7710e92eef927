// A table of bad inputs across model YAML, hardware YAML, Hugging Face JSON and flags. Each must
// end with exit code 2, nothing on stdout, and one message on stderr naming the file (when there
// is one), the field and what was expected.
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;

namespace {

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

const char* kGpu = R"(name: g
memory_bytes: 100000000000
memory_bandwidth_gb_s: 1000
peak_tflops: {bf16: 100}
interconnect_bandwidth_gb_s: 100
pcie_bandwidth_gb_s: 32
)";

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

std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), to);
  return text;
}

struct Case {
  std::string name;
  std::string file;  // written to the temp dir ("" = none)
  std::string content;
  std::vector<std::string> args;    // "{}" is replaced by the file's path
  std::vector<std::string> expect;  // substrings of stderr, in order
};

}  // namespace

TEST_CASE("bad inputs: exit 2 with file, field and what was expected", "[cli][kv][errors]") {
  const std::vector<std::string> kv_model{"kv", "--model", "{}"};
  const std::vector<std::string> kv_gpu{"kv", "--model", "llama-3-8b", "--gpu", "{}"};
  const std::vector<Case> cases{
      // ---- model YAML
      {"yaml unknown key",
       "m.yaml",
       edit(kModel, "source: test\n", "source: test\nnorms: layernorm\n"),
       kv_model,
       {"m.yaml:3:1: norms: ", "unknown key 'norms', did you mean 'norm'?"}},
      {"yaml typo of a required key",
       "m.yaml",
       edit(kModel, "kv_heads: 2", "kv_head: 2"),
       kv_model,
       {"m.yaml:10:12: attention.kv_head: ", "did you mean 'kv_heads'?"}},
      {"yaml missing field",
       "m.yaml",
       edit(kModel, "max_context: 256\n", ""),
       kv_model,
       {"m.yaml:1:1: max_context: ", "missing required field"}},
      {"yaml wrong type",
       "m.yaml",
       edit(kModel, "layers: 4", "layers: four"),
       kv_model,
       {"m.yaml:3:9: layers: ", "expected a positive integer, got 'four'"}},
      {"yaml non-positive count",
       "m.yaml",
       edit(kModel, "hidden_size: 64", "hidden_size: -64"),
       kv_model,
       {"m.yaml:4:14: hidden_size: ", "expected a positive integer, got '-64'"}},
      {"yaml q_heads not divisible by kv_heads",
       "m.yaml",
       edit(kModel, "kv_heads: 2", "kv_heads: 3"),
       kv_model,
       {"m.yaml:10:13: attention.kv_heads: ", "expected a divisor of the 4 query heads", "got 3"}},
      {"yaml mha with fewer kv heads",
       "m.yaml",
       edit(kModel, "  q_heads: 4\n", "  kind: mha\n  q_heads: 4\n"),
       kv_model,
       {"m.yaml:11:13: attention.kv_heads: ", "expected 4 (kind mha"}},
      {"yaml bad layer kind",
       "m.yaml",
       edit(kModel, "  kv_heads: 2\n",
            "  kv_heads: 2\n  sliding_window: 8\n  layer_pattern: [sliding, global]\n"),
       kv_model,
       {"m.yaml:12:28: attention.layer_pattern[1]: ",
        "expected full|sliding|linear, got 'global'"}},
      {"yaml experts_per_token above experts",
       "m.yaml",
       std::string(kModel) +
           "moe: {experts: 4, experts_per_token: 6, expert_intermediate_size: 32}\n",
       kv_model,
       {"m.yaml:11:", "moe.experts_per_token: ", "expected an integer in [1, 4]", "got 6"}},
      {"yaml syntax",
       "m.yaml",
       edit(kModel, "layers: 4", "layers: [4"),
       kv_model,
       {"m.yaml:", "invalid YAML"}},
      // ---- hardware YAML
      {"gpu negative memory",
       "g.yaml",
       edit(kGpu, "memory_bytes: 100000000000", "memory_bytes: -1"),
       kv_gpu,
       {"g.yaml:2:15: memory_bytes: ", "expected a positive integer, got '-1'"}},
      {"gpu unknown dtype",
       "g.yaml",
       edit(kGpu, "{bf16: 100}", "{bf18: 100}"),
       kv_gpu,
       {"g.yaml:4:21: peak_tflops.bf18: ", "expected one of fp32|fp16|bf16|fp8|int8|int4|fp4",
        "did you mean 'bf16'?"}},
      {"gpu wrong type",
       "g.yaml",
       std::string(kGpu) + "price_per_hour: cheap\n",
       kv_gpu,
       {"g.yaml:7:17: price_per_hour: ", "expected a number >= 0, got 'cheap'"}},
      {"gpu unknown key",
       "g.yaml",
       std::string(kGpu) + "hbm_gb: 80\n",
       kv_gpu,
       {"g.yaml:7:1: hbm_gb: ", "unknown key 'hbm_gb'"}},
      // ---- Hugging Face JSON
      {"hf unknown model_type",
       "config.json",
       edit(kHf, "\"llama\"", "\"rwkv\""),
       kv_model,
       {"config.json:2:17: model_type: ", "unsupported model_type 'rwkv'", "expected one of"}},
      {"hf wrong type",
       "config.json",
       edit(kHf, "\"num_attention_heads\": 4", "\"num_attention_heads\": \"4\""),
       kv_model,
       {"config.json:5:26: num_attention_heads: ", "expected a positive integer, got '4'"}},
      {"hf missing field",
       "config.json",
       edit(kHf, "  \"vocab_size\": 100,\n", ""),
       kv_model,
       {"config.json:1:1: vocab_size: ", "missing required field; expected an integer"}},
      {"hf kv heads not dividing",
       "config.json",
       edit(kHf, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"),
       kv_model,
       {"config.json:6:26: num_key_value_heads: ", "expected a divisor of the 4 query heads"}},
      {"hf invalid json",
       "config.json",
       edit(kHf, "\"hidden_size\": 64,", "\"hidden_size\": 64,,"),
       kv_model,
       {"config.json:4:", "invalid JSON"}},
      // ---- flags
      {"unknown model name",
       "",
       "",
       {"kv", "--model", "llama3-8b"},
       {"--model: expected a shipped model name (",
        "or a path to a model YAML or a Hugging Face config.json",
        "got unknown name 'llama3-8b', did you mean 'llama-3-8b'?"}},
      {"unknown gpu name",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--gpu", "h100-sxn"},
       {"--gpu: expected a shipped GPU name (",
        "got unknown name 'h100-sxn', did you mean 'h100-sxm'?"}},
      {"missing model file",
       "",
       "",
       {"kv", "--model", "/no/such/model.yaml"},
       {"/no/such/model.yaml: --model: cannot open file"}},
      {"bad kv-cache-dtype",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--kv-cache-dtype", "fp6"},
       {"--kv-cache-dtype: expected one of auto|fp32|fp16|bf16|fp8|int8|int4|fp4, got 'fp6'"}},
      {"utilization above 1",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--gpu-memory-utilization", "1.5"},
       {"--gpu-memory-utilization: expected a fraction in (0, 1], got '1.5'"}},
      {"utilization zero",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--gpu-memory-utilization", "0"},
       {"--gpu-memory-utilization: expected a fraction in (0, 1], got '0'"}},
      {"utilization not a number",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--gpu-memory-utilization", "most"},
       {"--gpu-memory-utilization: expected a fraction in (0, 1], got 'most'"}},
      {"negative activation reserve",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--activation-reserve-gib", "-1"},
       {"--activation-reserve-gib: expected a number of GiB in [0, 1048576], got '-1'"}},
      {"runtime overhead not a number",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--runtime-overhead-gib", "lots"},
       {"--runtime-overhead-gib: expected a number of GiB in [0, 1048576], got 'lots'"}},
      {"tp not dividing heads",
       "",
       "",
       {"kv", "--model", "llama-3-70b", "--tensor-parallel-size", "3"},
       {"--tensor-parallel-size: ", "64 query heads", "expected a divisor of 64"}},
      {"tp not a number",
       "",
       "",
       {"kv", "--model", "llama-3-70b", "--tensor-parallel-size", "four"},
       {"--tensor-parallel-size: expected an integer in [1, 4096], got 'four'"}},
      {"block size zero",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--block-size", "0"},
       {"--block-size: expected an integer in [1, 1048576], got '0'"}},
      {"max-model-len above the model's",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--max-model-len", "100000"},
       {"--max-model-len: expected at most the model's maximum context (8192 tokens",
        "got 100000"}},
      {"context above max-model-len",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--context", "9000"},
       {"--context: expected at most the max model length (8192 tokens), got 9000"}},
      {"batch zero",
       "",
       "",
       {"kv", "--model", "llama-3-8b", "--batch", "0"},
       {"--batch: expected a positive integer, got '0'"}},
      {"no model", "", "", {"kv", "--gpu", "h100-sxm"}, {"--model: missing required flag"}},
  };
  REQUIRE(cases.size() >= 15);
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<std::string> args = c.args;
    if (!c.file.empty()) {
      const std::string path =
          kvsim::test::write_temp_file(kvsim::test::temp_dir(), c.file, c.content);
      for (auto& a : args) {
        if (a == "{}") a = path;
      }
    }
    args.push_back("--format");
    args.push_back("json");
    kvsim::test::check_one_error(run_kvsim(args), c.expect);
  }
}
