// report/diff_render.cpp: text and markdown renderings of a diff.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "report/diff.h"

using kvsim::Error;
using namespace kvsim::report;

namespace {

Json report_doc() {
  return Json::parse(R"({
    "schema": "kvsim.report/v1", "kvsim_version": "0.1.0", "command": "simulate",
    "inputs": {"model": "llama-3-70b", "seed": 0},
    "kv": {"bytes_per_token": 327680, "num_blocks": 2048},
    "summary": {"requests_completed": 1000, "throughput_rps": 4.0,
                "ttft_s": {"mean": 0.1, "p50": 0.08, "p99": 0.4},
                "tpot_s": {"mean": 0.02, "p99": 0.05}},
    "timeline": [{"t": 0.0, "running": 1}, {"t": 1.0, "running": 3}]
  })");
}

}  // namespace

TEST_CASE("diff: renderings list the entries and the verdict", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.42;
  b["summary"]["ttft_s"]["p50"] = 0.0802;
  const DiffOptions o;
  const DiffResult r = diff_json(a, b, o);
  const std::string table = diff_table(r, "base.json", "new.json");
  CHECK(table.find("summary.ttft_s.p99") != std::string::npos);
  CHECK(table.find("+5%") != std::string::npos);
  CHECK(table.find("FAIL") != std::string::npos);
  CHECK(table.find("1 moved within tolerance, 1 failed, 0 improved") != std::string::npos);
  const Json j = diff_to_json(r, o, "base.json", "new.json");
  CHECK(j["schema"] == "kvsim.diff/v1");
  CHECK(j["verdict"] == "fail");
  REQUIRE(j["entries"].size() == 2);
  CHECK(j["entries"][0]["path"] == "summary.ttft_s.p50");
  CHECK(j["entries"][0]["verdict"] == "within");
  CHECK(j["entries"][1]["verdict"] == "outside");
  CHECK(j["entries"][1]["new"] == 0.42);
  const std::string csv = diff_csv(r);
  CHECK(csv.rfind("path,base,new,change,tolerance,verdict\n", 0) == 0);
  CHECK(csv.find("summary.ttft_s.p99,0.4,0.42,+5%,1%,FAIL\n") != std::string::npos);
}

TEST_CASE("diff: markdown for a CI job summary lists regressions and improvements",
          "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.5;
  b["summary"]["throughput_rps"] = 5.0;
  b["summary"]["ttft_s"]["p50"] = 0.0801;
  const std::string md = diff_markdown(diff_json(a, b, {}), "base.json", "new|x.json");
  CHECK(md.rfind("### kvsim diff: FAIL\n", 0) == 0);
  CHECK(md.find("`new\\|x.json` (new)") != std::string::npos);
  CHECK(md.find("#### Regressions (1)\n\n| path | base | new | change | tolerance | verdict |\n"
                "| --- | ---: | ---: | ---: | ---: | --- |\n"
                "| `summary.ttft_s.p99` | 0.4 | 0.5 | +25% | 1% | FAIL |\n") != std::string::npos);
  CHECK(md.find("#### Improvements (1)") != std::string::npos);
  CHECK(md.find("| `summary.throughput_rps` | 4.0 | 5.0 | +25% | 1% | improved |") !=
        std::string::npos);
  CHECK(md.find("<details><summary>1 within tolerance, 0 added, 0 ignored</summary>") !=
        std::string::npos);
}
