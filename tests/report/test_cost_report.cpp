// report/cost_report.cpp: `kvsim cost` table and CSV forms.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

TEST_CASE("kvsim cost: table, CSV and the linear model", "[cli][cost]") {
  const auto t = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--prefill",
                            "512", "--prefill-cached", "1024", "--decode-batch", "8", "--context",
                            "100", "--format", "table"});
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("attn_prefill") && Catch::Contains("attn_decode") &&
                        Catch::Contains("decode crossover") && Catch::Contains("step time"));
  const auto c = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--decode-batch",
                            "8", "--context", "100", "--format", "csv"});
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.rfind("name,time_s,fraction,flops,bytes,bound\n", 0) == 0);
  // Linear: 1000 us + 8 × 20 us + 0.5 ns × 800 context tokens = 1,160,400 ns.
  const auto l = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--cost-model",
                            "linear", "--linear-base-us", "1000", "--linear-per-decode-seq-us",
                            "20", "--linear-per-context-token-ns", "0.5", "--decode-batch", "8",
                            "--context", "100", "--format", "json"});
  REQUIRE(l.exit_code == 0);
  CHECK(Json::parse(l.out)["step_time_s"].get<double>() == Approx(1.1604e-3).epsilon(1e-12));
}

TEST_CASE("kvsim cost: equal prefill chunks in a row are one entry of the batch line",
          "[cli][cost]") {
  const auto t = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--prefill", "8",
                            "8", "8", "100", "8", "--prefill-cached", "32", "--format", "table"});
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("  batch             3 × prefill 8 (+32 cached), prefill 100 "
                                    "(+32 cached), prefill 8 (+32 cached)\n"));
}

TEST_CASE("kvsim cost: an expert-parallel rank says its experts are spread", "[cli][cost][ep]") {
  const auto t =
      run_kvsim({"cost", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--dp", "2",
                 "--enable-expert-parallel", "--decode-batch", "8", "--format", "table"});
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("routed experts whole over 2 GPUs"));
  const auto j = run_kvsim({"cost", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--tp", "2",
                            "--decode-batch", "8", "--format", "json"});
  REQUIRE(j.exit_code == 0);
  CHECK_FALSE(Json::parse(j.out)["inputs"].contains("routed_experts"));
  const auto e = run_kvsim({"cost", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--dp", "2",
                            "--decode-batch", "8", "--format", "json"});
  REQUIRE(e.exit_code == 0);
  CHECK(Json::parse(e.out)["inputs"]["routed_experts"] ==
        Json{{"gpus", 2}, {"expert_parallel", false}});
}
