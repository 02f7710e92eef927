// kvsim kv --quantization as a user runs it: the weights shrink and the KV budget grows by
// exactly what they lose; a YAML scenario takes the same key; a bad name is one located error.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/scenario.h"
#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

TEST_CASE("kvsim kv --quantization: Llama-3.1-8B fp8 and AWQ weights and KV budget",
          "[cli][kv][quant]") {
  KVSIM_REQUIRE_SHARED(path, "models/meta-llama--Meta-Llama-3.1-8B.json");
  auto kv = [&](const std::string& q) {
    const auto r = run_kvsim(
        {"kv", "--model", path, "--gpu", "h100-sxm", "--format", "json", "--quantization", q});
    REQUIRE(r.exit_code == 0);
    return Json::parse(r.out);
  };
  const Json bf16 = kv("auto");
  const Json fp8 = kv("fp8");
  const Json awq = kv("awq_marlin");  // vLLM's alias
  CHECK(bf16["inputs"]["model"]["quantization"] == Json{{"method", "none"}});
  CHECK(fp8["inputs"]["model"]["quantization"]["method"] == "fp8");
  CHECK(fp8["inputs"]["model"]["quantization"]["origin"] == "--quantization");
  CHECK(awq["inputs"]["model"]["quantization"]["group_size"] == 128);
  // tests/model/test_quantization.cpp works these out by hand.
  CHECK(bf16["kv"]["weights_bytes_per_gpu"] == 16'060'522'496LL);
  CHECK(fp8["kv"]["weights_bytes_per_gpu"] == 9'081'201'536LL);
  CHECK(awq["kv"]["weights_bytes_per_gpu"] == 5'727'854'592LL);
  // Everything else in the budget is unchanged: the KV budget grows by the weights saved.
  CHECK(fp8["kv"]["kv_budget_bytes"].get<std::int64_t>() -
            bf16["kv"]["kv_budget_bytes"].get<std::int64_t>() ==
        16'060'522'496LL - 9'081'201'536LL);
}

TEST_CASE("quantization: a scenario key, and a bad name is one error with a suggestion",
          "[cli][quant]") {
  const auto s =
      kvsim::config::parse_scenario_text("model: m\nquantization: modelopt_fp4\n", "s.yaml", "/");
  CHECK(s.deployment.quantization == "nvfp4");
  kvsim::test::check_one_error(
      run_kvsim({"kv", "--model", "llama-3-70b", "--quantization", "fp9"}),
      {"--quantization: expected one of auto|none|fp8|int8|awq|gptq|mxfp4|nvfp4, got 'fp9'",
       "did you mean 'fp8'?"});
}

TEST_CASE("kvsim plan --quantization none,fp8: a grid axis; fp8 puts Llama-3-70B on one H200",
          "[cli][plan][quant]") {
  const auto r = run_kvsim({"plan",     "--model",        "llama-3-70b", "--gpu",
                            "h200-sxm", "--quantization", "none,fp8",    "--arrival",
                            "poisson",  "--rate",         "1",           "--num-requests",
                            "150",      "--prompt-len",   "200",         "--output-len",
                            "50",       "--slo-ttft",     "2000",        "--search-tolerance",
                            "0.1",      "--format",       "json"});
  REQUIRE(r.exit_code == 0);
  const Json plan = Json::parse(r.out);
  REQUIRE(plan["deployments"].size() == 2);
  // 141 GB of bf16 weights exceed one H200's 135 GB usable; fp8 halves the linear layers.
  CHECK(plan["deployments"][0]["axes"]["quantization"] == "none");
  CHECK(plan["deployments"][0]["status"] == "does_not_fit");
  CHECK(plan["deployments"][1]["axes"]["quantization"] == "fp8");
  CHECK(plan["deployments"][1]["status"] == "found");
  CHECK(plan["best"]["index"] == 1);
}
