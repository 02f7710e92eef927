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

std::vector<std::string> kinds(const DiffResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.entries) out.push_back(e.path + ":" + std::string(diff_kind_name(e.kind)));
  return out;
}

}  // namespace

TEST_CASE("diff: identical documents have no entries and pass", "[report][diff]") {
  const Json a = report_doc();
  const DiffResult r = diff_json(a, a, {});
  CHECK(r.entries.empty());
  CHECK(r.passed());
  // 3 envelope + 2 inputs + 2 kv + 2 + 3 + 2 summary + 4 timeline leaves (kvsim_version ignored,
  // and identical so not counted as an ignored difference).
  CHECK(r.num_leaves == 17);
  CHECK(r.num_ignored == 0);
}

TEST_CASE("diff: a 5% move in a p99 fails at the default 1% and names the metric",
          "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.42;  // +5%
  const DiffResult r = diff_json(a, b, {});
  REQUIRE(r.entries.size() == 1);
  const DiffEntry& e = r.entries[0];
  CHECK(e.path == "summary.ttft_s.p99");
  CHECK(e.kind == DiffKind::kOutside);
  CHECK(e.rel_change == Approx(0.05));
  CHECK(r.failed_paths() == std::vector<std::string>{"summary.ttft_s.p99"});
  CHECK(describe_failure(e) == "summary.ttft_s.p99 (0.4 -> 0.42, +5% > 1%)");
}

TEST_CASE("diff: tolerance is atol + rtol*|base|, inclusive", "[report][diff]") {
  Json a = {{"schema", "s"}, {"x", 100.0}};
  Json b = {{"schema", "s"}, {"x", 101.0}};
  DiffOptions o;
  CHECK(diff_json(a, b, o).passed());  // exactly 1% of 100
  b["x"] = 101.5;
  CHECK_FALSE(diff_json(a, b, o).passed());
  o.tolerance.atol = 0.5;  // 1 + 0.5
  CHECK(diff_json(a, b, o).passed());
  o.tolerance = {0.0, 0.0};
  b["x"] = 100.0;
  CHECK(diff_json(a, b, o).passed());  // equal is always fine
  // Base 0: only atol can admit a change.
  a["x"] = 0;
  b["x"] = 1e-9;
  o.tolerance = {0.5, 0.0};
  CHECK_FALSE(diff_json(a, b, o).passed());
  o.tolerance.atol = 1e-6;
  CHECK(diff_json(a, b, o).passed());
}

TEST_CASE("diff: per-metric overrides, the last match wins", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.42;    // +5%
  b["summary"]["tpot_s"]["p99"] = 0.0515;  // +3%
  b["kv"]["num_blocks"] = 2049;            // +0.05%
  DiffOptions o;
  o.overrides.push_back({"summary.ttft_s.p99", {0.05, 0.0}});
  CHECK(diff_json(a, b, o).failed_paths() == std::vector<std::string>{"summary.tpot_s.p99"});
  o.overrides.push_back({"summary.*_s", {0.04, 0.0}});  // subtree glob
  CHECK(diff_json(a, b, o).failed_paths() == std::vector<std::string>{"summary.ttft_s.p99"});
  o.overrides.push_back({"kv.num_blocks", {0.0, 0.0}});  // counts must be exact
  CHECK(diff_json(a, b, o).failed_paths() ==
        std::vector<std::string>{"kv.num_blocks", "summary.ttft_s.p99"});
}

TEST_CASE("diff: ignore patterns skip paths and subtrees", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["kvsim_version"] = "0.2.0";
  b["timeline"][1]["running"] = 7;
  b["summary"]["ttft_s"]["mean"] = 0.2;
  DiffOptions o;
  CHECK(diff_json(a, b, o).failed_paths() ==
        std::vector<std::string>{"summary.ttft_s.mean", "timeline[1].running"});
  o.ignore.push_back("timeline");
  o.ignore.push_back("summary.*.mean");
  const DiffResult r = diff_json(a, b, o);
  CHECK(r.passed());
  CHECK(r.num_ignored == 3);  // kvsim_version, summary.ttft_s.mean, timeline
  o.ignore.clear();           // no default: the version counts
  o.ignore.push_back("timeline");
  o.ignore.push_back("summary");
  CHECK(diff_json(a, b, o).failed_paths() == std::vector<std::string>{"kvsim_version"});
}

