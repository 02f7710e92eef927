#include <catch2/catch.hpp>

#include "report/plan_report.h"

using namespace kvsim;
using report::Json;

namespace {

// A record as the runner stores it, with just what the report reads.
plan::DeploymentRecord record_json(const Json& r) {
  return plan::record_from_json(r, "test record");
}

plan::DeploymentRecord record(const std::string& status, double max_rate, double tokens_per_s,
                              double per_user, const std::string& limiting = "tpot_p99") {
  if (status == "does_not_fit") return record_json(plan::to_json(plan::error_record("too big")));
  Json r;
  r["status"] = status;
  r["error"] = nullptr;
  r["base_rate_rps"] = 2.0;
  r["num_requests"] = 1001;
  r["max_rate_rps"] = max_rate;
  r["limiting_slo"] = status == "found" ? Json(limiting) : Json();
  r["fail_rate_rps"] = status == "found" ? Json(max_rate * 1.01) : Json();
  r["converged"] = true;
  r["probes"] = Json::array();
  r["at_max"] =
      Json{{"rate_rps", max_rate},
           {"attainment", 1.0},
           {"per_user_tokens_per_s", per_user},
           {"observed", {{"tpot_p99", 0.09}}},
           {"metrics", {{"output_tokens_per_s", tokens_per_s}, {"e2e_s", {{"mean", 10.0}}}}},
           {"memory", Json::object()}};
  r["above"] = nullptr;
  return record_json(r);
}

report::PlanPoint point(const std::string& gpu, std::int64_t tp, double price) {
  report::PlanPoint p;
  p.axes = {{"gpu", gpu}, {"tensor_parallel_size", std::to_string(tp)}, {"block_size", "16"}};
  p.label = "m on " + std::to_string(tp) + " × " + gpu;
  p.inputs = Json::object();
  p.slo.tpot_ns = 100'000'000;
  p.gpus_per_replica = tp;
  p.gpu_price_per_hour = price;
  return p;
}

}  // namespace

TEST_CASE("plan report: sizing, ranking, Pareto front and best", "[plan][report]") {
  const std::vector<report::PlanPoint> points = {point("h100", 4, 3.0), point("a100", 8, 2.0),
                                                 point("h200", 2, 4.0), point("l4", 1, 0.5)};
  const std::vector<plan::DeploymentRecord> records = {
      record("found", 6.0, 2400, 20), record("found", 3.0, 1600, 30),
      record("capped", 10.0, 2000, 15), record("does_not_fit", 0, 0, 0)};
  report::PlanReportSettings settings;
  settings.target_rate_rps = 12.0;
  const Json doc = report::plan_json(settings, points, records);
  CHECK(doc["schema"] == "kvsim.plan/v1");
  CHECK(doc["settings"]["axes"] == Json::array({"gpu", "tensor_parallel_size"}));  // block fixed
  const Json& d = doc["deployments"];
  REQUIRE(d.size() == 4);
  // h100 TP4: 6 rps per replica → 2 replicas, 8 GPUs, $24/h; 2400 tok/s over 4 GPUs.
  CHECK(d[0]["replicas_needed"] == 2);
  CHECK(d[0]["gpus"] == 8);
  CHECK(d[0]["cost_per_hour"] == 24.0);
  CHECK(d[0]["throughput_per_gpu"] == 600.0);
  CHECK(d[0]["arrival_span_s"] == Approx(1000.0 / 6.0));
  CHECK(d[0]["steady_state_ratio"] == Approx(1000.0 / 6.0 / 10.0));
  // a100 TP8: 4 replicas, 32 GPUs, $64/h. h200 TP2: 2 replicas, 4 GPUs, $16/h. l4: none.
  CHECK(d[1]["cost_per_hour"] == 64.0);
  CHECK(d[2]["gpus"] == 4);
  CHECK(d[2]["cost_per_hour"] == 16.0);
  CHECK(d[3]["status"] == "does_not_fit");
  CHECK(d[3]["replicas_needed"] == 0);
  CHECK(d[3]["metrics"].is_null());
  CHECK(doc["ranking"]["by_cost"] == Json::array({2, 0, 1, 3}));
  CHECK(doc["ranking"]["by_throughput_per_gpu"] == Json::array({2, 0, 1, 3}));  // 1000, 600, 200
  // (per-user, per-GPU): h100 (20, 600), a100 (30, 200), h200 (15, 1000): none dominates another.
  CHECK(doc["pareto_front"] == Json::array({2, 0, 1}));
  CHECK(doc["best"]["index"] == 2);
  CHECK(doc["best"]["cost_per_hour"] == 16.0);

  const std::string table = report::plan_table(doc);
  CHECK(table.find("sized for 12.00 req/s") != std::string::npos);
  CHECK(table.find("search cap") != std::string::npos);
  CHECK(table.find("does not fit") != std::string::npos);
  CHECK(table.find("TPOT p99") != std::string::npos);
  CHECK(table.find("Best: gpu=h200 TP=2 (m on 2 × h200): 2 replicas, 4 GPUs, $16.00/h") !=
        std::string::npos);
  const std::string csv = report::plan_csv(doc);
  CHECK(csv.rfind("index,rank_by_cost,gpu,tensor_parallel_size,label,status,", 0) == 0);
  CHECK(csv.find("\n2,1,h200,2,m on 2 × h200,capped,10.0,") != std::string::npos);
}

