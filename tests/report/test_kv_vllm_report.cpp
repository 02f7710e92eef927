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

TEST_CASE("kvsim kv --vllm-version names the release and its sampler's peak", "[cli][kv][vllm]") {
  const std::vector<std::string> base = {"kv",    "--model",         "llama-3-8b",
                                         "--gpu", "h100-sxm",        "--format",
                                         "json",  "--max-model-len", "8192"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kvsim(args);
  };
  const auto old_run = with({});
  const auto new_run = with({"--vllm-version", "0.14.1"});
  REQUIRE(old_run.exit_code == 0);
  REQUIRE(new_run.exit_code == 0);
  const Json a = Json::parse(old_run.out)["kv"]["vllm"];
  const Json b = Json::parse(new_run.out)["kv"]["vllm"];
  CHECK(b["version"] == "0.14.1");
  CHECK(Json::parse(new_run.out)["inputs"]["serving"]["vllm_version"] == "0.14.1");
  // 1,024 rows (vllm serve's default on an H100) × 128,256 logits: 10 B each through FlashInfer's
  // kernel, 38 B through PyTorch's sort; the sort's peak is above the forward pass's.
  CHECK(a["profile"]["sampler_peak_bytes"] == 1024ULL * 128256 * 10);
  CHECK(b["profile"]["sampler_peak_bytes"] == 1024ULL * 128256 * 38);
  CHECK(b["profile"]["activation_peak_bytes"] == 1024ULL * 128256 * 38);
  CHECK(b["available_kv_cache_bytes"].get<std::uint64_t>() <
        a["available_kv_cache_bytes"].get<std::uint64_t>());
  const auto table = run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                                "--vllm-version", "0.14.1", "--format", "table"});
  CHECK(has(table.out, "vLLM V1 memory profile per GPU (vLLM 0.14.1, h100-sxm)"));
  CHECK(has(table.out, "sorted top-k/top-p"));

  // A release outside the range runs as the nearest modelled one, with a warning.
  const auto newer = with({"--vllm-version", "0.19.0"});
  REQUIRE(newer.exit_code == 0);
  CHECK(has(newer.err,
            "--vllm-version: kvsim models the V1 memory profile of vLLM 0.10 to "
            "0.14, not 0.19.0; using 0.14.0's"));
  CHECK(Json::parse(newer.out)["kv"]["vllm"]["version"] == "0.14.0");
  CHECK(with({"--vllm-version", "ten"}).exit_code == 2);
  const auto v0 = with({"--engine", "v0", "--vllm-version", "0.11"});
  CHECK(v0.exit_code == 2);
  CHECK(has(v0.err, "--vllm-version: needs --engine v1"));
}
