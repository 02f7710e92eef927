// The report writer on a hand-checked run (the two-request scenario of test_simulator.cpp).
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "report/sim_report.h"
#include "report/table.h"
#include "sim/sim_test_util.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::test;
using kvsim::test::slurp;
using report::Json;

namespace {

constexpr TimeNs kMs = kNsPerMs;
constexpr TimeNs kUs = kNsPerUs;

SimRun two_requests(sim::SimOptions opts) {
  FixedCostModel cost;
  cost.per_step_ns = 1 * kMs;
  cost.per_prefill_token_ns = 10 * kUs;
  cost.per_decode_ns = 100 * kUs;
  return run_sim(opts, {}, cost, {spec(0, 0, 100, 3), spec(1, 500 * kUs, 50, 2)});
}

}  // namespace

TEST_CASE("The report carries the schema's fields with exact values", "[sim]") {
  sim::SimOptions opts = small_options();
  opts.slo.ttft_ns = 2500 * kUs;  // R0 meets it (2.0 ms), R1 does not (3.0 ms)
  opts.slo.tpot_ns = 2 * kMs;
  opts.slo.percentile = 50;
  const SimRun run = two_requests(opts);
  report::SimReportInputs inputs;
  inputs.seed = 7;
  inputs.serving = Json{{"block_size", 16}};
  report::add_sim_serving_json(inputs.serving, opts);
  const Json j = report::sim_report_json(inputs, run.result, opts.slo);

  CHECK(j["schema"] == "kvsim.report/v1");
  CHECK(j["command"] == "simulate");
  CHECK(j["inputs"]["seed"] == 7);
  CHECK(j["inputs"]["serving"]["block_size"] == 16);
  CHECK(j["inputs"]["serving"]["scheduler"] == "vllm");
  CHECK(j["inputs"]["serving"]["max_num_batched_tokens"] == 2048);
  CHECK(j["inputs"]["serving"]["slo"]["ttft_ms"] == 2.5);
  const Json& s = j["summary"];
  CHECK(s["requests_completed"] == 2);
  CHECK(s["requests_rejected"] == 0);
  CHECK(s["sim_duration_s"].get<double>() == Approx(0.0058));
  CHECK(s["throughput_rps"].get<double>() == Approx(2 / 0.0058));
  CHECK(s["output_tokens_per_s"].get<double>() == Approx(5 / 0.0058));
  CHECK(s["total_tokens_per_s"].get<double>() == Approx(155 / 0.0058));
  CHECK(s["goodput_rps"].get<double>() == Approx(1 / 0.0058));
  CHECK(s["slo_attainment"] == 0.5);
  CHECK(s["ttft_s"]["mean"].get<double>() == Approx(0.0025));
  CHECK(s["ttft_s"]["p50"].get<double>() == Approx(0.002));
  CHECK(s["ttft_s"]["p99"].get<double>() == Approx(0.003));
  CHECK(s["tpot_s"]["max"].get<double>() == Approx(0.0019));
  CHECK(s["itl_s"]["p90"].get<double>() == Approx(0.0027));
  CHECK(s["e2e_s"]["p50"].get<double>() == Approx(0.0042));
  CHECK(s["queue_s"]["max"].get<double>() == Approx(0.0015));
  for (const char* k : {"ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s", "normalized_latency_s"}) {
    for (const char* stat : {"mean", "p50", "p90", "p95", "p99", "max"}) {
      INFO(k << "." << stat);
      CHECK(s[k].contains(stat));
    }
  }
  CHECK(s["preemptions"] == 0);
  CHECK(s["max_running"] == 2);
  CHECK(s["slo"]["met"] == true);  // p50 TTFT 2.0 <= 2.5 ms, p50 TPOT 1.2 <= 2 ms
  CHECK(s["saturation"]["verdict"] == "stable");
  const Json& m = j["memory"];
  double sum = 0;
  for (const char* k : {"token_states", "reservation", "internal_fragmentation",
                        "external_fragmentation", "free"}) {
    sum += m["fraction"][k].get<double>();
  }
  CHECK(sum == Approx(1.0).epsilon(1e-12));
  CHECK(m["peak_used_bytes"] == 176000);
  CHECK(m["capacity_bytes"] == 1600000);
  CHECK(m["prefix_cache_hit_rate"] == 0.0);
  CHECK(j["replicas"].size() == 1);
  CHECK_FALSE(j.contains("timeline"));
}

TEST_CASE("Table and CSV renderings agree with the JSON", "[sim]") {
  const sim::SimOptions opts = small_options();
  const SimRun run = two_requests(opts);
  const std::string table = report::sim_report_table({}, run.result, opts.slo);
  CHECK(table.find("completed") != std::string::npos);
  CHECK(table.find("TTFT") != std::string::npos);
  CHECK(table.find("token states") != std::string::npos);
  const std::string csv = report::sim_report_csv(run.result, opts.slo);
  const auto nl = csv.find('\n');
  const std::string header = csv.substr(0, nl);
  const std::string row = csv.substr(nl + 1);
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
  CHECK(header.rfind("requests_completed,", 0) == 0);
  CHECK(row.rfind("2,0,0,", 0) == 0);
}

