// cli/inert_flags.cpp: vLLM flags that do nothing in kvsim warn once, on stderr.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::slurp;
using kvsim::test::source_dir;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;

namespace {

std::vector<std::string> small_run(std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--model", "llama-3-8b",     "--gpu", "h100-sxm",     "--arrival", "poisson",      "--rate",
      "5",       "--num-requests", "60",    "--prompt-len", "200",       "--output-len", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> with(std::string command, std::vector<std::string> args) {
  args.insert(args.begin(), std::move(command));
  return args;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli: flags that do nothing here warn once on stderr", "[cli][habits]") {
  auto r = run_kvsim(with("simulate", small_run({"--cv", "2", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.err, "kvsim: warning: --cv shapes gamma arrivals only") == 1);
  r = run_kvsim({"simulate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--arrival", "gamma",
                 "--cv", "2", "--rate", "5", "--num-requests", "60", "--prompt-len", "200",
                 "--output-len", "20", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  r = run_kvsim(with("simulate", small_run({"--placement", "first-fit", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.err, "kvsim: warning: --placement places contiguous extents") == 1);
  r = run_kvsim(with("simulate", small_run({"--placement", "first-fit", "--allocator",
                                            "contiguous-max", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  r = run_kvsim(with("compare", small_run({"--placement", "first-fit", "--allocator",
                                           "paged,contiguous-max", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);  // the contiguous run uses it
  r = run_kvsim({"simulate", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--trace",
                 source_dir() + "/traces/sharegpt_like.csv", "--max-requests", "40",
                 "--enable-prefix-caching", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.err,
              "kvsim: warning: --enable-prefix-caching: the workload carries no prefix "
              "hashes") == 1);
  r = run_kvsim(with("simulate", small_run({"--serial-sessions", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.err, "kvsim: warning: --serial-sessions: the workload carries no session ids") ==
        1);
  r = run_kvsim(with("simulate", small_run({"--prefill-data-parallel-size", "2",
                                            "--kv-transfer-latency-us", "5", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(count(r.err,
              "kvsim: warning: --prefill-data-parallel-size shapes disaggregated serving only") ==
        1);
  CHECK(count(r.err, "kvsim: warning: --kv-transfer-latency-us shapes disaggregated") == 1);
  r = run_kvsim(
      with("simulate", small_run({"--prefill-replicas", "1", "--prefill-data-parallel-size", "2",
                                  "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  r = run_kvsim(
      with("simulate", small_run({"--enable-prefix-caching", "--shared-prefix-fraction", "0.5",
                                  "--shared-prefix-tokens", "512", "--format", "json"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
}
