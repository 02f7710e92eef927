// cli/workload_flags.cpp: the workload flags shared by simulate, compare, plan and trace: a bad
// value names its flag.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;

TEST_CASE("trace gen: bad generator flags name the flag", "[cli][trace]") {
  auto r = run_kvsim({"trace", "gen", "--rate", "2", "--num-requests", "5", "--prompt-len",
                      "unifrom:1:5", "--output-len", "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("kvsim: error: --prompt-len: expected a length distribution", 0) == 0);
  r = run_kvsim({"trace", "gen", "--rate", "-1", "--num-requests", "5", "--prompt-len", "5",
                 "--output-len", "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("kvsim: error: --rate: expected a positive request rate", 0) == 0);
  r = run_kvsim({"trace", "gen", "--rate", "1", "--prompt-len", "5", "--output-len", "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--num-requests: expected --num-requests or --duration") != std::string::npos);
  r = run_kvsim({"trace", "gen", "--arrival", "bursty", "--rate", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--arrival: expected poisson|gamma|constant|replay") != std::string::npos);
}

TEST_CASE("workload flags: a time window and a rate scale reach the trace, checked as flags",
          "[cli][flags]") {
  const std::string trace = kvsim::test::write_temp_file(
      kvsim::test::temp_dir(), "t.csv",
      "arrival_s,prompt_tokens,output_tokens\n0,10,1\n1,20,2\n2,30,3\n3,40,4\n");
  const auto r = run_kvsim({"trace", "stats", trace, "--time-window", "1:3", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"requests\": 2") != std::string::npos);  // arrivals 1 and 2 (END excluded)
  const auto bad = run_kvsim({"trace", "stats", trace, "--time-window", "3:1"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.rfind("kvsim: error: --time-window: ", 0) == 0);
  const auto scale = run_kvsim({"trace", "stats", trace, "--rate-scale", "0"});
  CHECK(scale.exit_code == 2);
  CHECK(scale.err.rfind("kvsim: error: --rate-scale: ", 0) == 0);
}

TEST_CASE("workload flags: --serial-sessions sends a session's request after the one before",
          "[cli][flags][sessions]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string trace = kvsim::test::write_temp_file(
      dir, "chat.csv",
      "arrival_s,prompt_tokens,output_tokens,session_id\n0,512,16,a\n0.001,600,16,a\n"
      "0.001,512,16,b\n");
  const std::string log = dir + "/requests.csv";
  const std::vector<std::string> base = {"simulate",  "--model",  "llama-3-8b", "--gpu",
                                         "a100-80gb", "--trace",  trace,        "--requests",
                                         log,         "--format", "json"};
  // A request's row: id,replica,state,reject_reason,prompt_tokens,output_tokens,arrival_s,...
  const auto cell = [&log](std::size_t id, std::size_t column) {
    std::istringstream in(kvsim::test::slurp(log));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(std::to_string(id) + ",", 0) != 0) continue;
      std::istringstream cells(line);
      std::string c;
      for (std::size_t i = 0; i <= column; ++i) std::getline(cells, c, ',');
      return std::stod(c);
    }
    FAIL("no request " << id);
    return 0.0;
  };
  constexpr std::size_t kArrival = 6, kFinish = 9;
  std::vector<std::string> args = base;
  args.push_back("--serial-sessions");
  const auto r = run_kvsim(args);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["inputs"]["workload"]["serial_sessions"] == true);
  CHECK(cell(1, kArrival) > cell(0, kFinish));  // waited for request 0's answer
  CHECK(cell(1, kArrival) - cell(0, kFinish) < 2e-9);
  CHECK(cell(2, kArrival) == 0.001);  // session b: on time
  // Without the flag the session ids hold nothing back.
  const auto open = run_kvsim(base);
  REQUIRE(open.exit_code == 0);
  CHECK_FALSE(nlohmann::json::parse(open.out)["inputs"]["workload"].contains("serial_sessions"));
  CHECK(cell(1, kArrival) == 0.001);
}

TEST_CASE("workload flags: --max-concurrency runs a closed loop and is reported",
          "[cli][flags][closed-loop]") {
  const auto r = run_kvsim({"simulate", "--model", "llama-3-8b", "--gpu", "a100-80gb",
                            "--prompt-len", "512", "--output-len", "16", "--num-requests", "12",
                            "--max-concurrency", "4", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["inputs"]["workload"]["max_concurrency"] == 4);
  CHECK(doc["inputs"]["workload"]["synthetic"]["rate_rps"] == 0.0);
  CHECK(doc["summary"]["requests_completed"] == 12);
  CHECK(doc["summary"]["max_running"] == 4);
  // Open loop without a rate is still an error; the trace tool has no closed loop.
  auto bad = run_kvsim({"simulate", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--prompt-len",
                        "512", "--output-len", "16", "--num-requests", "12"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--rate: expected a positive request rate") != std::string::npos);
  bad = run_kvsim({"simulate", "--model", "llama-3-8b", "--gpu", "a100-80gb", "--prompt-len", "5",
                   "--output-len", "5", "--num-requests", "2", "--max-concurrency", "-1"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--max-concurrency") != std::string::npos);
  CHECK(run_kvsim({"trace", "gen", "--num-requests", "2", "--prompt-len", "5", "--output-len", "5",
                   "--max-concurrency", "2"})
            .exit_code != 0);
}
