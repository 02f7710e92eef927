// report/run_inputs.cpp: the inputs{} block of a resolved scenario, in the scenario file's keys
// and units, and the one-line deployment label.
#include <string>

#include <catch2/catch.hpp>

#include "config/scenario.h"
#include "report/run_inputs.h"
#include "run/resolve.h"
#include "test_util.h"

using namespace kvsim;
using report::Json;

namespace {

run::ResolvedScenario two_requests() {
  const config::Scenario s =
      config::load_scenario(test::source_dir() + "/tests/golden/two-requests/scenario.yaml");
  return run::resolve_scenario(s);
}

}  // namespace

TEST_CASE("run inputs: model, hardware, serving, workload and seed, in that order",
          "[report][inputs]") {
  const run::ResolvedScenario r = two_requests();
  const Json in = report::inputs_json(r);
  std::vector<std::string> keys;
  for (auto it = in.begin(); it != in.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"model", "hardware", "serving", "workload", "seed"});
  CHECK(in["model"]["name"] == r.deployment.model.name);
  CHECK(in["hardware"]["name"] == r.deployment.hardware->name);
  CHECK(in["seed"] == r.seed);
  const Json& serving = in["serving"];
  CHECK(serving["allocator"] == "paged");
  CHECK(serving["watermark"] == 0.0);
  CHECK(serving["block_size"] == 16);
  CHECK(serving["max_model_len"] == 1024);
  CHECK(serving["tensor_parallel_size"] == 1);
  // The linear cost model in the scenario's own keys and units (microseconds).
  CHECK(serving["cost_model"] == Json{{"kind", "linear"},
                                      {"base_us", 1000.0},
                                      {"prefill_us_per_token", 10.0},
                                      {"decode_us_per_seq", 100.0},
                                      {"context_us_per_token", 0.0},
                                      {"swap_bytes_per_s", 25e9}});
  CHECK(report::serving_inputs_json(r) == serving);
}

TEST_CASE("run inputs: the roofline cost model and the deployment label", "[report][inputs]") {
  run::ResolvedScenario r = two_requests();
  CHECK(report::deployment_label(r) ==
        "1 × " + r.deployment.hardware->name + " per replica; paged allocator, vllm scheduler");
  r.cost.kind = cost::CostModelKind::kRoofline;
  r.sim.num_replicas = 3;
  r.deployment.tensor_parallel_size = 2;
  r.allocator = memory::AllocatorKind::kContiguousMax;
  r.sim.scheduler.kind = sim::SchedulerKind::kChunkedPrefill;
  // The scenario is engine v0: its per-sequence host overhead is named.
  CHECK(report::serving_inputs_json(r)["cost_model"] ==
        Json{{"kind", "roofline"}, {"engine_seq_overhead_us", 50.0}});
  r.cost.roofline.engine_seq_overhead_s = 0;  // engine v1
  CHECK(report::serving_inputs_json(r)["cost_model"] == Json{{"kind", "roofline"}});
  r.cost.roofline.async_scheduling = true;  // --async-scheduling is named when on
  CHECK(report::serving_inputs_json(r)["cost_model"] ==
        Json{{"kind", "roofline"}, {"async_scheduling", true}});
  r.cost.roofline.async_scheduling = false;  // engine overheads given are named too
  r.cost.roofline.step_overhead_s = 0.002;
  r.cost.roofline.context_token_overhead_s = 0.25e-6;
  CHECK(report::serving_inputs_json(r)["cost_model"] == Json{{"kind", "roofline"},
                                                             {"step_overhead_us", 2000.0},
                                                             {"context_token_overhead_us", 0.25}});
  CHECK_FALSE(report::serving_inputs_json(r).contains("frontend_latency_us"));
  r.sim.frontend_latency_ns = 8'500'000;  // the front end's latency, when not 0
  CHECK(report::serving_inputs_json(r)["frontend_latency_us"] == 8500.0);
  CHECK(report::serving_inputs_json(r)["allocator"] == "contiguous-max");
  CHECK(report::deployment_label(r) == "2 × " + r.deployment.hardware->name +
                                           " per replica, 3 replicas; contiguous-max allocator, "
                                           "chunked-prefill scheduler");
}
