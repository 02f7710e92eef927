#include <algorithm>

#include <catch2/catch.hpp>

#include "test_util.h"
#include "trace/replay_run.h"

using kvsim::test::error_of;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
namespace trace = kvsim::trace;

namespace {

// A stage summary as inference-perf writes it (statistics in seconds), with the given load.
std::string stage_summary(const std::string& load) {
  return R"({"load_summary": {)" + load + R"(},
    "successes": {"count": 9,
      "latency": {
        "request_latency": {"mean": 0.5, "min": 0.4, "p10": 0.42, "median": 0.48, "p90": 0.6,
                            "p99": 0.7, "max": 0.71},
        "time_to_first_token": {"mean": 0.03, "median": 0.029, "p90": 0.04, "p99": 0.05},
        "time_per_output_token": {"mean": 0.007, "median": 0.0069, "p90": 0.008, "p99": 0.009},
        "inter_token_latency": {"mean": 0.007, "median": 0.0068, "p90": 0.0081, "p99": 0.0095}},
      "throughput": {"input_tokens_per_sec": 200.0, "output_tokens_per_sec": 62.5,
                     "total_tokens_per_sec": 262.5, "requests_per_sec": 0.9},
      "prompt_len": {"mean": 200, "min": 190.0, "p0.1": 190.1, "p25": 198.0, "median": 200.0,
                     "p75": 203.0, "p99.9": 209.9, "max": 210.0},
      "output_len": {"mean": 62, "min": 40.0, "p10": 57.0, "median": 64.0, "p90": 65.0,
                     "max": 66.0}},
    "failures": {"count": 1, "request_latency": null, "prompt_len": null}})";
}

}  // namespace

TEST_CASE("inference-perf per-request report: send times, server counts and token times",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  // Older layout (counts and token times at the top of info) and newer one (request_metrics,
  // response_metrics with the server's usage), one failed record, texts that are skipped.
  const std::string path = write_temp_file(dir, "per_request_lifecycle_metrics.json", R"([
    {"stage_id": 1, "start_time": 101.5, "end_time": 101.9, "request": "a long prompt text",
     "response": "the answer", "info": {"input_tokens": 12, "output_tokens": 4,
     "output_token_times": [101.6, 101.7, 101.8, 101.85]}, "error": null},
    {"stage_id": 0, "scheduled_time": 100.0, "start_time": 100.0, "end_time": 100.3,
     "request_data": "{\"prompt\": \"x\"}", "response_data": "y",
     "info": {"request_metrics": {"text": {"input_tokens": 30}},
              "response_metrics": {"output_tokens": 99, "server_usage":
                {"prompt_tokens": 33, "completion_tokens": 3},
                "response_chunks": ["a", "b", "c"], "chunk_times": [1, 2, 3],
                "output_token_times": [100.1, 100.2, 100.25]},
              "input_tokens": 30},
     "error": null},
    {"stage_id": 1, "start_time": 102.0, "end_time": 102.5,
     "info": {"input_tokens": 7, "output_tokens": 0, "output_token_times": []},
     "error": {"error_type": "ServerError", "error_msg": "503"}}
  ])");
  REQUIRE(trace::detect_run_format(path) == trace::RunFormat::kInferencePerf);
  const trace::RealRun run = trace::read_inference_perf_json(path, {});
  CHECK(run.format == trace::RunFormat::kInferencePerf);
  CHECK(run.arrivals == "recorded (inference-perf start_time)");
  CHECK_FALSE(run.summary);
  CHECK(run.concurrency == 0);
  REQUIRE(run.requests.size() == 3);
  const trace::RealRequest& a = run.requests[0];  // the stage-0 record, sent first
  CHECK(a.arrival_s == 0.0);
  CHECK(a.prompt_tokens == 33);  // the server's usage, not the client's 30
  CHECK(a.output_tokens == 3);   // the server's, not the client's re-tokenized 99
  CHECK(a.ttft_s == Approx(0.1));
  CHECK(a.e2e_s == Approx(0.3));
  CHECK(a.tpot_s == Approx(0.075));  // (100.25 - 100.1) over 2 gaps
  REQUIRE(a.itl_s.size() == 2);
  CHECK(a.itl_s[1] == Approx(0.05));
  const trace::RealRequest& b = run.requests[1];
  CHECK(b.arrival_s == Approx(1.5));
  CHECK(b.prompt_tokens == 12);
  CHECK(b.output_tokens == 4);
  CHECK(b.ttft_s == Approx(0.1));
  CHECK(b.tpot_s == Approx(0.25 / 3));
  CHECK(b.itl_s.size() == 3);
  const trace::RealRequest& c = run.requests[2];  // failed: arrives, not measured
  CHECK(c.failed);
  CHECK(c.prompt_tokens == 7);
  CHECK(c.output_tokens == 1);
  CHECK(c.ttft_s < 0);
  CHECK(run.duration_s == Approx(1.9));

  trace::InferencePerfOptions stage1;
  stage1.stage = 1;
  const trace::RealRun one = trace::read_inference_perf_json(path, stage1);
  REQUIRE(one.requests.size() == 2);
  CHECK(one.requests[0].prompt_tokens == 12);
  CHECK(one.requests[0].arrival_s == 0.0);
  CHECK(one.requests[1].arrival_s == Approx(0.5));
  CHECK(one.arrivals == "recorded (inference-perf start_time), stage 1");
  trace::InferencePerfOptions stage7;
  stage7.stage = 7;
  CHECK(error_of([&] { trace::read_inference_perf_json(path, stage7); }) ==
        path + ": stage_id: no request of stage 7 (stages: 0, 1)");
}

