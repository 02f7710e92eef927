// cli/calibrate_run.cpp: kvsim calibrate --from-run, end to end.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::slurp;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
using Json = nlohmann::json;

namespace {

// Six requests, alone and overlapping, with their measured first-token and end times.
const char* kRun =
    R"({"arrival_time_s": 0.0, "input_tokens": 100, "output_tokens": 20, "first_token_time": 0.06, "end_time": 0.70}
{"arrival_time_s": 2.0, "input_tokens": 400, "output_tokens": 30, "first_token_time": 2.09, "end_time": 3.05}
{"arrival_time_s": 4.0, "input_tokens": 50, "output_tokens": 10, "first_token_time": 4.05, "end_time": 4.35}
{"arrival_time_s": 6.0, "input_tokens": 300, "output_tokens": 40, "first_token_time": 6.08, "end_time": 7.40}
{"arrival_time_s": 6.01, "input_tokens": 200, "output_tokens": 40, "first_token_time": 6.15, "end_time": 7.45}
{"arrival_time_s": 6.02, "input_tokens": 600, "output_tokens": 25, "first_token_time": 6.25, "end_time": 7.10}
)";

std::vector<std::string> args(const std::string& run, const std::vector<std::string>& more) {
  std::vector<std::string> a = {"calibrate", "--from-run", run,  "--model", "opt-13b",   "--gpu",
                                "a100-80gb", "--engine",   "v0", "--date",  "2025-01-01"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE("kvsim calibrate --from-run fits the overheads and writes the profile",
          "[cli][calibrate][overhead]") {
  const std::string dir = temp_dir();
  const std::string run = write_temp_file(dir, "run.jsonl", kRun);
  const std::string out = dir + "/fit.yaml";
  const auto r = run_kvsim(args(run, {"--out", out, "--format", "json"}));
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["schema"] == "kvsim.calibration/v1");
  CHECK(doc["profile"] == out);
  CHECK(doc["inputs"]["runs"][0]["requests"] == 6);
  for (const char* key : {"step_overhead_us", "seq_overhead_us", "prefill_token_overhead_us"}) {
    CHECK(doc["fitted"][key].get<double>() >= 0);
    CHECK(doc["prior"].contains(key));
  }
  CHECK(doc["prior"]["step_overhead_us"] == 1500.0);  // the a100-80gb profile's
  for (const char* m : {"ttft", "tpot", "e2e"}) {
    CHECK(doc["validation"][m]["before"]["requests"] == 6);
    CHECK(doc["validation"][m]["after"].contains("median_abs_error_pct"));
  }
  const std::string yaml = slurp(out);
  CHECK(yaml.find("kind: calibrated") != std::string::npos);
  CHECK(yaml.find("fitted_overheads: [") != std::string::npos);
  CHECK(yaml.find("overheads fitted to " + run) != std::string::npos);
  CHECK(yaml.find("date: \"2025-01-01\"") != std::string::npos);
  // The profile is a GPU the other commands take.
  const auto cost = run_kvsim({"cost", "--model", "opt-13b", "--gpu", out, "--decode-batch", "8",
                               "--context", "512", "--format", "json"});
  REQUIRE(cost.exit_code == 0);

  // Deterministic: the same inputs, byte-identical report and profile.
  const std::string out2 = dir + "/fit2.yaml";
  const auto again = run_kvsim(args(run, {"--out", out2, "--format", "json"}));
  REQUIRE(again.exit_code == 0);
  CHECK(Json::parse(again.out)["fitted"] == doc["fitted"]);
  CHECK(slurp(out2) == yaml);

  const auto table = run_kvsim(args(run, {"--format", "table"}));
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("seq_overhead_us") != std::string::npos);
  CHECK(table.out.find("median |err|") != std::string::npos);
}

TEST_CASE("kvsim calibrate --from-run: bad input is one located error, nothing written",
          "[cli][calibrate][overhead]") {
  const std::string dir = temp_dir();
  const std::string out = dir + "/fit.yaml";
  const std::string bad =
      write_temp_file(dir, "bad.jsonl",
                      "{\"arrival_time_s\": 0, \"input_tokens\": 10, \"output_tokens\": 2}\n"
                      "{\"arrival_time_s\": 1, \"input_tokens\": -5, \"output_tokens\": 2}\n");
  const auto r = run_kvsim(args(bad, {"--out", out}));
  kvsim::test::check_one_error(r, {"bad.jsonl:2", "input_tokens"});
  CHECK_FALSE(std::filesystem::exists(out));
  // Settings flags belong to --from-run.
  const auto stray =
      run_kvsim({"calibrate", "--from", "x.csv", "--gpu", "a100-80gb", "--block-size", "32"});
  kvsim::test::check_one_error(stray, {"--block-size", "--from-run"});
  const std::string good = write_temp_file(dir, "run.jsonl", kRun);
  const auto both = run_kvsim(args(good, {"--from", "x.csv"}));
  kvsim::test::check_one_error(both, {"--from-run"});
}

