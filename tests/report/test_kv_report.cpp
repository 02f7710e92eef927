// report/kv_report.cpp: the kv object of kvsim.report/v1 and the `kvsim kv` JSON and CSV,
// through the binary.
#include <algorithm>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

TEST_CASE("kvsim kv JSON: the kv object of kvsim.report/v1", "[cli][kv][json]") {
  const auto r =
      run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--batch", "16", "--context",
                 "8192", "--gpu", "h100-sxm", "--tensor-parallel-size", "4", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["schema"] == "kvsim.report/v1");
  CHECK(j["command"] == "kv");
  CHECK(j["inputs"]["model"]["name"] == "llama-3-70b");
  CHECK(j["inputs"]["hardware"]["name"] == "h100-sxm");
  CHECK(j["inputs"]["serving"]["tensor_parallel_size"] == 4);
  CHECK(j["inputs"]["serving"]["block_size"] == 16);
  CHECK(j["inputs"]["serving"]["gpu_memory_utilization"] == 0.9);
  CHECK(j["inputs"]["serving"]["max_model_len"] == 8192);
  const Json& kv = j["kv"];
  CHECK(kv["bytes_per_token"] == 327'680);
  REQUIRE(kv["bytes_per_token_per_layer"].size() == 80);
  CHECK(kv["bytes_per_token_per_layer"][0] == 4096);
  CHECK(kv["total_bytes"] == 42'949'672'960ULL);
  CHECK(kv["weights_bytes"] == 141'107'412'992ULL);
  CHECK(kv["kv_budget_bytes"] == 37'405'546'905ULL);
  CHECK(kv["max_cached_tokens"] == 456'610);
  CHECK(kv["block_size"] == 16);
  CHECK(kv["num_blocks"] == 28'538);
  CHECK(kv["max_concurrent_sequences"] == 55);
  CHECK(kv["fits"] == true);
  CHECK(kv["bytes_per_token_per_gpu"] == 81'920);
  CHECK(kv["groups"].size() == 1);
  // --out writes the same document.
  const std::string dir = kvsim::test::temp_dir();
  const auto o = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--batch", "16",
                            "--context", "8192", "--gpu", "h100-sxm", "--tensor-parallel-size", "4",
                            "--format", "csv", "--out", dir + "/kv.json"});
  REQUIRE(o.exit_code == 0);
  std::ifstream in(dir + "/kv.json");
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written == r.out);
}

TEST_CASE("kvsim kv without a GPU: GPU-dependent fields are null", "[cli][kv][json]") {
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "mistral-7b", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["inputs"]["hardware"].is_null());
  CHECK(j["kv"]["kv_budget_bytes"].is_null());
  CHECK(j["kv"]["max_cached_tokens"].is_null());
  CHECK(j["kv"]["num_blocks"].is_null());
  CHECK(j["kv"]["max_concurrent_sequences"].is_null());
  CHECK(j["kv"]["context"] == 32768);  // defaults to the max model length
  // The window caps each layer at 4,096 tokens.
  CHECK(j["kv"]["total_bytes"] == 131'072ULL * 4096);
}

TEST_CASE("kvsim kv CSV: one header and one row", "[cli][kv][csv]") {
  const auto r = run_kvsim({"kv", "--engine", "v0", "--model", "llama-3-70b", "--gpu", "h100-sxm",
                            "--tensor-parallel-size", "4", "--batch", "16", "--context", "8192",
                            "--format", "csv"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "model,gpu,tensor_parallel_size,kv_cache_dtype,batch,context,bytes_per_token,"
        "bytes_per_token_per_gpu,total_bytes,weights_bytes,weights_bytes_per_gpu,kv_budget_bytes,"
        "max_cached_tokens,block_size,num_blocks,max_concurrent_sequences,fits\n"
        "llama-3-70b,h100-sxm,4,auto,16,8192,327680,81920,42949672960,141107412992,35278831616,"
        "37405546905,456610,16,28538,55,true\n");
}
