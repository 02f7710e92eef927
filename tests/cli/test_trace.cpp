// `kvsim trace stats|gen|convert` as a user runs them.
#include <dirent.h>
#include <sys/stat.h>

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

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int files_in(const std::string& dir) {
  int n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
    }
    ::closedir(d);
  }
  return n;
}

const char* kSmall =
    "arrival_s,prompt_tokens,output_tokens\n"
    "0,10,1\n"
    "1,20,2\n"
    "2,30,3\n"
    "4,40,4\n";

}  // namespace

TEST_CASE("trace stats: a bad row exits 2 naming file:line:column: field", "[cli][trace]") {
  const auto path = write_temp_file(temp_dir(), "bad.csv", std::string(kSmall) + "5,x,1\n");
  const auto r = run_kvsim({"trace", "stats", path});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvsim: error: " + path +
                     ":6:3: prompt_tokens: expected a positive integer (tokens), got 'x'\n");
  const auto skipped = run_kvsim({"trace", "stats", path, "--skip-bad-rows", "--format", "json"});
  REQUIRE(skipped.exit_code == 0);
  const json j = json::parse(skipped.out);
  CHECK(j["requests"] == 4);
  CHECK(j["bad_rows_skipped"] == 1);
  CHECK(j["rejected_rows"] == 1);
  CHECK(j["workload"]["trace"]["skip_bad_rows"] == true);
}

TEST_CASE("trace stats: missing file, FILE with generator flags, no workload", "[cli][trace]") {
  auto r = run_kvsim({"trace", "stats", "/nonexistent.csv"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("kvsim: error: /nonexistent.csv: cannot open the trace file", 0) == 0);
  const auto path = write_temp_file(temp_dir(), "s.csv", kSmall);
  r = run_kvsim({"trace", "stats", path, "--rate", "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--rate: expected either a FILE argument or workload flags") !=
        std::string::npos);
  r = run_kvsim({"trace", "stats"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--trace: expected a workload") != std::string::npos);
  r = run_kvsim({"trace", "stats", path, "--trace-format", "mooncak"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'mooncake'?") != std::string::npos);
}

TEST_CASE("trace gen: deterministic native CSV on stdout, and the seed matters", "[cli][trace]") {
  const std::vector<std::string> args = {"trace",          "gen",
                                         "--arrival",      "gamma",
                                         "--rate",         "4",
                                         "--cv",           "3",
                                         "--num-requests", "50",
                                         "--prompt-len",   "lognormal:161.31:120:1:2048",
                                         "--output-len",   "uniform:1:500",
                                         "--seed",         "3"};
  const auto a = run_kvsim(args);
  const auto b = run_kvsim(args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.rfind("arrival_s,prompt_tokens,output_tokens\n0,", 0) == 0);
  CHECK(std::count(a.out.begin(), a.out.end(), '\n') == 51);
  auto other = args;
  other.back() = "4";
  CHECK(run_kvsim(other).out != a.out);
}

TEST_CASE("trace gen --out-trace: the file, then its statistics", "[cli][trace]") {
  const std::string dir = temp_dir();
  const auto r =
      run_kvsim({"trace", "gen", "--rate", "2", "--num-requests", "100", "--prompt-len", "100",
                 "--output-len", "10", "--shared-prefix-fraction", "1", "--shared-prefix-tokens",
                 "1024", "--out-trace", dir + "/g.csv", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["command"] == "trace gen");
  CHECK(j["output"] == dir + "/g.csv");
  CHECK(j["requests"] == 100);
  CHECK(j["prompt_tokens"]["mean"] == 1124.0);
  CHECK(j["workload"]["synthetic"]["prompt_tokens"] == "fixed:100");
  CHECK(j["workload"]["synthetic"]["shared_prefix"]["prompt_tokens"] == 1024);
  // 3 blocks each; the 2 system-prompt blocks are reused by all but the first request.
  CHECK(j["prefix_block_reuse_fraction"].get<double>() == Approx(2.0 * 99 / 300).epsilon(1e-12));
  // Reading the file back gives the same statistics.
  const auto back = run_kvsim({"trace", "stats", dir + "/g.csv", "--format", "json"});
  REQUIRE(back.exit_code == 0);
  const json k = json::parse(back.out);
  CHECK(k["prompt_tokens"] == j["prompt_tokens"]);
  CHECK(k["rate_rps"] == j["rate_rps"]);
  CHECK(k["prefix_block_reuse_fraction"] == j["prefix_block_reuse_fraction"]);
}

TEST_CASE("trace stats: a trace's sessions, in the table and the JSON", "[cli][trace]") {
  const std::string dir = temp_dir();
  const std::string trace = kvsim::test::write_temp_file(
      dir, "chat.csv",
      "arrival_s,prompt_tokens,output_tokens,session_id\n0,512,16,a\n0.5,600,16,a\n"
      "1,512,16,b\n1.5,10,2,\n");
  const auto r = run_kvsim({"trace", "stats", trace, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["sessions"] == json{{"count", 2}, {"requests", 3}, {"max_requests", 2}});
  const auto table = run_kvsim({"trace", "stats", trace, "--format", "table"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("  sessions                   2  3 requests with a session id, at most 2 "
                       "in one") != std::string::npos);
  // A trace without session ids has no such entry.
  const std::string plain = kvsim::test::write_temp_file(
      dir, "plain.csv", "arrival_s,prompt_tokens,output_tokens\n0,512,16\n");
  CHECK_FALSE(json::parse(run_kvsim({"trace", "stats", plain, "--format", "json"}).out)
                  .contains("sessions"));
}

TEST_CASE("trace convert: native CSV out, and nothing written on bad input", "[cli][trace]") {
  const std::string dir = temp_dir();
  const auto in = write_temp_file(dir, "az.csv",
                                  "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                  "2023-11-16 18:17:03.9799600,4808,10\r\n"
                                  "2023-11-16 18:17:04.0319600,3180,8");
  const auto r = run_kvsim({"trace", "convert", in, "--to", dir + "/out.csv", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/out.csv") ==
        "arrival_s,prompt_tokens,output_tokens\n0,4808,10\n0.052,3180,8\n");
  CHECK(json::parse(r.out)["command"] == "trace convert");

  const auto bad = write_temp_file(dir, "bad.csv", std::string(kSmall) + "5,1\n");
  const int before = files_in(dir);
  const auto e = run_kvsim({"trace", "convert", bad, "--to", dir + "/bad_out.csv"});
  CHECK(e.exit_code == 2);
  CHECK(e.err.find(":6:4: output_tokens: expected 3 columns as in the header, got 2") !=
        std::string::npos);
  CHECK_FALSE(exists(dir + "/bad_out.csv"));
  CHECK(files_in(dir) == before);  // no temporary left behind
}

TEST_CASE("trace convert with transforms: a window at twice the rate, truncated", "[cli][trace]") {
  const std::string dir = temp_dir();
  const auto in = write_temp_file(dir, "s.csv", kSmall);
  const auto r =
      run_kvsim({"trace", "convert", in, "--to", dir + "/w.csv", "--time-window",
                 "1:", "--rate-scale", "2", "--max-model-len", "25", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/w.csv") ==
        "arrival_s,prompt_tokens,output_tokens\n0,20,2\n0.5,22,3\n1.5,21,4\n");
  CHECK(json::parse(r.out)["truncated_prompts"] == 2);
}