TEST_CASE("inference-perf per-request report: one token time per chunk is not per-token ITL",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  // 5 tokens, 3 chunk times: TTFT and TPOT as inference-perf computes them, no per-token gaps.
  const std::string path = write_temp_file(dir, "per_request_lifecycle_metrics.json", R"([
    {"start_time": 5.0, "end_time": 5.5, "info": {"input_tokens": 9, "output_tokens": 5,
     "output_token_times": [5.1, 5.3, 5.5]}, "error": null}])");
  const trace::RealRun run = trace::read_inference_perf_json(path, {});
  REQUIRE(run.requests.size() == 1);
  CHECK(run.requests[0].tpot_s == Approx(0.1));  // (5.5 - 5.1) / 4
  CHECK(run.requests[0].itl_s.empty());
}

TEST_CASE("inference-perf per-request report: bad records are located", "[trace][replay]") {
  const std::string dir = temp_dir();
  const auto error = [&](const std::string& body) {
    const std::string path = write_temp_file(dir, "per_request_lifecycle_metrics.json", body);
    const std::string e = error_of([&] { trace::read_inference_perf_json(path, {}); });
    return e.substr(path.size());
  };
  CHECK(error(R"([{"end_time": 1, "info": {}}])") == ": [0].start_time: missing field");
  CHECK(error(R"([{"start_time": 2, "end_time": 1, "info": {}}])") ==
        ": [0].end_time: before start_time");
  CHECK(error(R"([{"start_time": 1, "end_time": 2, "info": {"output_tokens": 2}}])") ==
        ": [0].info.input_tokens: missing token count");
  CHECK(error(R"([{"start_time": 1, "end_time": 2, "info": {"input_tokens": 2.5}}])") ==
        ": [0].info.input_tokens: expected a whole number of tokens");
  CHECK(error(R"([{"start_time": 1, "end_time": 2, "info": {"input_tokens": 2,
      "output_token_times": [1.5, 1.2]}}])") ==
        ": [0].info.output_token_times: expected non-decreasing times");
  CHECK(error(R"([{"start_time": 1, "end_time": 2, "info": {"input_tokens": 2,
      "output_token_times": [0.5]}}])") ==
        ": [0].info.output_token_times: expected token times between start_time and end_time");
  CHECK(error("[{\"start_time\": 1,\n \"end_time\": }]") == ":2:14: malformed JSON");
  CHECK(error(R"({"something": 1})") ==
        ":1:1: expected an inference-perf lifecycle report: a list of request records "
        "(per_request_lifecycle_metrics.json) or a stage summary with load_summary");
}

