#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;

namespace {

std::string report_text(double p99, const std::string& version = "0.1.0") {
  return R"({
  "schema": "kvsim.report/v1",
  "kvsim_version": ")" +
         version + R"(",
  "command": "simulate",
  "summary": {
    "requests_completed": 1000,
    "ttft_s": {"mean": 0.1, "p99": )" +
         std::to_string(p99) + R"(}
  }
}
)";
}

}  // namespace

TEST_CASE("kvsim diff: identical reports exit 0", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", report_text(0.4));
  const auto b = write_temp_file(dir, "b.json", report_text(0.4, "9.9.9"));
  const auto r = run_kvsim({"diff", a, b, "--format", "table"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("no differences") == std::string::npos);  // the version is listed as ignored
  CHECK(r.out.find("ignored") != std::string::npos);
  CHECK(r.out.find("PASS") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("kvsim diff: a 5% move in a p99 exits 1 naming the metric", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", report_text(0.4));
  const auto b = write_temp_file(dir, "b.json", report_text(0.42));
  auto r = run_kvsim({"diff", a, b, "--format", "table"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("summary.ttft_s.p99") != std::string::npos);
  CHECK(r.err.find("1 value out of tolerance") != std::string::npos);
  CHECK(r.err.find("summary.ttft_s.p99 (0.4 -> 0.42, +5% > 1%)") != std::string::npos);
  // A per-metric override admits it; a global rtol too; JSON output carries the verdict.
  CHECK(run_kvsim({"diff", a, b, "--tol", "summary.ttft_s.p99=0.05"}).exit_code == 0);
  CHECK(run_kvsim({"diff", a, b, "--rtol", "0.06"}).exit_code == 0);
  CHECK(run_kvsim({"diff", "--tol", "summary.ttft_s.p99=0.049", a, b}).exit_code == 1);
  CHECK(run_kvsim({"diff", a, b, "--ignore", "summary.ttft_s"}).exit_code == 0);
  r = run_kvsim({"diff", a, b, "--format", "json"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("\"verdict\": \"fail\"") != std::string::npos);
}

TEST_CASE("kvsim diff: malformed JSON exits 2 naming the file, line and column", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", report_text(0.4));
  const auto bad =
      write_temp_file(dir, "bad.json", "{\n  \"schema\": \"kvsim.report/v1\",\n  x\n}\n");
  const auto r = run_kvsim({"diff", a, bad});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvsim: error: " + bad +
                     ":3:3: invalid JSON: object key - invalid literal; expected string literal\n");
}

TEST_CASE("kvsim diff: unusable input exits 2", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", report_text(0.4));
  const auto plan = write_temp_file(dir, "p.json", R"({"schema": "kvsim.plan/v1"})");
  auto r = run_kvsim({"diff", a, plan});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot compare different schemas") != std::string::npos);
  r = run_kvsim({"diff", a, dir + "/missing.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(dir + "/missing.json") != std::string::npos);
  r = run_kvsim({"diff", a, a, "--tol", "summary.ttft_s.p99"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--tol") != std::string::npos);
  CHECK(run_kvsim({"diff", a, a, "--rtol", "-1"}).exit_code == 2);
  CHECK(run_kvsim({"diff", a}).exit_code == 2);
}

namespace {

// A plan-shaped document: the capacity fields a gate watches.
std::string plan_text(double max_rate, double cost, int probes, const std::string& trace) {
  std::string probe_list;
  for (int i = 0; i < probes; ++i) {
    probe_list += std::string(i ? ", " : "") + "{\"rate_rps\": " + std::to_string(i + 1) + "}";
  }
  return R"({"schema": "kvsim.plan/v1", "kvsim_version": "0.1.0",
  "deployments": [{"inputs": {"workload": {"trace": {"path": ")" +
         trace + R"("}}},
    "max_rate_rps": )" +
         std::to_string(max_rate) + R"(, "cost_per_hour": )" + std::to_string(cost) +
         R"(, "gpus": 4,
    "search": {"converged": true, "probes": [)" +
         probe_list + R"(]}}]}
)";
}

}  // namespace

TEST_CASE("kvsim diff: --tol, --ignore and --only are repeatable and split commas", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", plan_text(10.0, 20.0, 5, "t.csv"));
  const auto b = write_temp_file(dir, "b.json", plan_text(4.0, 50.0, 5, "t.csv"));
  // max_rate_rps dropped 60%, cost up 150%: both regressions.
  auto r = run_kvsim({"diff", a, b, "--format", "table"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("2 values out of tolerance") != std::string::npos);
  // Given twice, both apply; the comma form is the same two patterns, never one.
  r = run_kvsim({"diff", a, b, "--tol", "deployments[*].max_rate_rps=0.7", "--tol",
                 "deployments[*].cost_per_hour=2"});
  CHECK(r.exit_code == 0);
  CHECK(run_kvsim({"diff", a, b, "--tol",
                   "deployments[*].max_rate_rps=0.7,deployments[*].cost_per_hour=2"})
            .exit_code == 0);
  r = run_kvsim({"diff", a, b, "--tol", "deployments[*].max_rate_rps=0.05,deployments[*].gpus=0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("deployments[0].max_rate_rps (10.0 -> 4.0, -60% > 5%)") != std::string::npos);
  CHECK(run_kvsim({"diff", a, b, "--ignore", "deployments[*].max_rate_rps", "--ignore",
                   "deployments[*].cost_per_hour"})
            .exit_code == 0);
  CHECK(run_kvsim(
            {"diff", a, b, "--ignore", "deployments[*].max_rate_rps,deployments[*].cost_per_hour"})
            .exit_code == 0);
  r = run_kvsim({"diff", a, b, "--only", "deployments[*].gpus", "--only", "schema"});
  CHECK(r.exit_code == 0);
  r = run_kvsim({"diff", a, b, "--only", "deployments[*].gpus,deployments[*].max_rate_rps"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("1 value out of tolerance") != std::string::npos);
  // A stray comma is an error, not an empty pattern.
  r = run_kvsim({"diff", a, b, "--ignore", "deployments,"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--ignore: expected PATTERN[,PATTERN...], got an empty item") !=
        std::string::npos);
}

TEST_CASE("kvsim diff: a pattern that matches nothing is an error (exit 2)", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", plan_text(10.0, 20.0, 5, "t.csv"));
  const auto b = write_temp_file(dir, "b.json", plan_text(4.0, 20.0, 5, "t.csv"));
  for (const std::string flag :
       {"--tol", "--ignore", "--only", "--higher-is-better", "--lower-is-better", "--two-sided"}) {
    const std::string pattern = flag == "--tol" ? "max_rate_rps=0.05" : "max_rate_rps";
    const auto r = run_kvsim({"diff", a, b, flag, pattern});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("kvsim: error: " + flag + ": pattern 'max_rate_rps' matches no path of") !=
          std::string::npos);
  }
  const auto r = run_kvsim({"diff", a, b, "--ignore", "deployments[*].max_rate_rps", "--tol",
                            "x=0.1,deployments=0.1", "--only", "y"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--only: pattern 'y'; --tol 'x' matches no path") != std::string::npos);
}

TEST_CASE("kvsim diff: improvements pass and are listed, directions can be set per path",
          "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", plan_text(10.0, 20.0, 5, "traces/t.csv"));
  // More capacity, lower cost, more probes, the trace given by an absolute path: all fine.
  const auto b = write_temp_file(dir, "b.json", plan_text(14.0, 15.0, 8, "/ci/repo/traces/t.csv"));
  auto r = run_kvsim({"diff", a, b, "--format", "table"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("deployments[0].max_rate_rps") != std::string::npos);
  CHECK(r.out.find("improved") != std::string::npos);
  CHECK(r.out.find("2 improved") != std::string::npos);
  CHECK(r.out.find("PASS") != std::string::npos);
  // Reversed, both are regressions.
  r = run_kvsim({"diff", b, a});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("2 values out of tolerance") != std::string::npos);
  // The user's direction beats the default; --two-sided undoes one; the last flag wins.
  CHECK(run_kvsim({"diff", a, b, "--lower-is-better", "deployments[*].max_rate_rps"}).exit_code ==
        1);
  CHECK(run_kvsim({"diff", a, b, "--two-sided", "deployments[*].cost_per_hour"}).exit_code == 1);
  CHECK(run_kvsim({"diff", a, b, "--lower-is-better", "deployments[*].max_rate_rps",
                   "--higher-is-better", "deployments[*].max_rate_rps"})
            .exit_code == 0);
  CHECK(run_kvsim({"diff", a, b, "--higher-is-better", "deployments[*].max_rate_rps",
                   "--lower-is-better", "deployments[*].max_rate_rps"})
            .exit_code == 1);
  CHECK(run_kvsim({"diff", a, b, "--no-default-directions"}).exit_code == 1);
  CHECK(run_kvsim({"diff", a, b, "--exact-paths"}).exit_code == 1);
  CHECK(run_kvsim({"diff", a, b, "--no-default-ignore"}).exit_code == 1);  // probes length
}

TEST_CASE("kvsim diff: --format github writes a markdown summary, --out keeps the JSON",
          "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", plan_text(10.0, 20.0, 5, "t.csv"));
  const auto b = write_temp_file(dir, "b.json", plan_text(4.0, 15.0, 5, "t.csv"));
  const auto r = run_kvsim({"diff", a, b, "--format", "github", "--out", dir + "/d.json"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.rfind("### kvsim diff: FAIL\n", 0) == 0);
  CHECK(r.out.find("#### Regressions (1)") != std::string::npos);
  CHECK(r.out.find("| `deployments[0].max_rate_rps` | 10.0 | 4.0 | -60% | 1% | FAIL |") !=
        std::string::npos);
  CHECK(r.out.find("#### Improvements (1)") != std::string::npos);
  CHECK(kvsim::test::slurp(dir + "/d.json").find("\"schema\": \"kvsim.diff/v1\"") !=
        std::string::npos);
  CHECK(run_kvsim({"diff", a, b, "--format", "markdown"}).out.rfind("### kvsim diff", 0) == 0);
  CHECK(run_kvsim({"diff", a, b, "--format", "yaml"}).exit_code == 2);
}

TEST_CASE("kvsim diff: hostile JSON gives a located error, never an internal one", "[cli][diff]") {
  const std::string dir = temp_dir();
  const auto a = write_temp_file(dir, "a.json", R"({"schema":"s","x":1})");
  const auto big = write_temp_file(dir, "big.json", R"({"schema":"s","x":1e400})");
  auto r = run_kvsim({"diff", a, big});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvsim: error: " + big +
                     ":1:19: invalid JSON: number 1e400 is beyond the range of a double\n");
  const auto deep = write_temp_file(
      dir, "deep.json",
      R"({"schema":"s","x":)" + std::string(20000, '[') + std::string(20000, ']') + "}");
  r = run_kvsim({"diff", a, deep});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("invalid JSON: nested deeper than 256 levels") != std::string::npos);
  // A pathological glob on a long key finishes (linear matcher) and reports no match.
  const auto key =
      write_temp_file(dir, "key.json", R"({"schema":"s",")" + std::string(60, 'a') + R"(":1})");
  r = run_kvsim({"diff", key, key, "--ignore", "*a*a*a*a*a*a*a*a*a*b"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("matches no path") != std::string::npos);
}