TEST_CASE("kvsim calibrate --from-run recovers a front end's latency kvsim simulate planted",
          "[cli][calibrate][overhead]") {
  // The "real" run: simulate with a 20 ms front end on the a100-80gb profile; its request log
  // becomes the requests.jsonl calibrate reads. Fitted from vLLM V0's 10 ms prior (the profile
  // has none), the latency comes back and the written profile carries it into the next
  // simulation.
  const std::string dir = temp_dir();
  const std::string trace = write_temp_file(
      dir, "t.csv",
      "arrival_s,prompt_tokens,output_tokens\n0,100,20\n0.5,400,30\n1.0,50,10\n1.5,300,40\n"
      "1.51,200,40\n1.52,600,25\n3,800,30\n3.01,120,50\n3.02,60,12\n5,1000,20\n");
  const std::string log = dir + "/requests.csv";
  const auto sim = run_kvsim({"simulate", "--trace", trace, "--model", "opt-13b", "--gpu",
                              "a100-80gb", "--engine", "v0", "--frontend-latency-us", "20000",
                              "--requests", log, "--format", "json"});
  REQUIRE(sim.exit_code == 0);
  CHECK(Json::parse(sim.out)["inputs"]["serving"]["frontend_latency_us"] == 20000.0);
  // The request log's columns, found by name in its header.
  std::istringstream rows(slurp(log));
  std::string head, line, jsonl;
  std::getline(rows, head);
  const std::vector<std::string_view> header = kvsim::split(head, ',');
  const auto column = [&header](std::string_view name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t arrival = column("arrival_s"), prompt = column("prompt_tokens"),
                    output = column("output_tokens"), first = column("first_token_s"),
                    finish = column("finish_s");
  while (std::getline(rows, line)) {
    const std::vector<std::string_view> f = kvsim::split(line, ',');
    REQUIRE(f.size() == header.size());
    jsonl += "{\"arrival_time_s\": " + std::string(f[arrival]) +
             ", \"input_tokens\": " + std::string(f[prompt]) +
             ", \"output_tokens\": " + std::string(f[output]) +
             ", \"first_token_time\": " + std::string(f[first]) +
             ", \"end_time\": " + std::string(f[finish]) + "}\n";
  }
  const std::string run = write_temp_file(dir, "run.jsonl", jsonl);
  const std::string out = dir + "/fit.yaml";
  const auto fit = run_kvsim(args(run, {"--out", out, "--format", "json"}));
  REQUIRE(fit.exit_code == 0);
  const Json doc = Json::parse(fit.out);
  CHECK(doc["prior"]["frontend_latency_us"] == 10000.0);
  CHECK(doc["fitted"]["frontend_latency_us"].get<double>() == Approx(20000).epsilon(0.05));
  CHECK(std::abs(doc["validation"]["ttft"]["after"]["mean_error_pct"].get<double>()) < 1.0);
  CHECK(slurp(out).find("frontend_latency_us: ") != std::string::npos);
  const auto again = run_kvsim({"simulate", "--trace", trace, "--model", "opt-13b", "--gpu", out,
                                "--engine", "v0", "--format", "json"});
  REQUIRE(again.exit_code == 0);
  CHECK(Json::parse(again.out)["inputs"]["serving"]["frontend_latency_us"].get<double>() ==
        Approx(20000).epsilon(0.05));
}

TEST_CASE("kvsim calibrate --from-run: what the run's client did (cap, prompt pool)",
          "[cli][calibrate][overhead]") {
  // The same run fitted as distinct prompts and as one prompt sent six times: on a vLLM V1
  // server (prefix caching on) the repeats hit the cache, so the replay before the fit prefills
  // less and its TTFT is lower.
  const std::string dir = temp_dir();
  const std::string run = write_temp_file(dir, "run.jsonl", kRun);
  const std::vector<std::string> base = {"calibrate", "--from-run", run,         "--model",
                                         "opt-13b",   "--gpu",      "a100-80gb", "--rounds",
                                         "1",         "--format",   "json"};
  const auto distinct = run_kvsim(base);
  REQUIRE(distinct.exit_code == 0);
  const Json d = Json::parse(distinct.out);
  CHECK(d["inputs"]["runs"][0]["prompts"] == "distinct");
  CHECK(d["inputs"]["runs"][0]["concurrency"].is_null());
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--prompt-pool", "1", "--max-concurrency", "2"});
  const auto pooled = run_kvsim(args);
  REQUIRE(pooled.exit_code == 0);
  const Json p = Json::parse(pooled.out);
  const Json& r = p["inputs"]["runs"][0];
  CHECK(r["prompts"] == "a pool of 1 prompt");
  CHECK(r["concurrency"] == 2);
  CHECK(r["arrivals"].get<std::string>().find("at most 2 outstanding (--max-concurrency)") !=
        std::string::npos);
  CHECK(p["validation"]["ttft"]["before"]["mean_error_pct"].get<double>() <
        d["validation"]["ttft"]["before"]["mean_error_pct"].get<double>());
  // The client's flags belong to --from-run; a run of another benchmark has no inference-perf
  // configuration.
  const auto stray =
      run_kvsim({"calibrate", "--from", "x.csv", "--gpu", "a100-80gb", "--prompt-pool", "3"});
  kvsim::test::check_one_error(stray, {"--prompt-pool", "--from-run"});
  // Conversations: the pool's prompts are turns.
  std::vector<std::string> chat = args;
  chat.emplace_back("--multi-turn-chat");
  const auto turns = run_kvsim(chat);
  REQUIRE(turns.exit_code == 0);
  CHECK(Json::parse(turns.out)["inputs"]["runs"][0]["prompts"] ==
        "a pool of 1 prompt, each prompt a turn of its conversation, sent once the turn before it "
        "has its answer (multi-turn chat)");
  kvsim::test::check_one_error(
      run_kvsim({"calibrate", "--from", "x.csv", "--gpu", "a100-80gb", "--multi-turn-chat"}),
      {"--multi-turn-chat", "--from-run"});
  std::vector<std::string> config = base;
  config.insert(config.end(), {"--run-config", dir + "/config.yaml"});
  kvsim::test::check_one_error(run_kvsim(config), {"--run-config", "inference-perf report"});
}
