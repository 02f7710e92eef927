#pragma once
// Sweep files for `kvsim plan`: a scenario YAML (config/scenario.h) in which any field may be a
// list — the grid is the Cartesian product of the lists, in a stable order (nested loops in
// document order, the first list outermost; see config/scenario_grid_yaml.h) — plus an optional
// `plan:` section with what only the planner reads:
//
//   plan:
//     slo:                      # overrides the scenario's `slo:` for planning
//       ttft_ms: 2000           # each target optional (0 = none)
//       tpot_ms: 100
//       e2e_ms: 60000
//       percentile: 99          # for every target, unless one has its own:
//       ttft_percentile: 90     # ttft_/tpot_/e2e_percentile
//       attainment: 0.95        # required fraction of requests within every target (0 = none)
//     target_rate: 20           # requests/s to size for (replicas, GPUs, cost)
//     gpu_price_per_hour: {h100-sxm: 2.99}   # overrides the GPU profiles' price_per_hour
//     search: {start_rate: 1, growth: 2, tolerance: 0.02, min_rate: 0.01, max_rate: 10000,
//              max_probes: 60}
//
// The `plan:` section holds single values (a list there is an error). Command-line overrides
// (`kvsim plan --gpu h100-sxm,h200-sxm`) replace a field of the document with their list before
// the grid is expanded, so a flag's list is an axis just like a list in the file.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/scenario.h"

namespace kvsim::config {

// The value an axis took at one grid point: its dotted path, and the value as text (a scalar's
// text; a structured list element in YAML flow style, e.g. "{trace: a.csv}").
struct AxisValue {
  std::string path;
  std::string value;
  bool operator==(const AxisValue&) const = default;
};

// A command-line list replacing one field of the sweep document.
struct GridOverride {
  std::string flag;                 // e.g. "--tensor-parallel-size" (for error messages)
  std::string path;                 // dotted YAML path, e.g. "serving.replicas"
  std::vector<std::string> values;  // one or more scalar values, as text
};

struct PlanSloSection {
  std::optional<double> ttft_ms, tpot_ms, e2e_ms;
  std::optional<double> percentile, ttft_percentile, tpot_percentile, e2e_percentile;
  std::optional<double> attainment;
};

struct PlanSearchSection {
  std::optional<double> start_rate, growth, tolerance, min_rate, max_rate;
  std::optional<std::int64_t> max_probes;
};

// The `plan:` section (every field optional).
struct PlanSection {
  std::optional<PlanSloSection> slo;
  std::optional<double> target_rate;
  std::vector<std::pair<std::string, double>> gpu_price_per_hour;  // in file order
  PlanSearchSection search;
};

struct ScenarioGridPoint {
  Scenario scenario;
  std::vector<AxisValue> axes;  // one per axis, in document order
};

struct ScenarioGrid {
  std::string source;  // the sweep file, or "" when built from flags only
  PlanSection plan;
  std::vector<ScenarioGridPoint> points;
};

// Loads `path` (empty: start from an empty document), applies `overrides` in order (each sets
// its path, creating maps on the way; a one-value list is a plain value), expands the grid and
// parses every point with the one-scenario parser. Relative trace paths resolve against the
// file's folder (the working directory without a file). Throws kvsim::Error located in the file
// (or naming the flag, for a bad override value), for a grid of more than `max_points` points,
// or for an empty list.
ScenarioGrid load_scenario_grid(const std::string& path, const std::vector<GridOverride>& overrides,
                                std::int64_t max_points = 100000);

}  // namespace kvsim::config
