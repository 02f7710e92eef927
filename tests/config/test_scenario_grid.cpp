// config/scenario_grid.cpp: a sweep file (plus command-line lists) to its grid of scenarios and
// the `plan:` section, with located errors.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario_grid.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::config;
using Catch::Matchers::Contains;

namespace {

std::string sweep(const std::string& text) {
  return test::write_temp_file(test::temp_dir(), "sweep.yaml", text);
}

}  // namespace

TEST_CASE("scenario grid: lists in the file are axes; every point is a parsed scenario",
          "[config][grid]") {
  const std::string path = sweep(R"(model: llama-3-8b
gpu: [h100-sxm, a100-80gb]
tensor_parallel_size: [1, 2]
serving: {replicas: 3}
plan:
  slo: {ttft_ms: 2000, attainment: 0.9}
  target_rate: 20
  gpu_price_per_hour: {h100-sxm: 2.99, a100-80gb: 1.5}
  search: {start_rate: 2, max_probes: 12}
)");
  const ScenarioGrid g = load_scenario_grid(path, {});
  CHECK(g.source == path);
  REQUIRE(g.points.size() == 4);
  // Nested loops in document order, the first list outermost.
  CHECK(g.points[0].axes ==
        std::vector<AxisValue>{{"gpu", "h100-sxm"}, {"tensor_parallel_size", "1"}});
  CHECK(g.points[1].axes ==
        std::vector<AxisValue>{{"gpu", "h100-sxm"}, {"tensor_parallel_size", "2"}});
  CHECK(g.points[3].axes ==
        std::vector<AxisValue>{{"gpu", "a100-80gb"}, {"tensor_parallel_size", "2"}});
  CHECK(g.points[2].scenario.deployment.gpu == "a100-80gb");
  CHECK(g.points[1].scenario.deployment.tensor_parallel_size == 2);
  for (const auto& p : g.points) {
    CHECK(p.scenario.deployment.model == "llama-3-8b");
    CHECK(p.scenario.sim.num_replicas == 3);
  }
  REQUIRE(g.plan.slo);
  CHECK(g.plan.slo->ttft_ms == 2000);
  CHECK(g.plan.slo->attainment == 0.9);
  CHECK_FALSE(g.plan.slo->tpot_ms);
  CHECK(g.plan.target_rate == 20);
  CHECK(g.plan.gpu_price_per_hour ==
        std::vector<std::pair<std::string, double>>{{"h100-sxm", 2.99}, {"a100-80gb", 1.5}});
  CHECK(g.plan.search.start_rate == 2);
  CHECK(g.plan.search.max_probes == 12);
  CHECK_FALSE(g.plan.search.growth);
}

TEST_CASE("scenario grid: a flag's list replaces the field and is an axis like a list in the file",
          "[config][grid]") {
  const std::string path = sweep("model: llama-3-8b\ngpu: [h100-sxm, a100-80gb]\n");
  const ScenarioGrid g = load_scenario_grid(
      path, {{"--gpu", "gpu", {"h200-sxm"}}, {"--replicas", "serving.replicas", {"1", "2", "4"}}});
  REQUIRE(g.points.size() == 3);  // one GPU (a one-value list is a plain value) × 3 replicas
  CHECK(g.points[0].axes == std::vector<AxisValue>{{"serving.replicas", "1"}});
  CHECK(g.points[2].scenario.sim.num_replicas == 4);
  CHECK(g.points[2].scenario.deployment.gpu == "h200-sxm");
  // Without a file the flags make the whole document.
  const ScenarioGrid flags_only =
      load_scenario_grid("", {{"--model", "model", {"llama-3-8b"}}, {"--gpu", "gpu", {"l4"}}});
  CHECK(flags_only.source.empty());
  REQUIRE(flags_only.points.size() == 1);
  CHECK(flags_only.points[0].axes.empty());
  CHECK(flags_only.points[0].scenario.deployment.gpu == "l4");
}

TEST_CASE("scenario grid: oversized grids, lists under plan: and bad values are located errors",
          "[config][grid]") {
  const std::string big = sweep("model: llama-3-8b\nseed: [1, 2, 3]\nblock_size: [16, 32]\n");
  CHECK_THROWS_WITH(load_scenario_grid(big, {}, 5), Contains("sweep.yaml") && Contains("6"));
  CHECK(load_scenario_grid(big, {}, 6).points.size() == 6);
  const std::string plan_list = sweep("model: llama-3-8b\nplan:\n  target_rate: [1, 2]\n");
  CHECK_THROWS_WITH(load_scenario_grid(plan_list, {}),
                    Contains("sweep.yaml:3:16: ") && Contains("plan.target_rate"));
  const std::string bad = sweep("model: llama-3-8b\nblock_size: [16, -1]\n");
  CHECK_THROWS_WITH(load_scenario_grid(bad, {}), Contains("sweep.yaml:2:18: block_size: "));
  CHECK_THROWS_WITH(
      load_scenario_grid(sweep("model: llama-3-8b\n"), {{"--block-size", "block_size", {"x"}}}),
      Contains("--block-size"));
}
