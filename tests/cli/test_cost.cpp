#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

TEST_CASE("kvsim cost: Llama-3-70B TP4 decode is memory-bound, prefill compute-bound",
          "[cli][cost]") {
  const auto d =
      run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tensor-parallel-size",
                 "4", "--decode-batch", "64", "--context", "4096", "--format", "json"});
  REQUIRE(d.exit_code == 0);
  const Json dj = Json::parse(d.out);
  CHECK(dj["schema"] == "kvsim.cost/v1");
  CHECK(dj["bound"] == "memory");
  CHECK(dj["step_time_s"].get<double>() > 0.005);
  CHECK(dj["tokens"] == 64);
  // Dense GEMMs turn compute-bound at a batch of a few hundred on H100; the whole decode step
  // at 4k context never does (the KV read grows with the batch).
  const auto gemm = dj["crossover"]["decode_batch_gemm_compute_bound"];
  REQUIRE(gemm.is_number_integer());
  CHECK(gemm.get<int>() > 64);
  CHECK(gemm.get<int>() < 1024);
  CHECK(dj["crossover"]["decode_batch_step_compute_bound"].is_null());
  double sum = 0;
  for (const auto& op : dj["ops"]) sum += op["time_s"].get<double>();
  CHECK(sum == Approx(dj["step_time_s"].get<double>()));
  CHECK(dj["ops"].back()["name"] == "step_overhead");

  const auto p =
      run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tensor-parallel-size",
                 "4", "--prefill", "2048", "--format", "json", "--no-crossover"});
  REQUIRE(p.exit_code == 0);
  const Json pj = Json::parse(p.out);
  CHECK(pj["bound"] == "compute");
  CHECK_FALSE(pj.contains("crossover"));
  // Same inputs, byte-identical output.
  CHECK(run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tensor-parallel-size",
                   "4", "--prefill", "2048", "--format", "json", "--no-crossover"})
            .out == p.out);
}

TEST_CASE("kvsim cost: bad input is one clear error", "[cli][cost]") {
  const auto tp = run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm",
                             "--tensor-parallel-size", "3", "--prefill", "16"});
  CHECK(tp.exit_code == 2);
  CHECK_THAT(tp.err, Catch::Contains("--tensor-parallel-size"));
  const auto none = run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm"});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("--decode-batch"));
  const auto neg =
      run_kvsim({"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--prefill", "-5"});
  CHECK(neg.exit_code == 2);
  CHECK_THAT(neg.err, Catch::Contains("--prefill"));
  const auto dt = run_kvsim(
      {"cost", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--prefill", "5", "--dtype", "bf61"});
  CHECK(dt.exit_code == 2);
  CHECK_THAT(dt.err, Catch::Contains("--dtype"));
  const auto nogpu = run_kvsim({"cost", "--model", "llama-3-70b", "--prefill", "5"});
  CHECK(nogpu.exit_code == 2);
  CHECK_THAT(nogpu.err, Catch::Contains("--gpu"));
}
