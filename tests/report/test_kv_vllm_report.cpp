// report/kv_vllm_report.cpp: the vLLM V1 section of `kvsim kv`, ending in the lines vLLM logs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("kvsim kv --engine v1 prints the three lines vLLM logs", "[cli][kv][vllm]") {
  const auto r =
      run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--format", "table"});
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "vLLM V1 memory profile per GPU"));
  CHECK(has(r.out, "Available KV cache memory: "));
  CHECK(has(r.out, "GPU KV cache size: "));
  CHECK(has(r.out, "Maximum concurrency for 8,192 tokens per request: "));
  const auto j =
      run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--max-num-batched-tokens",
                 "4096", "--max-num-seqs", "128", "--format", "json"});
  REQUIRE(j.exit_code == 0);
  const Json doc = Json::parse(j.out);
  const Json& v = doc["kv"]["vllm"];
  CHECK(v["version"] == "0.10.1");
  CHECK(v["profile"]["max_num_batched_tokens"] == 4096);
  CHECK(v["profile"]["max_num_seqs"] == 128);
  CHECK(v["profile"]["total_memory_source"] == "measured");
  CHECK(v["log_lines"].size() == 3);
  // A full-attention model: tokens = blocks × 16, blocks = available / (16 × 131,072 B).
  const auto available = v["available_kv_cache_bytes"].get<std::uint64_t>();
  CHECK(v["num_gpu_blocks"] == available / (16 * 131072));
  CHECK(v["gpu_kv_cache_tokens"] == v["num_gpu_blocks"].get<std::int64_t>() * 16);
  CHECK(doc["kv"]["kv_budget_bytes"] == available);
  CHECK(doc["inputs"]["serving"]["engine"] == "vllm-v1");
}
