// run/run.cpp: one run of a resolved scenario with typed results.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"
#include "config/settings.h"
#include "run/resolve.h"
#include "run/run.h"
#include "test_util.h"

using kvsim::Error;
using kvsim::config::Scenario;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

}  // namespace

TEST_CASE("run::run returns the simulation with its reader stats and KV analysis", "[run]") {
  const Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  CHECK(out.reader_stats.rows_read == 2);
  CHECK(out.replica_capacity_bytes > 0);
  CHECK(out.kv.bytes_per_token > 0);
}

TEST_CASE(
    "Disaggregated serving with pipelined decode instances runs; the prefill pool is not "
    "staged",
    "[run][disagg][pp]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.model = "opt-13b";
  s.deployment.gpu = "a100-80gb";
  s.cost.kind = kvsim::cost::CostModelKind::kRoofline;  // stages split the model's layers
  s.deployment.pipeline_parallel_size = 2;
  s.deployment.prefill_tensor_parallel_size = 2;
  s.sim.num_prefill_replicas = 1;
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK_FALSE(r.not_modelled().has_value());
  // 1 prefill instance of TP 2 and 1 decode instance of TP 1 x PP 2.
  CHECK(r.deployment.disaggregated_gpus(1, 1) == 4);
  CHECK(r.prefill_deployment_inputs().pipeline_parallel_size == 1);
  CHECK(r.deployment_inputs().pipeline_parallel_size == 2);
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  CHECK(out.result.metrics.kv_transfer.count() == 2);
}
