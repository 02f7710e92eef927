#include <catch2/catch.hpp>

#include "test_util.h"
#include "trace/replay_run.h"

using kvsim::test::error_of;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
namespace trace = kvsim::trace;

TEST_CASE("DistServe .exp: a Python literal list of dicts, sorted by issue time",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path = write_temp_file(
      dir, "vllm-3-1.5.exp",
      "[{'prompt_len': 55, 'output_len': 4, 'issue_time': 100.5, 'first_token_time': 100.75,\n"
      "  'complete_time': 101.25, 'ttft_ms': 250.0, 'tpot_ms': 166.7, 'latency_ms': 750.0},\n"
      " {'prompt_len': 10, 'output_len': 1, 'issue_time': 100.0, 'first_token_time': 100.125,\n"
      "  'complete_time': 100.125, 'note': \"it's\", 'x': None, 'ok': True, 'l': [1, 2.5e0,],},\n"
      " {'prompt_len': 7, 'output_len': 3, 'issue_time': 102.0, 'first_token_time': 102.5,\n"
      "  'complete_time': 103.5}]\n{\n\tnum_requests: 3\n\ttest_duration_ms: 4000.0\n}\n");
  const trace::RealRun run = trace::read_distserve_exp(path);
  REQUIRE(run.requests.size() == 3);
  CHECK(run.arrivals == "recorded");
  REQUIRE(run.request_rate);
  CHECK(*run.request_rate == 1.5);
  const auto& a = run.requests[0];
  CHECK(a.arrival_s == 0.0);
  CHECK(a.prompt_tokens == 10);
  CHECK(a.ttft_s == 0.125);
  CHECK(a.tpot_s < 0);  // one output token: no TPOT
  const auto& b = run.requests[1];
  CHECK(b.arrival_s == 0.5);
  CHECK(b.ttft_s == 0.25);
  CHECK(b.e2e_s == 0.75);
  CHECK(b.tpot_s == Approx(0.5 / 3));
  const auto& c = run.requests[2];
  CHECK(c.arrival_s == 2.0);
  CHECK(c.tpot_s == 0.5);
  CHECK(run.duration_s == 4.0);  // the summary block's test_duration_ms
}

TEST_CASE("DistServe .exp: malformed input names line, column and field", "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string bad = write_temp_file(dir, "bad.exp", "[{'prompt_len': 5,\n  'output_len' 3}]");
  CHECK(error_of([&] { trace::read_distserve_exp(bad); }).find("bad.exp:2:16") !=
        std::string::npos);
  const std::string missing =
      write_temp_file(dir, "missing.exp", "[{'prompt_len': 5, 'output_len': 3}]");
  CHECK(error_of([&] { trace::read_distserve_exp(missing); }).find("[0].issue_time") !=
        std::string::npos);
  const std::string order =
      write_temp_file(dir, "order.exp",
                      "[{'prompt_len': 5, 'output_len': 3, 'issue_time': 2, 'first_token_time': 1, "
                      "'complete_time': 3}]");
  CHECK(error_of([&] { trace::read_distserve_exp(order); }).find("issue_time <=") !=
        std::string::npos);
  const std::string zero =
      write_temp_file(dir, "zero.exp",
                      "[{'prompt_len': 0, 'output_len': 3, 'issue_time': 1, 'first_token_time': 1, "
                      "'complete_time': 3}]");
  CHECK(error_of([&] { trace::read_distserve_exp(zero); }).find("prompt_len") != std::string::npos);
}

TEST_CASE("vLLM client arrivals follow numpy's RandomState(0) exponential stream",
          "[trace][replay]") {
  // np.random.seed(0); np.random.random() == 0.5488135039273248, so the first gap at 2 req/s is
  // -log(1 - 0.5488135039273248) / 2.
  const std::vector<double> t = trace::vllm_client_arrivals(3, 2.0, 1.0, 0);
  REQUIRE(t.size() == 3);
  CHECK(t[0] == 0.0);
  CHECK(t[1] == Approx(0.397937254081555).epsilon(1e-12));
  CHECK(t[2] == Approx(1.0259026355644738).epsilon(1e-12));
  const std::vector<double> inf = trace::vllm_client_arrivals(2, HUGE_VAL, 1.0, 0);
  CHECK(inf == std::vector<double>{0.0, 0.0});
  CHECK(error_of([] { trace::vllm_client_arrivals(2, 1.0, 0.5, 0); }).find("burstiness") !=
        std::string::npos);
}