TEST_CASE("plan report: without a target, rank by cost per request/s", "[plan][report]") {
  const std::vector<report::PlanPoint> points = {point("h100", 4, 3.0), point("a100", 8, 2.0)};
  const std::vector<plan::DeploymentRecord> records = {record("found", 6.0, 2400, 20),
                                                       record("found", 9.0, 1600, 30)};
  const Json doc = report::plan_json({}, points, records);
  // $12/h for 6 rps = 2 $/rps-h; $16/h for 9 rps = 1.78: the a100 deployment first.
  CHECK(doc["ranking"]["by_cost"] == Json::array({1, 0}));
  CHECK(doc["deployments"][0]["replicas_needed"] == 1);
  CHECK(doc["settings"]["target_rate_rps"].is_null());
}

TEST_CASE("plan report: axis values are typed as their settings", "[plan][report]") {
  report::PlanPoint p = point("h100", 4, 3.0);
  p.axes = {{"gpu", "h100"},
            {"tensor_parallel_size", "4"},
            {"gpu_memory_utilization", "0.9"},
            {"serving.enable_prefix_caching", "true"},
            {"model", "16"},                 // a name that looks like a number
            {"workload", "{trace: a.csv}"},  // a structured list element: its flow text
            {"workload.rate", "2.5"}};       // no setting: read as its YAML scalar
  const Json doc = report::plan_json({}, {p}, {record("found", 6.0, 2400, 20)});
  const Json& axes = doc["deployments"][0]["axes"];
  CHECK(axes["gpu"] == "h100");
  CHECK(axes["tensor_parallel_size"].is_number_integer());
  CHECK(axes["tensor_parallel_size"] == 4);
  CHECK(axes["gpu_memory_utilization"].is_number_float());
  CHECK(axes["gpu_memory_utilization"] == 0.9);
  CHECK(axes["serving.enable_prefix_caching"] == true);
  CHECK(axes["model"] == "16");
  CHECK(axes["workload"] == "{trace: a.csv}");
  CHECK(axes["workload.rate"] == 2.5);
  CHECK(doc["best"]["axes"] == axes);
}

TEST_CASE("plan record: JSON round trip and a wrong record", "[plan][report]") {
  plan::DeploymentRecord r = record("found", 6.0, 2400, 20);
  r.sizing = plan::TargetSizing{12.0, 2, 3, {{2, false, "ttft_p99"}, {3, true, ""}}};
  const Json j = plan::to_json(r);
  CHECK(j["sizing"]["verified"] == true);
  CHECK(j["sizing"]["checks"][1]["limiting"].is_null());
  const plan::DeploymentRecord back = plan::record_from_json(j, "x");
  CHECK(plan::to_json(back) == j);
  CHECK(back.at_max->output_tokens_per_s == 2400);
  CHECK(back.at_max->mean_e2e_s == 10.0);
  CHECK(back.sizing->replicas_needed == 3);
  CHECK(plan::to_json(plan::error_record("too big"))["at_max"].is_null());
  Json bad = j;
  bad["max_rate_rps"] = "fast";
  CHECK_THROWS_WITH(plan::record_from_json(bad, "result of deployment 3"),
                    Catch::Contains("result of deployment 3") && Catch::Contains("max_rate_rps"));
  bad.erase("probes");
  CHECK_THROWS_WITH(plan::record_from_json(bad, "r"), Catch::Contains("'max_rate_rps'"));
}
