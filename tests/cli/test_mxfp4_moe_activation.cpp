// --mxfp4-moe-activation as a user runs it: MXFP4 experts' fused-MoE kernel with MXFP8
// activations on Blackwell is cheaper than vLLM's default bf16 one, says so in the report, and is
// refused where vLLM has no such kernel.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/scenario.h"
#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

namespace {

Json cost(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"cost",  "--model",   "mixtral-8x7b", "--gpu",
                                   "b200",  "--prefill", "4096",         "--quantization",
                                   "mxfp4", "--format",  "json",         "--no-crossover"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_kvsim(args);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

double moe_seconds(const Json& j) {
  for (const auto& op : j["ops"]) {
    if (op["name"] == "moe") return op["time_s"].get<double>();
  }
  FAIL("no moe op");
  return 0;
}

}  // namespace

TEST_CASE("kvsim cost --mxfp4-moe-activation mxfp8: the W4A8 kernel on B200, named in the report",
          "[cli][cost][quant]") {
  const Json bf16 = cost({});
  const Json mxfp8 = cost({"--mxfp4-moe-activation", "mxfp8"});
  CHECK_THAT(bf16["inputs"]["activation_dtype"].get<std::string>(),
             Catch::Contains("MXFP4 experts multiplied in bf16"));
  CHECK_THAT(mxfp8["inputs"]["activation_dtype"].get<std::string>(),
             Catch::Contains("MXFP4 experts multiplied in mxfp8"));
  // The deployment's model in kv's (and simulate's) inputs says so too.
  const auto kv = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"kv",    "--model",  "mixtral-8x7b",
                                     "--gpu", "b200",     "--quantization",
                                     "mxfp4", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_kvsim(args);
    REQUIRE(r.exit_code == 0);
    return Json::parse(r.out);
  };
  CHECK_FALSE(kv({})["inputs"]["model"]["moe"].contains("mxfp4_activation"));
  CHECK(kv({"--mxfp4-moe-activation", "mxfp8"})["inputs"]["model"]["moe"]["mxfp4_activation"] ==
        "mxfp8");
  // A 4,096-token prefill is compute-bound: fp8 tensor cores against bf16 ones (the shipped B200
  // profile's moe.fp4.a8 and moe.fp4.a16 entries), and half the activation bytes.
  CHECK(moe_seconds(mxfp8) < moe_seconds(bf16));
  // Only the experts changed.
  CHECK(bf16["step_time_s"].get<double>() - mxfp8["step_time_s"].get<double>() ==
        Approx(moe_seconds(bf16) - moe_seconds(mxfp8)));
  const auto s =
      kvsim::config::parse_scenario_text("model: m\nmxfp4_moe_activation: mxfp8\n", "s.yaml", "/");
  CHECK(s.deployment.mxfp4_moe_activation == "mxfp8");
}

TEST_CASE("kvsim cost --mxfp4-moe-activation: refused before Blackwell, a no-op without MXFP4",
          "[cli][cost][quant]") {
  kvsim::test::check_one_error(
      run_kvsim({"cost", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--quantization", "mxfp4",
                 "--prefill", "64", "--mxfp4-moe-activation", "mxfp8"}),
      {"--mxfp4-moe-activation: mxfp8 needs a Blackwell GPU", "h100-sxm has 9.0"});
  const auto dense = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", "b200", "--prefill", "64",
                                "--format", "json", "--mxfp4-moe-activation", "mxfp8"});
  CHECK(dense.exit_code == 0);
  CHECK_THAT(dense.err, Catch::Contains("has no MXFP4 experts; mxfp8 changes nothing"));
  kvsim::test::check_one_error(run_kvsim({"cost", "--model", "mixtral-8x7b", "--gpu", "b200",
                                          "--prefill", "64", "--mxfp4-moe-activation", "fp8"}),
                               {"--mxfp4-moe-activation", "bf16|mxfp8"});
}