TEST_CASE("The timeline samples the state at evenly spaced times", "[sim]") {
  sim::SimOptions opts = small_options();
  opts.timeline_points = 100;
  const SimRun run = two_requests(opts);
  const auto& t = run.result.timeline;
  // 1 ms apart from 0 to the end (5.8 ms): 0, 1, ..., 5.
  REQUIRE(t.size() == 6);
  CHECK(run.result.timeline_interval_ns == kMs);
  CHECK(t[0].t == 0);
  CHECK(t[0].running == 1);  // R0 prefilling
  CHECK(t[1].waiting == 1);  // R1 arrived at 0.5 ms
  CHECK(t[3].running == 2);  // [2, 3.5): R1 prefills, R0 waits in the running batch
  CHECK(t[4].running == 2);  // [3.5, 4.7): both decode
  CHECK(t[4].used_bytes == 11 * 16 * 1000);
  CHECK(t[4].reserved_bytes == 3 * 1000);
  CHECK(t[4].free_bytes == (1600 - 176) * 1000);
  // The five bands split the same bytes: used = token states + reservation + internal
  // fragmentation, unallocated = external fragmentation + free.
  for (const sim::TimelinePoint& p : t) {
    CHECK(p.token_state_bytes + p.reserved_bytes + p.internal_fragmentation_bytes == p.used_bytes);
    CHECK(p.external_fragmentation_bytes <= p.free_bytes);
    CHECK(p.used_bytes + p.free_bytes == 1600 * 1000);
  }
  // Stored: R0's 100 + 1 and R1's 50 + 1 tokens; reserved: the 2 + 1 still to come inside their
  // blocks (7 + 4 of 16 slots); the rest of the 176 slots will never be written.
  CHECK(t[4].token_state_bytes == (101 + 51) * 1000);
  CHECK(t[4].internal_fragmentation_bytes == (176 - 152 - 3) * 1000);
  CHECK(t[4].external_fragmentation_bytes == 0);  // paged
  const std::string csv = report::timeline_csv(run.result);
  CHECK(csv.rfind("t_s,running,waiting,used_bytes,reserved_bytes,free_bytes,token_state_bytes,"
                  "internal_fragmentation_bytes,external_fragmentation_bytes\n0.0,1,0,",
                  0) == 0);

  // Downsampling keeps at most the asked number of points, evenly spaced.
  opts.timeline_points = 4;
  const SimRun coarse = two_requests(opts);
  CHECK(coarse.result.timeline.size() <= 4);
  CHECK(coarse.result.timeline_interval_ns == 2 * kMs);
  CHECK(coarse.result.timeline[1].t == 2 * kMs);
}

namespace {

const char* const kRequestLogHeader =
    "id,replica,state,reject_reason,prompt_tokens,output_tokens,arrival_s,first_scheduled_s,"
    "first_token_s,finish_s,queue_s,ttft_s,tpot_s,e2e_s,preemptions,cached_tokens\n";

// Runs `specs` on 1 ms steps with `options` (fake allocators) into a request log at `path`,
// committed or not; returns what is at `path` after the log is gone.
std::string logged_run(const std::string& path, const sim::SimOptions& options,
                       std::vector<trace::RequestSpec> specs, bool commit = true) {
  FixedCostModel cost;
  cost.per_step_ns = kMs;
  sim::SimSetup setup;
  setup.options = options;
  setup.cost_model = &cost;
  setup.make_allocator = [] { return std::make_unique<FakeAllocator>(FakeAllocator::Options{}); };
  {
    report::RequestLog log(path);
    VectorReader reader(std::move(specs));
    sim::simulate(setup, reader, &log);
    if (commit) log.commit();
  }
  return slurp(path);
}

}  // namespace

TEST_CASE("The request log is complete after commit, absent otherwise", "[sim]") {
  const std::string path = temp_dir() + "/requests.csv";
  sim::SimOptions options = small_options();
  options.scheduler.max_model_len = 100;
  // Not committed: nothing at `path` and no temporary left once destroyed.
  CHECK(logged_run(path, options, {spec(0, 0, 10, 3), spec(1, 0, 200, 2)}, false).empty());
  // Request 1 is rejected on arrival (prompt 200 > 100), before request 0 finishes.
  CHECK(logged_run(path, options, {spec(0, 0, 10, 3), spec(1, 0, 200, 2)}) ==
        std::string(kRequestLogHeader) +
            "1,0,rejected,prompt_too_long,200,2,0.0,,,0.0,,,,,0,0\n"
            "0,0,finished,,10,3,0.0,0.0,0.001,0.003,0.0,0.001,0.001,0.003,0,0\n");
}

TEST_CASE("The request log leaves the engine and times empty for a request never sent",
          "[report]") {
  sim::SimOptions options = small_options();
  options.max_concurrency = 1;
  options.time_limit_ns = 2 * kMs;
  // One client: request 1, due at 0, is held behind request 0 (still decoding at the limit).
  CHECK(logged_run(temp_dir() + "/requests.csv", options, {spec(0, 0, 10, 5), spec(1, 0, 20, 2)}) ==
        std::string(kRequestLogHeader) +
            "0,0,decode,,10,5,0.0,0.0,0.001,,0.0,0.001,,,0,0\n"
            "1,,waiting,,20,2,,,,,,,,,0,0\n");
}