TEST_CASE("diff: removed fails, added does not, type and string changes fail", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"].erase("throughput_rps");
  b["summary"]["goodput_rps"] = 3.5;
  b["inputs"]["model"] = "llama-3-8b";
  b["kv"]["num_blocks"] = "2048";
  const DiffResult r = diff_json(a, b, {});
  CHECK(kinds(r) == std::vector<std::string>{"inputs.model:changed", "kv.num_blocks:type",
                                             "summary.throughput_rps:removed",
                                             "summary.goodput_rps:added"});
  CHECK(r.num_failed == 3);
}

TEST_CASE("diff: arrays of different length fail once; the common prefix is compared",
          "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["timeline"][0]["running"] = 2;
  b["timeline"].push_back({{"t", 2.0}, {"running", 0}});
  const DiffResult r = diff_json(a, b, {});
  CHECK(kinds(r) == std::vector<std::string>{"timeline:length", "timeline[0].running:outside"});
  CHECK(r.entries[0].base == 2);
  CHECK(r.entries[0].next == 3);
  // Shorter too.
  Json c = a;
  c["timeline"].erase(1);
  CHECK(kinds(diff_json(a, c, {})) == std::vector<std::string>{"timeline:length"});
}

TEST_CASE("diff: glob patterns", "[report][diff]") {
  CHECK(path_matches("kvsim_version", "kvsim_version"));
  CHECK_FALSE(path_matches("kvsim_version", "kvsim_versions"));
  CHECK(path_matches("summary.*.p99", "summary.ttft_s.p99"));
  CHECK_FALSE(path_matches("summary.*", "summaryx.ttft_s"));
  CHECK(path_matches("summary.*", "summary.ttft_s.p99"));  // ancestor summary.ttft_s
  CHECK_FALSE(path_matches("*.p99", "summary.ttft_s.p99"));
  CHECK(path_matches("**.p99", "summary.ttft_s.p99"));
  CHECK(path_matches("runs[*].summary", "runs[12].summary.ttft_s.p99"));
  CHECK(path_matches("runs[1]", "runs[1].x"));
  CHECK_FALSE(path_matches("runs[1]", "runs[10].x"));
  CHECK(path_matches("timeline", "timeline[3].t"));
  CHECK(path_matches("ttft_s.p9?", "ttft_s.p95"));
}

TEST_CASE("diff: malformed JSON names the file, line and column", "[report][diff]") {
  try {
    parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}\n", "new.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.location().file == "new.json");
    CHECK(e.location().line == 3);
    CHECK(e.location().column == 8);
    CHECK(e.message() == "invalid JSON: value - unexpected ']'; expected '[', '{', or a literal");
  }
  try {
    parse_json_text("{\"a\": 1", "cut.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.location().line == 1);
    CHECK(e.message().find("unexpected end of input") != std::string::npos);
  }
}

TEST_CASE("diff: documents need the same schema", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["schema"] = "kvsim.plan/v1";
  CHECK_THROWS_WITH(check_comparable(a, b, "a.json", "b.json"),
                    "b.json: schema: cannot compare different schemas: a.json is kvsim.report/v1, "
                    "b.json is kvsim.plan/v1");
  CHECK_THROWS_AS(check_comparable(a, Json::array(), "a.json", "b.json"), Error);
  CHECK_THROWS_AS(check_comparable(Json{{"x", 1}}, a, "a.json", "b.json"), Error);
  CHECK_NOTHROW(check_comparable(a, a, "a.json", "b.json"));
}

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
  CHECK(table.find("1 moved within tolerance, 1 failed") != std::string::npos);
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
