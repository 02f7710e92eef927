// report/trace_report.cpp: kvsim.trace-stats/v1 JSON, table and CSV, through `kvsim trace stats`.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::slurp;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
using nlohmann::json;

namespace {

const char* kSmall =
    "arrival_s,prompt_tokens,output_tokens\n"
    "0,10,1\n"
    "1,20,2\n"
    "2,30,3\n"
    "4,40,4\n";

}  // namespace

TEST_CASE("trace stats FILE: kvsim.trace-stats/v1 with exact values", "[cli][trace]") {
  const auto path = write_temp_file(temp_dir(), "s.csv", kSmall);
  const auto r = run_kvsim({"trace", "stats", path, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["schema"] == "kvsim.trace-stats/v1");
  CHECK(j["command"] == "trace stats");
  CHECK(j["source"] == "native " + path);
  CHECK(j["workload"]["source"] == "trace");
  CHECK(j["workload"]["trace"]["format"] == "native");
  CHECK(j["requests"] == 4);
  CHECK(j["rejected_rows"] == 0);
  CHECK(j["duration_s"] == 4.0);
  CHECK(j["rate_rps"] == 0.75);
  // Gaps 1, 1, 2 s: mean 4/3, population sd sqrt(2)/3, CV sqrt(2)/4.
  CHECK(j["interarrival_cv"].get<double>() == Approx(std::sqrt(2.0) / 4.0).epsilon(1e-12));
  CHECK(j["prompt_tokens"]["mean"] == 25.0);
  CHECK(j["prompt_tokens"]["p50"] == 25.0);
  CHECK(j["prompt_tokens"]["p90"].get<double>() == Approx(37.0).epsilon(1e-12));
  CHECK(j["prompt_tokens"]["max"] == 40);
  CHECK(j["output_tokens"]["min"] == 1);
  CHECK(j["total_tokens"]["max"] == 44);
  CHECK_FALSE(j.contains("prefix_block_reuse_fraction"));
}

TEST_CASE("trace stats: table and CSV forms, and --out writes the JSON atomically",
          "[cli][trace]") {
  const std::string dir = temp_dir();
  const auto path = write_temp_file(dir, "s.csv", kSmall);
  const auto table = run_kvsim({"trace", "stats", path, "--format", "table"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("0.750 req/s") != std::string::npos);
  const auto csv = run_kvsim({"trace", "stats", path, "--format", "csv", "--out", dir + "/s.json"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("source,requests,rejected_rows,", 0) == 0);
  CHECK(csv.out.find("\nnative " + path + ",4,0,0,0,0,4,0.75,") != std::string::npos);
  CHECK(json::parse(slurp(dir + "/s.json"))["requests"] == 4);
}