TEST_CASE(
    "vLLM benchmark_serving JSON: lengths, TTFT, every ITL, arrivals from a file or "
    "regenerated",
    "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path =
      write_temp_file(dir, "serving.json",
                      R"({"request_rate": 2.0, "burstiness": 1.0, "duration": 4.0, "completed": 2,
          "input_lens": [13, 25, 7], "output_lens": [3, 1, 2],
          "ttfts": [0.5, 0.25, 0.0], "itls": [[0.125, 0.25], [], []],
          "errors": ["", "", "timeout"]})");
  const trace::RealRun regen = trace::read_vllm_benchmark_json(path, {});
  REQUIRE(regen.requests.size() == 3);
  CHECK(regen.arrivals.find("regenerated") == 0);
  CHECK(regen.requests[1].arrival_s == Approx(0.397937254081555));
  CHECK(regen.requests[0].e2e_s == 0.875);
  CHECK(regen.requests[0].tpot_s == 0.1875);
  CHECK(regen.requests[0].itl_s == std::vector<double>{0.125, 0.25});
  CHECK(regen.requests[1].tpot_s < 0);
  CHECK(regen.requests[2].failed);
  CHECK(regen.duration_s == 4.0);

  const std::string arrivals = write_temp_file(dir, "arrivals.csv", "arrival_s\n0\n1.5\n2\n");
  const trace::RealRun file = trace::read_vllm_benchmark_json(path, {arrivals, 0});
  CHECK(file.arrivals == "file " + arrivals);
  CHECK(file.requests[1].arrival_s == 1.5);
  const std::string short_file = write_temp_file(dir, "short.csv", "0\n1\n");
  CHECK(error_of([&] {
          trace::read_vllm_benchmark_json(path, {short_file, 0});
        }).find("expected 3 arrivals") != std::string::npos);
  const std::string bad = write_temp_file(dir, "bad.json", R"({"input_lens": [1]})");
  CHECK(error_of([&] { trace::read_vllm_benchmark_json(bad, {}); }).find("output_lens") !=
        std::string::npos);
}

TEST_CASE("requests.jsonl: arrival, lengths, first-token and end times per line",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path = write_temp_file(
      dir, "requests.jsonl",
      "{\"arrival_time_s\": 10.0, \"input_tokens\": 100, \"output_tokens\": 5, "
      "\"first_token_time\": 10.5, \"end_time\": 11.5}\n\n"
      "{\"arrival_time_ms\": 9500, \"prompt_tokens\": 50, \"output_tokens\": 2, \"ttft_s\": 0.25, "
      "\"latency_s\": 0.75}\n");
  const trace::RealRun run = trace::read_requests_jsonl(path);
  REQUIRE(run.requests.size() == 2);
  CHECK(run.requests[0].prompt_tokens == 50);
  CHECK(run.requests[0].arrival_s == 0.0);
  CHECK(run.requests[0].tpot_s == 0.5);
  CHECK(run.requests[1].arrival_s == 0.5);
  CHECK(run.requests[1].ttft_s == 0.5);
  CHECK(run.requests[1].tpot_s == 0.25);
  const std::string bad = write_temp_file(dir, "bad.jsonl", "{\"input_tokens\": 3}\n");
  CHECK(error_of([&] { trace::read_requests_jsonl(bad); }).find("bad.jsonl:1:1: arrival") !=
        std::string::npos);
  const std::string broken =
      write_temp_file(dir, "broken.jsonl",
                      "{\"arrival_s\": 0, \"input_tokens\": 1, \"output_tokens\": 1}\n{\"a\": }\n");
  CHECK(error_of([&] { trace::read_requests_jsonl(broken); }).find("broken.jsonl:2:") !=
        std::string::npos);
}

TEST_CASE("run formats by name and by file extension", "[trace][replay]") {
  CHECK(trace::parse_run_format("distserve") == trace::RunFormat::kDistServe);
  CHECK_FALSE(trace::parse_run_format("csv"));
  CHECK(trace::detect_run_format("a/vllm-100-1.exp") == trace::RunFormat::kDistServe);
  CHECK(trace::detect_run_format("r.jsonl") == trace::RunFormat::kRequestsJsonl);
  CHECK(trace::detect_run_format("run/profile_export.jsonl") == trace::RunFormat::kAiperf);
  CHECK(trace::parse_run_format("aiperf") == trace::RunFormat::kAiperf);
  CHECK(trace::run_format_names().size() == 5);
  CHECK(trace::parse_run_format("inference-perf") == trace::RunFormat::kInferencePerf);
  CHECK(trace::detect_run_format("results/stage_2_lifecycle_metrics.json") ==
        trace::RunFormat::kInferencePerf);
  CHECK(trace::detect_run_format("r.json") == trace::RunFormat::kVllmBenchmark);
  CHECK_FALSE(trace::detect_run_format("r.txt"));
}
