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

TEST_CASE("kvsim kv: vLLM's overrides, under vLLM's names", "[cli][kv][vllm]") {
  const auto blocks = run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "a100-80gb",
                                 "--num-gpu-blocks-override", "1000", "--format", "json"});
  REQUIRE(blocks.exit_code == 0);
  const Json b = Json::parse(blocks.out);
  CHECK(b["kv"]["vllm"]["num_gpu_blocks"] == 1000);
  CHECK(b["kv"]["vllm"]["gpu_kv_cache_tokens"] == 16000);
  CHECK(b["kv"]["num_blocks"] == 1000);
  const auto bytes = run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "a100-80gb",
                                "--kv-cache-memory-bytes", "2097152000", "--format", "json"});
  REQUIRE(bytes.exit_code == 0);
  const Json k = Json::parse(bytes.out);
  CHECK(k["kv"]["vllm"]["available_kv_cache_bytes"] == 2097152000);
  CHECK(k["kv"]["vllm"]["num_gpu_blocks"] == 1000);
  const auto v0 = run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--engine", "v0",
                             "--num-gpu-blocks-override", "10"});
  CHECK(v0.exit_code == 2);
  CHECK(has(v0.err, "--num-gpu-blocks-override"));
  const auto bad = run_kvsim({"kv", "--model", "llama-3-8b", "--engine", "v2"});
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "--engine: expected one of v1|v0"));
}

TEST_CASE("Llama-3.1-8B bf16 at --max-model-len 32768 on a 24 GB L4 starts, as in vLLM",
          "[cli][kv][vllm]") {
  KVSIM_REQUIRE_SHARED(config, "models/meta-llama--Meta-Llama-3.1-8B.json");
  const auto r = run_kvsim({"kv", "--model", config, "--gpu", "l4", "--max-model-len", "32768",
                            "--gpu-memory-utilization", "0.9", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json v = Json::parse(r.out)["kv"]["vllm"];
  CHECK(v["serves_max_model_len"] == true);
  CHECK(v["gpu_kv_cache_tokens"].get<std::int64_t>() >= 32768);
  const auto sim = run_kvsim({"simulate",
                              "--model",
                              config,
                              "--gpu",
                              "l4",
                              "--max-model-len",
                              "32768",
                              "--rate",
                              "1",
                              "--num-requests",
                              "5",
                              "--prompt-len",
                              "1000",
                              "--output-len",
                              "50",
                              "--scheduler",
                              "chunked-prefill",
                              "--max-num-batched-tokens",
                              "2048",
                              "--format",
                              "json"});
  REQUIRE(sim.exit_code == 0);
  CHECK(Json::parse(sim.out)["summary"]["requests_completed"] == 5);
}

TEST_CASE(
    "kvsim kv: the profile-run flags come from the settings table and default to vllm serve's",
    "[cli][kv][vllm]") {
  const std::vector<std::string> base = {"kv",        "--model",  "llama-3-8b", "--gpu",
                                         "a100-80gb", "--format", "json"};
  const auto profile_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_kvsim(args);
    REQUIRE(r.exit_code == 0);
    return Json::parse(r.out)["kv"]["vllm"]["profile"];
  };
  // Not given and 0 both mean vllm serve's default, which for an A100 (even at 80 GB) is 2048
  // tokens and 256 sequences.
  const Json unset = profile_of({});
  CHECK(unset["max_num_batched_tokens"] == 2048);
  CHECK(unset["max_num_seqs"] == 256);
  CHECK(profile_of({"--max-num-batched-tokens", "0"})["max_num_batched_tokens"] == 2048);
  CHECK(profile_of({"--max-num-seqs", "64"})["max_num_seqs"] == 64);
  // The table's range check, at the flag.
  std::vector<std::string> bad = base;
  bad.insert(bad.end(), {"--max-num-seqs", "0"});
  kvsim::test::check_one_error(run_kvsim(bad),
                               {"--max-num-seqs", "expected a positive integer", "'0'"});
}
