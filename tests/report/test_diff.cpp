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
  b["kv"]["num_blocks"] = 2047;  // one block fewer (more would be an improvement)
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

TEST_CASE("diff: arrays of different length fail once, the common prefix is compared",
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

TEST_CASE("diff: directions: a move the good way beyond tolerance is an improvement",
          "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.2;   // latency halves: lower is better
  b["summary"]["throughput_rps"] = 5.0;  // +25%: higher is better
  b["kv"]["num_blocks"] = 1024;          // -50% capacity: a regression
  b["timeline"][1]["running"] = 9;       // no direction: two-sided
  const DiffResult r = diff_json(a, b, {});
  CHECK(kinds(r) ==
        std::vector<std::string>{"kv.num_blocks:outside", "summary.throughput_rps:improved",
                                 "summary.ttft_s.p99:improved", "timeline[1].running:outside"});
  CHECK(r.num_improved == 2);
  CHECK(r.num_failed == 2);
  CHECK(r.entries[1].direction == Direction::kHigherIsBetter);
  CHECK(r.entries[2].direction == Direction::kLowerIsBetter);
  // The other way round, each of them fails.
  const DiffResult back = diff_json(b, a, {});
  CHECK(back.failed_paths() == std::vector<std::string>{"summary.throughput_rps",
                                                        "summary.ttft_s.p99",
                                                        "timeline[1].running"});
  CHECK(back.num_improved == 1);  // kv.num_blocks back up
  // Within tolerance the good way is still just "within".
  Json c = a;
  c["summary"]["throughput_rps"] = 4.02;
  CHECK(kinds(diff_json(a, c, {})) == std::vector<std::string>{"summary.throughput_rps:within"});
}

TEST_CASE("diff: user directions override the defaults, the last match wins", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["timeline"][1]["running"] = 9;
  b["summary"]["ttft_s"]["p99"] = 0.2;
  DiffOptions o;
  o.directions.push_back({"timeline[*].running", Direction::kHigherIsBetter});
  CHECK(diff_json(a, b, o).passed());
  CHECK(diff_json(b, a, o).failed_paths() ==
        std::vector<std::string>{"summary.ttft_s.p99", "timeline[1].running"});
  o.directions.push_back({"timeline", Direction::kLowerIsBetter});  // later, wider: wins
  CHECK(diff_json(a, b, o).failed_paths() == std::vector<std::string>{"timeline[1].running"});
  o.directions.push_back({"summary.ttft_s", Direction::kEither});  // two-sided again
  CHECK(diff_json(a, b, o).failed_paths() ==
        std::vector<std::string>{"summary.ttft_s.p99", "timeline[1].running"});
  o.directions.clear();  // no defaults: everything two-sided
  CHECK(diff_json(a, b, o).num_improved == 0);
}

TEST_CASE("diff: kvsim's defaults give direction to report, compare and plan fields",
          "[report][diff]") {
  const auto dir = [](const std::string& path) {
    Direction d = Direction::kEither;
    for (const auto& r : default_directions())
      if (path_matches(r.pattern, path)) d = r.direction;
    return d;
  };
  CHECK(dir("summary.throughput_rps") == Direction::kHigherIsBetter);
  CHECK(dir("runs[2].summary.goodput_rps") == Direction::kHigherIsBetter);
  CHECK(dir("deployments[4].max_rate_rps") == Direction::kHigherIsBetter);
  CHECK(dir("kv.max_cached_tokens") == Direction::kHigherIsBetter);
  CHECK(dir("summary.e2e_s.p99") == Direction::kLowerIsBetter);
  CHECK(dir("runs[0].summary.tpot_s.mean") == Direction::kLowerIsBetter);
  CHECK(dir("deployments[0].cost_per_hour") == Direction::kLowerIsBetter);
  CHECK(dir("best.gpus") == Direction::kLowerIsBetter);
  CHECK(dir("deployments[0].observed.ttft_p99") == Direction::kLowerIsBetter);
  // An SLO target is an input, not a latency.
  CHECK(dir("summary.slo.ttft_s") == Direction::kEither);
  CHECK(dir("memory.fraction.free") == Direction::kEither);
  CHECK(dir("inputs.serving.block_size") == Direction::kEither);
}

TEST_CASE("diff: only compares the named paths and subtrees", "[report][diff]") {
  const Json a = report_doc();
  Json b = a;
  b["summary"]["ttft_s"]["p99"] = 0.5;
  b["timeline"][1]["running"] = 9;
  b["inputs"]["model"] = "other";
  DiffOptions o;
  o.only = {"summary.ttft_s"};
  DiffResult r = diff_json(a, b, o);
  CHECK(kinds(r) == std::vector<std::string>{"summary.ttft_s.p99:outside"});
  CHECK(r.num_leaves == 3);
  o.only = {"timeline[*].running", "inputs.model"};
  CHECK(diff_json(a, b, o).failed_paths() ==
        std::vector<std::string>{"inputs.model", "timeline[1].running"});
  // A named path that disappears still fails, whether its parent went or the array shrank.
  Json c = a;
  c.erase("summary");
  o.only = {"summary.ttft_s.p99"};
  CHECK(kinds(diff_json(a, c, o)) == std::vector<std::string>{"summary.ttft_s.p99:removed"});
  Json d = a;
  d["timeline"].erase(1);
  o.only = {"timeline[1].running"};
  CHECK(kinds(diff_json(a, d, o)) == std::vector<std::string>{"timeline[1].running:removed"});
}

TEST_CASE("diff: patterns that match no path are reported", "[report][diff]") {
  const Json a = report_doc();
  DiffOptions o;
  o.require_match = {"summary.ttft_s.p99", "summary.ttft_s.p99,summary.tpot_s.p99",
                     "timeline",           "summary.*.p99",
                     "runs[*].summary",    "**.p50"};
  CHECK(diff_json(a, a, o).unmatched ==
        std::vector<std::string>{"summary.ttft_s.p99,summary.tpot_s.p99", "runs[*].summary"});
}

TEST_CASE("diff: path-valued fields compare by the file they name", "[report][diff]") {
  Json a = {{"schema", "s"},
            {"inputs", {{"workload", {{"trace", {{"path", "traces/sharegpt_like.csv"}}}}}}}};
  Json b = a;
  for (const char* same :
       {"./traces/sharegpt_like.csv", "traces//sharegpt_like.csv",
        "/home/ci/repo/traces/sharegpt_like.csv", "traces/x/../sharegpt_like.csv"}) {
    b["inputs"]["workload"]["trace"]["path"] = same;
    CHECK(diff_json(a, b, {}).passed());
  }
  for (const char* other : {"traces/other.csv", "/home/ci/repo/xtraces/sharegpt_like.csv"}) {
    b["inputs"]["workload"]["trace"]["path"] = other;
    CHECK(diff_json(a, b, {}).failed_paths() ==
          std::vector<std::string>{"inputs.workload.trace.path"});
  }
  b["inputs"]["workload"]["trace"]["path"] = "./traces/sharegpt_like.csv";
  DiffOptions exact;
  exact.normalize_paths = false;
  CHECK_FALSE(diff_json(a, b, exact).passed());
  // Only path-valued keys: other strings stay exact.
  Json c = {{"schema", "s"}, {"label", "traces/a.csv"}};
  Json d = {{"schema", "s"}, {"label", "./traces/a.csv"}};
  CHECK_FALSE(diff_json(c, d, {}).passed());
}

TEST_CASE("diff: provenance and plan search probes are ignored by default", "[report][diff]") {
  Json a = Json::parse(R"({"schema": "kvsim.plan/v1", "kvsim_version": "0.1.0",
    "settings": {"source": "sweep.yaml"},
    "deployments": [{"inputs": {"model": {"display_name": "A", "source": "https://a"},
                                "hardware": {"cost_model_provenance": {"date": "2026-01-01"}}},
                     "max_rate_rps": 10.0,
                     "search": {"converged": true, "probes": [{"rate_rps": 1}, {"rate_rps": 2}]}}]})");
  Json b = a;
  b["settings"]["source"] = "/tmp/elsewhere.yaml";
  auto& d = b["deployments"][0];
  d["inputs"]["model"]["display_name"] = "B";
  d["inputs"]["model"]["source"] = "https://b";
  d["inputs"]["hardware"]["cost_model_provenance"]["date"] = "2026-02-02";
  d["search"]["probes"].push_back({{"rate_rps", 3}});
  d["max_rate_rps"] = 12.0;  // capacity up: an improvement
  DiffResult r = diff_json(a, b, {});
  CHECK(r.passed());
  CHECK(r.num_improved == 1);
  CHECK(r.num_ignored == 5);
  d["search"]["converged"] = false;  // a real change still fails
  CHECK(diff_json(a, b, {}).failed_paths() ==
        std::vector<std::string>{"deployments[0].search.converged"});
  DiffOptions all;
  all.ignore.clear();
  CHECK(diff_json(a, b, all).num_failed == 6);
}

