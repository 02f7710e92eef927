// run/resolve.h and run/run.h: a scenario resolved without touching the parsed one, errors located
// where the value came from, and one run with typed results.
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

TEST_CASE("resolve_scenario leaves the parsed scenario as it was", "[run]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  s.deployment.max_model_len = 0;  // the model's max context
  const Scenario before = s;
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  CHECK(s.deployment.max_model_len == 0);
  CHECK(s.sim.scheduler.max_model_len == before.sim.scheduler.max_model_len);
  CHECK(s.workload.synthetic.seed == before.workload.synthetic.seed);
  CHECK(r.deployment.max_model_len == r.deployment.model.max_context);
  CHECK(r.sim.scheduler.max_model_len == r.deployment.max_model_len);
  CHECK(r.sim.block_size == 16);
  CHECK(r.watermark == 0.0);
}

TEST_CASE("A resolve error is located at the scenario's YAML value", "[run]") {
  Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  kvsim::config::apply_setting(
      *kvsim::config::find_setting_by_path("serving.max_num_batched_tokens"), "10",
      {"s.yaml", 7, 27, "serving.max_num_batched_tokens"}, s);
  try {
    (void)kvsim::run::resolve_scenario(s);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("s.yaml:7:27: serving.max_num_batched_tokens: the vllm "
                                      "scheduler computes a whole prompt in one step",
                                      0) == 0);
  }
}
