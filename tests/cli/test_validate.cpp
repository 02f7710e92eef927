#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
using Json = nlohmann::json;

namespace {

// Three requests of a DistServe-style run on OPT-13B.
const char* kExp =
    "[{'prompt_len': 64, 'output_len': 5, 'issue_time': 10.0, 'first_token_time': 10.1,"
    " 'complete_time': 10.3},\n"
    " {'prompt_len': 32, 'output_len': 3, 'issue_time': 10.5, 'first_token_time': 10.55,"
    " 'complete_time': 10.65},\n"
    " {'prompt_len': 128, 'output_len': 9, 'issue_time': 11.0, 'first_token_time': 11.2,"
    " 'complete_time': 11.6}]";

// A CSV's rows as header -> cell maps (no quoting: kvsim's request log has none here).
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
    lines.push_back(cells);
  }
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < lines[0].size() && c < lines[i].size(); ++c) {
      row[lines[0][c]] = lines[i][c];
    }
    rows.push_back(row);
  }
  return rows;
}

const std::map<std::string, std::string>& row_with_id(
    const std::vector<std::map<std::string, std::string>>& rows, std::size_t id) {
  for (const auto& r : rows) {
    if (r.at("id") == std::to_string(id)) return r;
  }
  FAIL("no request " << id << " in the log");
  return rows.front();
}

}  // namespace