TEST_CASE("inference-perf stage summary: the workload regenerated, the client's statistics",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path =
      write_temp_file(dir, "stage_0_lifecycle_metrics.json",
                      stage_summary(R"("count": 10, "send_duration": 9.0, "requested_rate": 1.0,
                       "achieved_rate": 1.1)"));
  REQUIRE(trace::detect_run_format(path) == trace::RunFormat::kInferencePerf);
  const trace::RealRun run = trace::read_inference_perf_json(path, {});
  REQUIRE(run.requests.size() == 10);
  REQUIRE(run.summary);
  CHECK(run.request_rate == 1.0);
  CHECK(run.concurrency == 0);
  CHECK(run.duration_s == 9.0);
  CHECK(run.arrivals ==
        "regenerated: 10 requests, constant at 1 req/s (inference-perf requested_rate); lengths "
        "drawn from the stage's prompt_len/output_len percentiles, seed 0");
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const trace::RealRequest& r = run.requests[i];
    CHECK(r.arrival_s == Approx(static_cast<double>(i)));  // evenly spaced, as constant load
    CHECK(r.prompt_tokens >= 190);
    CHECK(r.prompt_tokens <= 210);
    CHECK(r.output_tokens >= 40);
    CHECK(r.output_tokens <= 66);
    CHECK(r.ttft_s < 0);  // no per-request latencies
  }
  const trace::RealSummary& s = *run.summary;
  CHECK(s.completed == 9);
  REQUIRE(s.e2e);
  CHECK(s.e2e->count == 9);
  CHECK(s.e2e->mean == 0.5);
  CHECK(s.e2e->p50 == 0.48);
  CHECK(s.e2e->p90 == 0.6);
  CHECK(s.e2e->p99 == 0.7);
  REQUIRE(s.ttft);
  CHECK(s.ttft->p50 == 0.029);
  REQUIRE(s.tpot);
  CHECK(s.tpot->mean == 0.007);
  REQUIRE(s.itl);
  CHECK(s.itl->p99 == 0.0095);
  CHECK(s.requests_per_s == 0.9);
  CHECK(s.output_tokens_per_s == 62.5);

  // The same seed draws the same lengths; another seed other ones.
  const trace::RealRun again = trace::read_inference_perf_json(path, {});
  trace::InferencePerfOptions seeded;
  seeded.seed = 7;
  const trace::RealRun other = trace::read_inference_perf_json(path, seeded);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    same = same && run.requests[i].prompt_tokens == again.requests[i].prompt_tokens &&
           run.requests[i].output_tokens == again.requests[i].output_tokens;
    differs = differs || run.requests[i].prompt_tokens != other.requests[i].prompt_tokens;
  }
  CHECK(same);
  CHECK(differs);
}

TEST_CASE("inference-perf stage summary: Poisson arrivals, lengths that follow the percentiles",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path = write_temp_file(
      dir, "stage_3_lifecycle_metrics.json",
      stage_summary(R"("count": 20000, "send_duration": 2000.0, "requested_rate": 10.0)"));
  trace::InferencePerfOptions poisson;
  poisson.poisson = true;
  const trace::RealRun run = trace::read_inference_perf_json(path, poisson);
  REQUIRE(run.requests.size() == 20000);
  CHECK(run.arrivals.find("Poisson at 10 req/s") != std::string::npos);
  CHECK(run.requests.front().arrival_s == 0.0);
  CHECK(std::is_sorted(run.requests.begin(), run.requests.end(),
                       [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; }));
  // 19,999 exponential gaps of mean 0.1 s: their mean within 5 standard errors.
  CHECK(run.requests.back().arrival_s / 19999 == Approx(0.1).margin(5 * 0.1 / std::sqrt(19999)));
  // Lengths follow the piecewise-linear quantiles, rounded: P(length <= 197) = P(v < 197.5),
  // between p0.1 (190.1) and p25 (198): 0.001 + 7.4 / 7.9 × 0.249 = 0.2342; P(length <= 199) =
  // P(v < 199.5), between p25 and the median (200): 0.25 + 1.5 / 2 × 0.25 = 0.4375. Within 4
  // standard errors of 20,000 draws.
  std::int64_t upto197 = 0, upto199 = 0;
  for (const trace::RealRequest& r : run.requests) {
    upto197 += r.prompt_tokens <= 197 ? 1 : 0;
    upto199 += r.prompt_tokens <= 199 ? 1 : 0;
  }
  CHECK(static_cast<double>(upto197) / 20000 == Approx(0.2342).margin(0.012));
  CHECK(static_cast<double>(upto199) / 20000 == Approx(0.4375).margin(0.014));
}

