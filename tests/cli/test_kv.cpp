#include <algorithm>
#include <fstream>
#include <iterator>

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

TEST_CASE("kvsim kv prints the seed derivation for Llama-3-70B as a table", "[cli][kv]") {
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--batch", "16",
                            "--context", "8192", "--format", "table"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(has(r.out, "2 (K and V) × 80 layers × 8 KV heads × 128 dims × 2 B (bf16)"));
  CHECK(has(r.out, "327,680 B"));
  CHECK(has(r.out, "4,096 B"));
  CHECK(has(r.out, "42,949,672,960 B (42.95 GB)"));
  CHECK(has(r.out, "141,107,412,992 B (141.11 GB)"));
  CHECK(has(r.out, "no --gpu given"));
}

TEST_CASE("kvsim kv with a GPU and tensor parallelism: budget, tokens, blocks, sequences",
          "[cli][kv]") {
  const auto r =
      run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--batch", "16", "--context",
                 "8192", "--gpu", "h100-sxm", "--tensor-parallel-size", "4", "--format", "table"});
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "81,920 B"));
  CHECK(has(r.out, "8 KV heads / 4 GPUs = 2 heads per GPU"));
  CHECK(has(r.out, "37,405,546,905 B (37.41 GB)"));
  CHECK(has(r.out, "456,610"));
  CHECK(has(r.out, "28,538"));
  CHECK(has(r.out, "max concurrent sequences"));
}

TEST_CASE("kvsim kv: a given activation reserve and runtime overhead replace the defaults",
          "[cli][kv]") {
  // 76,968,728,985 usable − 35,278,831,616 weights − 4 GiB − 1 GiB = 36,321,188,249 B.
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu", "h100-sxm",
                            "--tp", "4", "--activation-reserve-gib", "4", "--runtime-overhead-gib",
                            "1", "--format", "table"});
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "4,294,967,296 B (4.29 GB)  peak forward activations (as given)"));
  CHECK(has(r.out, "1,073,741,824 B (1.07 GB)"));
  CHECK(has(r.out, "36,321,188,249 B (36.32 GB)"));
  CHECK(has(r.out, "443,373"));  // ⌊36,321,188,249 / 81,920⌋
  const auto zero = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu",
                               "h100-sxm", "--tp", "4", "--activation-reserve-gib", "0",
                               "--runtime-overhead-gib", "0", "--format", "table"});
  REQUIRE(zero.exit_code == 0);
  CHECK(has(zero.out, "41,689,897,369 B"));  // 76,968,728,985 − 35,278,831,616
}

TEST_CASE("kvsim kv --compare-attention shows MHA, GQA and MQA with 8× and 64×", "[cli][kv]") {
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--compare-attention",
                            "--format", "json", "--batch", "16", "--context", "8192"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  const Json& v = j.at("attention_comparison");
  REQUIRE(v.size() == 3);
  CHECK(v[0]["label"] == "MHA");
  CHECK(v[0]["bytes_per_token"] == 2'621'440);
  CHECK(v[1]["label"] == "GQA (model)");
  CHECK(v[1]["bytes_per_token"] == 327'680);
  CHECK(v[1]["compression_vs_mha"] == 8.0);
  CHECK(v[2]["label"] == "MQA");
  CHECK(v[2]["bytes_per_token"] == 40'960);
  CHECK(v[2]["compression_vs_mha"] == 64.0);
  const auto t = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--compare-attention",
                            "--format", "table"});
  CHECK(has(t.out, "64×"));
  CHECK(has(t.out, "8×"));
}