TEST_CASE("kvsim validate replays a DistServe run: real and simulated side by side",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  const std::string exp = write_temp_file(dir, "vllm-3-2.exp", kExp);
  const auto r = run_kvsim({"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb",
                            "--engine", "v0", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["schema"] == "kvsim.validate/v1");
  CHECK(doc["inputs"]["run_format"] == "distserve");
  CHECK(doc["inputs"]["arrivals"] == "recorded");
  CHECK(doc["inputs"]["requests"] == 3);
  CHECK(doc["inputs"]["request_rate"] == 2.0);
  const Json& ttft = doc["metrics"]["ttft_s"];
  CHECK(ttft["real"]["count"] == 3);
  CHECK(ttft["real"]["mean"].get<double>() == Approx((0.1 + 0.05 + 0.2) / 3));
  CHECK(ttft["real"]["p50"].get<double>() == Approx(0.1));
  CHECK(ttft["simulated"]["count"] == 3);
  const double sim = ttft["simulated"]["mean"].get<double>();
  const double real = ttft["real"]["mean"].get<double>();
  CHECK(ttft["error"]["mean"].get<double>() == Approx((sim - real) / real));
  CHECK(doc["metrics"]["itl_s"]["real"].is_null());  // .exp records no token gaps
  CHECK(doc["metrics"]["itl_s"]["error"].is_null());
  CHECK(doc["metrics"]["tpot_s"]["real"]["count"] == 3);
  CHECK(doc["simulated_requests"]["completed"] == 3);
  CHECK(doc["throughput"]["real"]["requests_per_s"].get<double>() == Approx(3 / 1.6));

  const auto table = run_kvsim(
      {"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb", "--format", "table"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("TTFT") != std::string::npos);
  CHECK(table.out.find("throughput: real") != std::string::npos);

  // --requests and --timeline write the simulated side, as for kvsim simulate: one row per
  // request of the run, in its order.
  const std::string log = dir + "/requests.csv";
  const std::string timeline = dir + "/timeline.csv";
  REQUIRE(run_kvsim({"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb",
                     "--engine", "v0", "--requests", log, "--timeline", timeline})
              .exit_code == 0);
  const auto rows = csv_rows(kvsim::test::slurp(log));
  REQUIRE(rows.size() == 3);
  CHECK(row_with_id(rows, 0).at("prompt_tokens") == "64");
  CHECK(row_with_id(rows, 1).at("arrival_s") == "0.5");
  CHECK(row_with_id(rows, 2).at("output_tokens") == "9");
  CHECK(kvsim::test::slurp(timeline).rfind("t_s,running,waiting,", 0) == 0);

  // --side-by-side: real and simulated per request, in the run's order.
  const std::string sides = dir + "/sides.csv";
  REQUIRE(run_kvsim({"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb",
                     "--engine", "v0", "--side-by-side", sides, "--requests", log})
              .exit_code == 0);
  const auto pairs = csv_rows(kvsim::test::slurp(sides));
  REQUIRE(pairs.size() == 3);
  const auto& second = row_with_id(pairs, 1);
  CHECK(second.at("prompt_tokens") == "32");
  CHECK(second.at("arrival_s") == "0.5");
  CHECK(second.at("sim_sent_s") == "0.5");
  CHECK(second.at("sim_state") == "finished");
  CHECK(std::stod(second.at("real_ttft_s")) == Approx(0.05));
  CHECK(std::stod(second.at("real_e2e_s")) == Approx(0.15));
  CHECK(std::stod(second.at("real_tpot_s")) == Approx(0.05));  // (0.15 - 0.05) / 2
  // The simulated side is the request log's.
  const auto simulated = csv_rows(kvsim::test::slurp(log));
  for (std::size_t id = 0; id < 3; ++id) {
    const auto& side = row_with_id(pairs, id);
    const auto& logged = row_with_id(simulated, id);
    CHECK(std::stod(side.at("sim_ttft_s")) == Approx(std::stod(logged.at("ttft_s"))));
    CHECK(std::stod(side.at("sim_tpot_s")) == Approx(std::stod(logged.at("tpot_s"))));
    CHECK(std::stod(side.at("sim_e2e_s")) == Approx(std::stod(logged.at("e2e_s"))));
  }
}

TEST_CASE("kvsim validate: bad input exits 2 with the file and field", "[cli][validate]") {
  const std::string dir = temp_dir();
  const auto missing = run_kvsim({"validate", "--model", "opt-13b", "--gpu", "a100-80gb"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--run") != std::string::npos);
  const std::string bad = write_temp_file(dir, "bad.exp", "[{'prompt_len': 5,}");
  const auto r = run_kvsim({"validate", "--run", bad, "--model", "opt-13b", "--gpu", "a100-80gb"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.exp:1:") != std::string::npos);
  const std::string txt = write_temp_file(dir, "run.txt", "x");
  const auto unknown =
      run_kvsim({"validate", "--run", txt, "--model", "opt-13b", "--gpu", "a100-80gb"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("--run-format") != std::string::npos);
  const std::string exp = write_temp_file(dir, "ok.exp", kExp);
  const auto workload = run_kvsim(
      {"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb", "--rate", "3"});
  CHECK(workload.exit_code == 2);
}

TEST_CASE("kvsim validate on a vLLM benchmark JSON regenerates the client's arrivals",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  const std::string run =
      write_temp_file(dir, "serving.json",
                      R"({"request_rate": 2.0, "burstiness": 1.0, "duration": 3.0,
          "input_lens": [13, 25], "output_lens": [3, 2],
          "ttfts": [0.05, 0.04], "itls": [[0.02, 0.03], [0.025]], "errors": ["", ""]})");
  const auto r = run_kvsim(
      {"validate", "--run", run, "--model", "llama-3-8b", "--gpu", "h100-sxm", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["inputs"]["run_format"] == "vllm-benchmark");
  CHECK(doc["inputs"]["arrivals"].get<std::string>().find("regenerated") == 0);
  CHECK(doc["metrics"]["itl_s"]["real"]["count"] == 3);
  CHECK(doc["metrics"]["itl_s"]["real"]["mean"].get<double>() == Approx(0.025));
  CHECK(doc["inputs"]["serving"]["engine"] == "vllm-v1");
}

TEST_CASE("kvsim validate --warm-prefix-cache: the replayed prompts start cached",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  const std::string exp = write_temp_file(dir, "vllm-3-2.exp", kExp);
  const std::vector<std::string> base = {"validate", "--run",     exp,        "--model", "opt-13b",
                                         "--gpu",    "a100-80gb", "--format", "json"};
  const auto cold = run_kvsim(base);
  std::vector<std::string> args = base;
  args.push_back("--warm-prefix-cache");
  const auto warm = run_kvsim(args);
  REQUIRE(cold.exit_code == 0);
  REQUIRE(warm.exit_code == 0);
  const Json c = Json::parse(cold.out), w = Json::parse(warm.out);
  CHECK(w["inputs"]["serving"]["warm_prefix_cache"] == true);
  CHECK_FALSE(c["inputs"]["serving"].contains("warm_prefix_cache"));
  // Every prompt's full 16-token blocks are cached (64, 32 and 128 tokens: all but the last
  // block's last token), so each prefill is cheaper; decode is not.
  CHECK(w["metrics"]["ttft_s"]["simulated"]["mean"].get<double>() <
        c["metrics"]["ttft_s"]["simulated"]["mean"].get<double>());
  // V0 (no prefix caching asked for) refuses a warm cache, at the flag.
  args.insert(args.end(), {"--engine", "v0"});
  const auto v0 = run_kvsim(args);
  CHECK(v0.exit_code == 2);
  CHECK(v0.err.find("--warm-prefix-cache: a warm prefix cache needs prefix caching") !=
        std::string::npos);
}

TEST_CASE("kvsim validate on an inference-perf stage summary compares the client's statistics",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  const std::string stage = write_temp_file(dir, "stage_0_lifecycle_metrics.json", R"({
    "load_summary": {"count": 12, "send_duration": 5.5, "requested_rate": 2.0},
    "successes": {"count": 12,
      "latency": {
        "request_latency": {"mean": 0.5, "median": 0.48, "p90": 0.6, "p99": 0.7},
        "time_to_first_token": {"mean": 0.03, "median": 0.029, "p90": 0.04, "p99": 0.05},
        "time_per_output_token": {"mean": 0.007, "median": 0.0069, "p90": 0.008, "p99": 0.009}},
      "throughput": {"output_tokens_per_sec": 120.0, "requests_per_sec": 2.0},
      "prompt_len": {"min": 100.0, "median": 120.0, "max": 140.0},
      "output_len": {"min": 50.0, "median": 60.0, "max": 70.0}},
    "failures": {"count": 0}})");
  const std::vector<std::string> base = {
      "validate", "--run", stage, "--model", "llama-3-8b", "--gpu", "h100-sxm", "--format", "json"};
  const auto r = run_kvsim(base);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["inputs"]["run_format"] == "inference-perf");
  CHECK(doc["inputs"]["real_metrics"] == "summary");
  CHECK(doc["inputs"]["requests"] == 12);
  CHECK(doc["inputs"]["request_rate"] == 2.0);
  CHECK(doc["inputs"]["concurrency"].is_null());
  CHECK(doc["inputs"]["arrivals"].get<std::string>().find("regenerated: 12 requests, constant") ==
        0);
  const Json& e2e = doc["metrics"]["e2e_s"];
  CHECK(e2e["real"]["count"] == 12);
  CHECK(e2e["real"]["p50"] == 0.48);
  CHECK(e2e["simulated"]["count"] == 12);
  CHECK(doc["metrics"]["itl_s"]["real"].is_null());  // not in this summary
  CHECK(doc["throughput"]["real"]["requests_per_s"] == 2.0);
  CHECK(doc["simulated_requests"]["completed"] == 12);

  // The client's cap on outstanding requests, which the summary does not record.
  std::vector<std::string> capped = base;
  capped.insert(capped.end(), {"--max-concurrency", "1", "--run-arrival", "poisson"});
  const auto c = run_kvsim(capped);
  REQUIRE(c.exit_code == 0);
  const Json cd = Json::parse(c.out);
  CHECK(cd["inputs"]["concurrency"] == 1);
  CHECK(cd["inputs"]["arrivals"].get<std::string>().find("Poisson at 2 req/s") !=
        std::string::npos);

  // Other workload flags stay refused; --run-stage belongs to the per-request report;
  // calibrate cannot fit a summary.
  std::vector<std::string> rate = base;
  rate.insert(rate.end(), {"--rate", "3"});
  CHECK(run_kvsim(rate).exit_code == 2);
  std::vector<std::string> staged = base;
  staged.insert(staged.end(), {"--run-stage", "0"});
  const auto s = run_kvsim(staged);
  CHECK(s.exit_code == 2);
  CHECK(s.err.find("--run-stage picks a stage of a per-request report") != std::string::npos);
  std::vector<std::string> sides = base;
  sides.insert(sides.end(), {"--side-by-side", dir + "/sides.csv"});
  const auto sb = run_kvsim(sides);
  CHECK(sb.exit_code == 2);
  CHECK(sb.err.find("--side-by-side: the run reports a summary, not each request's timings") !=
        std::string::npos);
  const auto cal = run_kvsim({"calibrate", "--from-run", stage, "--model", "llama-3-8b", "--gpu",
                              "h100-sxm", "--format", "json"});
  CHECK(cal.exit_code == 2);
  CHECK(cal.err.find("has no per-request timings to fit") != std::string::npos);
  const std::string exp = write_temp_file(dir, "ok.exp", kExp);
  const auto arrival = run_kvsim({"validate", "--run", exp, "--model", "opt-13b", "--gpu",
                                  "a100-80gb", "--run-arrival", "poisson"});
  CHECK(arrival.exit_code == 2);
  CHECK(arrival.err.find("--run-arrival: only an inference-perf stage summary") !=
        std::string::npos);
}

TEST_CASE("kvsim validate --prompt-pool, --shared-prefix-*: what the run's prompts shared",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  // Eight 512-token prompts, 0.2 s apart: distinct, they are all prefilled; from a pool of two
  // behind one 256-token system prompt, six of them hit the prefix cache whole.
  std::string records = "[";
  for (int i = 0; i < 8; ++i) {
    const double t = 0.2 * i;
    records += std::string(i ? "," : "") + R"({"start_time": )" + std::to_string(t) +
               R"(, "end_time": )" + std::to_string(t + 0.1) +
               R"(, "info": {"input_tokens": 512, "output_tokens": 2, "output_token_times": [)" +
               std::to_string(t + 0.05) + ", " + std::to_string(t + 0.06) + "]}}";
  }
  const std::string run = write_temp_file(dir, "per_request_lifecycle_metrics.json", records + "]");
  const std::vector<std::string> base = {
      "validate", "--run", run, "--model", "llama-3-8b", "--gpu", "h100-sxm", "--format", "json"};
  const auto distinct = run_kvsim(base);
  REQUIRE(distinct.exit_code == 0);
  const Json d = Json::parse(distinct.out);
  CHECK(d["inputs"]["prompts"] == "distinct");
  CHECK(d["inputs"]["real_metrics"] == "per request");
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--prompt-pool", "2", "--shared-prefix-prompts", "1",
                           "--shared-prefix-tokens", "256"});
  const auto pooled = run_kvsim(args);
  REQUIRE(pooled.exit_code == 0);
  const Json p = Json::parse(pooled.out);
  CHECK(p["inputs"]["prompts"] == "a pool of 2 prompts, 1 shared system prompt of 256 tokens");
  CHECK(p["metrics"]["ttft_s"]["simulated"]["mean"].get<double>() <
        d["metrics"]["ttft_s"]["simulated"]["mean"].get<double>());
  // A system prompt needs its length; the fraction flag is the generator's, not the replay's.
  std::vector<std::string> bare = base;
  bare.insert(bare.end(), {"--shared-prefix-prompts", "3"});
  const auto b = run_kvsim(bare);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find("--shared-prefix-prompts: needs --shared-prefix-tokens") != std::string::npos);
  std::vector<std::string> fraction = base;
  fraction.insert(fraction.end(), {"--shared-prefix-fraction", "0.5"});
  CHECK(run_kvsim(fraction).exit_code == 2);
}

TEST_CASE("kvsim validate --multi-turn-chat: a turn finds its conversation's last answer cached",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  // Two conversations of three turns, one request every 0.5 s: turn k's prompt is 512 tokens
  // and k × (48 answer + 64 question) more.
  std::string records = "[";
  for (int i = 0; i < 6; ++i) {
    const double t = 0.5 * i;
    const int prompt = 512 + (i / 2) * (48 + 64);
    records += std::string(i ? "," : "") + R"({"start_time": )" + std::to_string(t) +
               R"(, "end_time": )" + std::to_string(t + 0.3) + R"(, "info": {"input_tokens": )" +
               std::to_string(prompt) + R"(, "output_tokens": 48, "output_token_times": [)" +
               std::to_string(t + 0.05) + ", " + std::to_string(t + 0.3) + "]}}";
  }
  const std::string run = write_temp_file(dir, "per_request_lifecycle_metrics.json", records + "]");
  const std::vector<std::string> base = {"validate",   "--run",         run,        "--model",
                                         "llama-3-8b", "--gpu",         "h100-sxm", "--format",
                                         "json",       "--prompt-pool", "2"};
  const auto turns = run_kvsim(base);
  REQUIRE(turns.exit_code == 0);
  std::vector<std::string> args = base;
  args.push_back("--multi-turn-chat");
  const auto chat = run_kvsim(args);
  REQUIRE(chat.exit_code == 0);
  const Json t = Json::parse(turns.out);
  const Json c = Json::parse(chat.out);
  CHECK(c["inputs"]["prompts"] ==
        "a pool of 2 prompts, each prompt a turn of its conversation, sent once the turn before it "
        "has its answer (multi-turn chat)");
  // Turns 2 and 3 no longer prefill the previous answer.
  CHECK(c["metrics"]["ttft_s"]["simulated"]["mean"].get<double>() <
        t["metrics"]["ttft_s"]["simulated"]["mean"].get<double>());
  // A turn due before its conversation's previous turn has its answer waits for it (the chat
  // client sends it then): the four requests, 10 ms apart, as two conversations of two turns.
  std::string quick = "[";
  for (int i = 0; i < 4; ++i) {
    const double t = 0.01 * i;
    quick += std::string(i ? "," : "") + R"({"start_time": )" + std::to_string(t) +
             R"(, "end_time": )" + std::to_string(t + 0.3) +
             R"(, "info": {"input_tokens": 512, "output_tokens": 48, "output_token_times": [)" +
             std::to_string(t + 0.05) + ", " + std::to_string(t + 0.3) + "]}}";
  }
  const std::string fast = write_temp_file(dir, "quick_lifecycle_metrics.json", quick + "]");
  const std::string log = dir + "/requests.csv";
  REQUIRE(run_kvsim({"validate", "--run", fast, "--model", "llama-3-8b", "--gpu", "h100-sxm",
                     "--prompt-pool", "2", "--multi-turn-chat", "--requests", log})
              .exit_code == 0);
  const auto rows = csv_rows(kvsim::test::slurp(log));
  REQUIRE(rows.size() == 4);
  for (const std::size_t first : {0, 1}) {  // turn 1 of each conversation
    const auto& one = row_with_id(rows, first);
    const auto& two = row_with_id(rows, first + 2);
    CHECK(std::stod(one.at("arrival_s")) == Approx(0.01 * static_cast<double>(first)));
    const double sent = std::stod(two.at("arrival_s"));
    const double answered = std::stod(one.at("finish_s"));
    CHECK(sent > answered);
    CHECK(sent - answered < 2e-9);  // 1 ns after
  }
  // Conversations need their pool.
  const auto bare = run_kvsim({"validate", "--run", run, "--model", "llama-3-8b", "--gpu",
                               "h100-sxm", "--multi-turn-chat"});
  CHECK(bare.exit_code == 2);
  CHECK(bare.err.find("--multi-turn-chat: needs the conversations") != std::string::npos);
}

TEST_CASE("kvsim validate --run-config: the inference-perf client's settings from its config",
          "[cli][validate]") {
  const std::string dir = temp_dir();
  const std::string stage = write_temp_file(dir, "stage_0_lifecycle_metrics.json", R"({
    "load_summary": {"count": 6, "send_duration": 5.0, "requested_rate": 1.2},
    "successes": {"count": 6,
      "latency": {"request_latency": {"mean": 0.5, "median": 0.48, "p90": 0.6, "p99": 0.7}},
      "prompt_len": {"min": 180.0, "max": 200.0}, "output_len": {"min": 10.0, "max": 20.0}}})");
  const std::string config = write_temp_file(dir, "config.yaml", R"(data:
  type: shared_prefix
  shared_prefix: {num_unique_system_prompts: 2, num_users_per_system_prompt: 3,
                  system_prompt_len: 128}
load: {type: poisson, num_workers: 2, worker_max_concurrency: 2}
)");
  const std::vector<std::string> base = {
      "validate", "--run", stage, "--model", "llama-3-8b", "--gpu", "h100-sxm", "--format", "json"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--run-config", config});
  const auto r = run_kvsim(args);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  const std::string arrivals = doc["inputs"]["arrivals"];
  CHECK(arrivals.find("Poisson at 1.2 req/s") != std::string::npos);
  CHECK(arrivals.find("at most 4 outstanding (load.num_workers × load.worker_max_concurrency)") !=
        std::string::npos);
  CHECK(doc["inputs"]["concurrency"] == 4);
  CHECK(doc["inputs"]["prompts"] == "a pool of 6 prompts, 2 shared system prompts of 128 tokens");
  // Flags given win over the config.
  args.insert(args.end(), {"--max-concurrency", "3", "--run-arrival", "constant"});
  const Json flagged = Json::parse(run_kvsim(args).out);
  CHECK(flagged["inputs"]["concurrency"] == 3);
  CHECK(flagged["inputs"]["arrivals"].get<std::string>().find("constant at 1.2") !=
        std::string::npos);
  // A config of another load cannot regenerate a stage; another run's format has no config.
  const std::string replay = write_temp_file(dir, "replay.yaml", "load: {type: trace_replay}\n");
  std::vector<std::string> trace_replay = base;
  trace_replay.insert(trace_replay.end(), {"--run-config", replay});
  const auto t = run_kvsim(trace_replay);
  CHECK(t.exit_code == 2);
  CHECK(t.err.find("--run-config: load.type trace_replay") != std::string::npos);
  const std::string exp = write_temp_file(dir, "ok.exp", kExp);
  const auto e = run_kvsim({"validate", "--run", exp, "--model", "opt-13b", "--gpu", "a100-80gb",
                            "--run-config", config});
  CHECK(e.exit_code == 2);
  CHECK(e.err.find("--run-config: an inference-perf configuration goes with an inference-perf "
                   "report; this run is distserve") != std::string::npos);
}