TEST_CASE("diff: a number beyond double range is a located error", "[report][diff]") {
  try {
    parse_json_text("{\"schema\":\"s\",\n \"x\":1e400}", "big.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.location().file == "big.json");
    CHECK(e.location().line == 2);
    CHECK(e.location().column == 6);
    CHECK(e.message() == "invalid JSON: number 1e400 is beyond the range of a double");
  }
  CHECK(parse_json_text("{\"x\": 1e-400}", "tiny.json")["x"] == 0.0);  // underflow is zero
}

TEST_CASE("diff: nesting deeper than the limit is an error, not a stack overflow",
          "[report][diff]") {
  const std::string deep =
      "{\"schema\":\"s\",\"x\":" + std::string(20000, '[') + std::string(20000, ']') + "}";
  try {
    parse_json_text(deep, "deep.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.location().line == 1);
    CHECK(e.location().column == 18 + kMaxJsonDepth);  // the 256th '[' is level 257
    CHECK(e.message() == "invalid JSON: nested deeper than 256 levels");
  }
  // Brackets inside strings do not count.
  CHECK_NOTHROW(parse_json_text("{\"s\": \"" + std::string(1000, '[') + "\"}", "s.json"));
  // The walk itself is iterative: documents built in code may be deeper than the parser allows.
  Json a = Json::array();
  for (int i = 0; i < 5000; ++i) a = Json::array({std::move(a)});
  Json b = a;
  const DiffResult r = diff_json(a, b, {});
  CHECK(r.passed());
  CHECK(r.num_leaves == 0);
}
