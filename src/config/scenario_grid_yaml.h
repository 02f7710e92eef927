#pragma once
// Grid expansion of a YAML document, the YAML half of config/scenario_grid.h (config/ only: it
// exposes yaml-cpp). Every list in the
// document is an axis, and the grid is the Cartesian product of the axes, each point a
// single-valued document that the one-scenario parser reads as usual.
//
//   gpu: [h100-sxm, h200-sxm]        # axis "gpu"
//   tensor_parallel_size: [2, 4, 8]  # axis "tensor_parallel_size"
//   → 6 documents: (h100-sxm, 2), (h100-sxm, 4), (h100-sxm, 8), (h200-sxm, 2), ...
//
// Order is stable: axes vary like nested loops in document order, the first axis outermost.
// A list element may itself hold lists (a list of maps whose fields are lists): each element
// expands to its own sub-grid, and the axis takes the sub-grids' points one after another (its
// value at a point is then that element's single-valued text, e.g. "{synthetic: {rate: 2}}").
// Fields whose single value is a list (named in GridOptions::list_fields) are not axes; for them a
// list of lists is the axis.
//
// Points share the original document's scalar nodes, so a parser's errors still carry the
// file, line and column of the value.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "config/scenario_grid.h"

namespace kvsim::config {

struct GridOptions {
  // Dotted paths (e.g. "workload.trace_files") whose single value is a list.
  std::set<std::string> list_fields;
  // More points than this is an error (a typo like a 1000-element list should not start a
  // million simulations).
  std::int64_t max_points = 100000;
};

struct YamlGridPoint {
  YAML::Node document;          // no lists left except list_fields' values
  std::vector<AxisValue> axes;  // one per axis, in document order
};

// Expands `document` (any node; usually a map). A document without lists gives one point with
// no axes. Throws kvsim::Error located in `file` for an empty list (an empty grid) or when the
// grid exceeds max_points.
std::vector<YamlGridPoint> expand_yaml_grid(const YAML::Node& document, const std::string& file,
                                            const GridOptions& options = {});

// Number of points expand_yaml_grid would produce (saturating at INT64_MAX), without building
// them. Throws kvsim::Error for an empty list (never returns 0). Expansion is linear in the
// number of points times the document's size.
std::int64_t count_yaml_grid(const YAML::Node& document, const GridOptions& options = {});

}  // namespace kvsim::config
