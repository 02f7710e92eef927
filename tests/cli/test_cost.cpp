#include <map>
#include <string>
#include <vector>

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

TEST_CASE("kvsim cost --pipeline-parallel-size: one batch through every stage in turn",
          "[cli][cost][pp]") {
  const std::vector<std::string> base = {
      "cost",           "--model", "llama-3-8b", "--gpu", "h100-sxm",       "--tp",     "2",
      "--decode-batch", "8",       "--context",  "1000",  "--no-crossover", "--format", "json"};
  auto with_pp = base;
  with_pp.insert(with_pp.end(), {"--pipeline-parallel-size", "2"});
  const auto one = run_kvsim(base);
  const auto two = run_kvsim(with_pp);
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  const Json a = Json::parse(one.out);
  const Json b = Json::parse(two.out);
  CHECK_FALSE(a["inputs"].contains("pipeline_parallel_size"));
  CHECK(b["inputs"]["pipeline_parallel_size"] == 2);
  // Each op of the whole model is split over the stages (16 layers each, the embedding on the
  // first, the LM head on the last); each stage pays its own step overhead, and the 8 rows'
  // activations (4,096 × 2 B each) cross NVLink once: 3 us + 65,536 B / 450 GB/s.
  std::map<std::string, double> whole, staged;
  for (const auto& op : a["ops"]) whole[op["name"]] = op["time_s"].get<double>();
  double transfer = -1;
  for (const auto& op : b["ops"]) {
    const std::string name = op["name"];
    if (name == "pp_transfer") {
      transfer = op["time_s"].get<double>();
      continue;
    }
    REQUIRE(name.starts_with("stage"));
    staged[name.substr(name.find('.') + 1)] += op["time_s"].get<double>();
    if (name.ends_with(".step_overhead")) CHECK(op["bound"] == "cpu");
  }
  CHECK(b["ops"].front()["name"] == "stage0.embed");
  CHECK(b["ops"].back()["name"] == "stage1.step_overhead");
  CHECK(transfer == Approx(3e-6 + 8 * 4096 * 2 / 450e9).margin(1e-9));  // whole nanoseconds
  for (const auto& [name, t] : whole) {
    CHECK(staged[name] == Approx(name == "step_overhead" ? 2 * t : t));
  }
  CHECK(b["step_time_s"].get<double>() ==
        Approx(a["step_time_s"].get<double>() + whole["step_overhead"] + transfer));
  // The overheads are not counted as memory-bound time.
  CHECK(b["memory_bound_time_s"].get<double>() ==
        Approx(a["memory_bound_time_s"].get<double>() + transfer));

  auto table = with_pp;
  table[table.size() - 3] = "table";  // --format table
  const auto t = run_kvsim(table);
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("TP 2 (roofline); 2 pipeline stages, one batch through each "
                                    "in turn"));
  auto linear = with_pp;
  linear.insert(linear.end(), {"--cost-model", "linear"});
  const auto l = run_kvsim(linear);
  CHECK(l.exit_code != 0);
  CHECK_THAT(l.err, Catch::Contains("--pipeline-parallel-size: pipeline stages need the roofline "
                                    "cost model"));
}
