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