TEST_CASE("Llama-3.1-405B in bf16 on one L4 is reported as not fitting, with the numbers",
          "[cli][kv]") {
  const auto t = run_kvsim(
      {"kv", "--engine", "v0", "--model", "llama-3.1-405b", "--gpu", "l4", "--format", "table"});
  REQUIRE(t.exit_code == 0);
  CHECK(has(t.out, "DOES NOT FIT: llama-3.1-405b needs 811.71 GB of weights per GPU"));
  CHECK(has(t.out, "21.74 GB usable"));
  CHECK_FALSE(has(t.out, "max cached tokens"));
  CHECK(has(t.out, "= KV budget                                              0 B  DOES NOT FIT"));
  const auto j = run_kvsim(
      {"kv", "--engine", "v0", "--model", "llama-3.1-405b", "--gpu", "l4", "--format", "json"});
  const Json kv = Json::parse(j.out)["kv"];
  CHECK(kv["fits"] == false);
  CHECK(kv["kv_budget_bytes"] == 0);
  CHECK(kv["max_cached_tokens"] == 0);
  CHECK(kv["max_concurrent_sequences"] == 0);
  CHECK(kv["budget"]["usable_bytes"] == 21'737'609'625ULL);
  CHECK(kv["budget"]["weights_bytes_per_gpu"] == 811'706'777'600ULL);
  CHECK(kv["budget"]["shortfall_bytes"].get<std::uint64_t>() > 790'000'000'000ULL);
}

TEST_CASE("kvsim kv: KV dtypes, max-model-len and a Hugging Face config", "[cli][kv]") {
  const auto fp8 = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--kv-cache-dtype",
                              "fp8", "--format", "json"});
  CHECK(Json::parse(fp8.out)["kv"]["bytes_per_token"] == 163'840);
  const auto int4 = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--kv-cache-dtype",
                               "int4", "--kv-scale-group-size", "64", "--format", "json"});
  CHECK(Json::parse(int4.out)["kv"]["bytes_per_token"] == 87'040);
  const auto len = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3.1-405b",
                              "--max-model-len", "4096", "--format", "json"});
  CHECK(Json::parse(len.out)["kv"]["context"] == 4096);
  const auto hf = run_kvsim({"kv", "--engine", "v0", "--model",
                             kvsim::test::source_dir() + "/tests/config/data/hf/opt-13b.json",
                             "--gpu", "a100-40gb", "--format", "json"});
  REQUIRE(hf.exit_code == 0);
  const Json j = Json::parse(hf.out);
  CHECK(j["kv"]["bytes_per_token"] == 819'200);
  CHECK(j["kv"]["fits"] == true);
}

TEST_CASE("kvsim kv output is deterministic", "[cli][kv]") {
  const std::vector<std::string> args{"kv",         "--engine", "v0",        "--model",
                                      "gemma-2-9b", "--gpu",    "a100-40gb", "--compare-attention",
                                      "--format",   "json"};
  CHECK(run_kvsim(args).out == run_kvsim(args).out);
}

TEST_CASE("kvsim kv --pipeline-parallel-size reports the stage whose GPUs hold the fewest blocks",
          "[cli][kv][pp]") {
  // Llama-3-70B on H100s, TP 4 × PP 2, fixed reserves of 4 GiB + 1 GiB. Per GPU the 80 layers
  // weigh 34,228,142,080 B, the embedding and the LM head 525,336,576 B each (128,256 × 8,192 ×
  // 2 B / 4), the final norm 16,384 B. Stage 0 (layers 0-39 + embedding): 17,639,407,616 B;
  // stage 1 (layers 40-79, LM head, norm): 17,639,424,000 B. Budgets 76,968,728,985 − weights −
  // 5 GiB: 53,960,612,249 and 53,960,595,865 B, both ⌊/ 655,360 B per block (40 layers × 2 KV
  // heads × 128 × 2 × 2 B × 16)⌋ = 82,337 blocks: the first of equals, stage 0, is reported.
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu", "h100-sxm",
                            "--tp", "4", "--pp", "2", "--activation-reserve-gib", "4",
                            "--runtime-overhead-gib", "1", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json kv = Json::parse(r.out)["kv"];
  CHECK(kv["pipeline_parallel_size"] == 2);
  CHECK(kv["stage"] == Json{{"index", 0}, {"first_layer", 0}, {"num_layers", 40}});
  CHECK(kv["weights_bytes_per_gpu"] == 17'639'407'616LL);
  CHECK(kv["bytes_per_token_per_gpu"] == 40'960);
  CHECK(kv["kv_budget_bytes"] == 53'960'612'249LL);
  CHECK(kv["num_blocks"] == 82'337);
  CHECK(kv["max_cached_tokens"] == 1'317'397);  // ⌊53,960,612,249 / 40,960⌋
  // With the default activation estimate only the last stage holds the logits of a batch: its
  // GPUs have the fewest blocks.
  const auto est = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu", "h100-sxm",
                              "--tp", "4", "--pp", "2", "--format", "json"});
  REQUIRE(est.exit_code == 0);
  CHECK(Json::parse(est.out)["kv"]["stage"]["index"] == 1);
  // Without pipeline parallelism: no stage.
  const auto one = run_kvsim(
      {"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--format", "json"});
  REQUIRE(one.exit_code == 0);
  CHECK(Json::parse(one.out)["kv"]["pipeline_parallel_size"] == 1);
  CHECK(Json::parse(one.out)["kv"]["stage"].is_null());
  // The table says which stage it is.
  const auto table = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu",
                                "h100-sxm", "--tp", "4", "--pp", "2", "--format", "table"});
  CHECK(has(table.out, "pipeline stage 1 of 2 (layers 40-79)"));
  CHECK(has(table.out, "KV bytes per token (this stage's layers)"));
  // More stages than layers is refused.
  const auto bad = run_kvsim({"kv", "--model", "llama-3-70b", "--pp", "81", "--format", "json"});
  CHECK(bad.exit_code != 0);
  CHECK(has(bad.err, "--pipeline-parallel-size"));
}