TEST_CASE("inference-perf stage summary: concurrent load is a closed loop; bad summaries",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string closed =
      write_temp_file(dir, "stage_1_lifecycle_metrics.json",
                      stage_summary(R"("count": 10, "send_duration": 3.0, "requested_rate": 2.5,
                       "concurrency": 4)"));
  const trace::RealRun run = trace::read_inference_perf_json(closed, {});
  CHECK(run.concurrency == 4);
  CHECK_FALSE(run.request_rate);
  CHECK(run.requests.back().arrival_s == 0.0);  // all ready at 0, sent as slots free
  CHECK(run.arrivals.find("closed loop of 4 clients") != std::string::npos);

  const auto error = [&](const std::string& load, const std::string& body = "") {
    const std::string path = write_temp_file(dir, "summary_lifecycle_metrics.json",
                                             body.empty() ? stage_summary(load) : body);
    const std::string e = error_of([&] { trace::read_inference_perf_json(path, {}); });
    return e.substr(path.size());
  };
  CHECK(error(R"("count": 10)") ==
        ": load_summary.requested_rate: missing: a summary over several stages has no rate; "
        "replay one stage_N_lifecycle_metrics.json, or the per-request report");
  CHECK(error(R"("count": 0, "requested_rate": 1)") ==
        ": load_summary.count: expected a positive number of requests, at most 5,000,000");
  CHECK(error(R"("count": 2, "requested_rate": 0)") ==
        ": load_summary.requested_rate: expected > 0");
  CHECK(error("", R"({"load_summary": {"count": 2, "requested_rate": 1}, "successes": {"count": 2,
      "prompt_len": {"min": 5, "median": 4, "max": 9}, "output_len": {"min": 1, "max": 2}}})") ==
        ": successes.prompt_len: expected percentiles that do not decrease");
  CHECK(error("", R"({"load_summary": {"count": 2, "requested_rate": 1}, "successes": {"count": 2,
      "prompt_len": {"median": 4}, "output_len": {"min": 1, "max": 2}}})") ==
        ": successes.prompt_len: expected min, max and percentiles of the lengths");
  trace::InferencePerfOptions staged;
  staged.stage = 0;
  CHECK(error_of([&] { trace::read_inference_perf_json(closed, staged); }) ==
        closed +
            ": --run-stage picks a stage of a per-request report; this is one stage's summary");
}

TEST_CASE("vLLM benchmark JSON: a recorded max_concurrency makes the replay a closed loop",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::string path = write_temp_file(dir, "bench.json", R"({"request_rate": "inf",
      "max_concurrency": 2, "input_lens": [10, 20, 30], "output_lens": [2, 2, 2],
      "ttfts": [0.1, 0.1, 0.2], "itls": [[0.01], [0.01], [0.01]], "errors": ["", "", ""]})");
  const trace::RealRun run = trace::read_vllm_benchmark_json(path, {});
  CHECK(run.concurrency == 2);
  CHECK(run.arrivals.find("at most 2 outstanding (the recorded max_concurrency)") !=
        std::string::npos);
  const std::string open = write_temp_file(dir, "open.json", R"({"request_rate": 1.0,
      "max_concurrency": null, "input_lens": [10], "output_lens": [2], "ttfts": [0.1],
      "itls": [[0.01]], "errors": [""]})");
  CHECK(trace::read_vllm_benchmark_json(open, {}).concurrency == 0);
}
