#include "config/scenario_grid.h"

#include <filesystem>

#include "common/error.h"
#include "common/strings.h"
#include "config/scenario_grid_yaml.h"
#include "config/scenario_yaml.h"
#include "config/yaml_reader.h"

namespace kvsim::config {
namespace {

const char* const kCommandLine = "<command line>";

PlanSection read_plan_section(const YAML::Node& node, const std::string& file) {
  PlanSection plan;
  // Reject lists first, with the planner's own wording.
  std::vector<std::pair<YAML::Node, std::string>> stack = {{node, "plan"}};
  while (!stack.empty()) {
    auto [n, path] = stack.back();
    stack.pop_back();
    if (n.IsSequence()) {
      throw Error(node_location(n, file, path),
                  "the plan section takes single values (lists belong to the deployment fields)");
    }
    if (n.IsMap()) {
      for (const auto& kv : n) stack.emplace_back(kv.second, path + "." + kv.first.Scalar());
    }
  }
  MapReader r(node, file, "plan");
  if (auto slo = r.optional_map("slo")) {
    PlanSloSection s;
    s.ttft_ms = slo->optional_double("ttft_ms", 0.0, 1e9);
    s.tpot_ms = slo->optional_double("tpot_ms", 0.0, 1e9);
    s.e2e_ms = slo->optional_double("e2e_ms", 0.0, 1e12);
    for (auto [key, field] :
         {std::pair{"percentile", &s.percentile}, std::pair{"ttft_percentile", &s.ttft_percentile},
          std::pair{"tpot_percentile", &s.tpot_percentile},
          std::pair{"e2e_percentile", &s.e2e_percentile}}) {
      *field = slo->optional_double(key, 0.0, 100.0);
      if (*field && **field <= 0.0) throw slo->error(key, "expected a percentile in (0, 100]");
    }
    s.attainment = slo->optional_double("attainment", 0.0, 1.0);
    slo->finish();
    plan.slo = s;
  }
  plan.target_rate = r.optional_double("target_rate", 0.0, 1e9);
  if (plan.target_rate && *plan.target_rate <= 0.0) {
    throw r.error("target_rate", "expected a positive number of requests/s");
  }
  if (auto prices = r.optional_map("gpu_price_per_hour")) {
    for (const std::string& gpu : prices->keys()) {
      plan.gpu_price_per_hour.emplace_back(gpu, prices->get_double(gpu, 0.0, 1e6));
    }
    prices->finish();
  }
  if (auto search = r.optional_map("search")) {
    PlanSearchSection& s = plan.search;
    s.start_rate = search->optional_double("start_rate", 0.0, 1e12);
    s.growth = search->optional_double("growth", 1.0, 1e6);
    s.tolerance = search->optional_double("tolerance", 0.0, 1.0);
    s.min_rate = search->optional_double("min_rate", 0.0, 1e12);
    s.max_rate = search->optional_double("max_rate", 0.0, 1e12);
    s.max_probes = search->optional_int("max_probes", 2, 10000);
    search->finish();
  }
  r.finish();
  return plan;
}

// Sets `path` (dotted) in `root` to `value`, creating maps on the way.
void set_path(const YAML::Node& root, const std::string& path, const YAML::Node& value,
              const std::string& flag) {
  const std::vector<std::string_view> parts = split(path, '.');
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string key(parts[i]);
    YAML::Node child = node[key];
    if (!child.IsDefined() || child.IsNull()) {
      node[key] = YAML::Node(YAML::NodeType::Map);
      child = node[key];
    } else if (!child.IsMap()) {
      std::string message = "cannot set ";
      message.append(path).append(": the scenario's '").append(key).append("' is not a map");
      throw Error({"", 0, 0, flag}, message);
    }
    node.reset(child);
  }
  node[std::string(parts.back())] = value;
}

}  // namespace

ScenarioGrid load_scenario_grid(const std::string& path, const std::vector<GridOverride>& overrides,
                                std::int64_t max_points) {
  ScenarioGrid grid;
  grid.source = path;
  const std::string file = path.empty() ? std::string(kCommandLine) : path;
  YAML::Node root = path.empty() ? YAML::Node(YAML::NodeType::Map) : load_yaml_file(path);
  if (!root.IsMap()) {
    throw Error(node_location(root, file, ""),
                "expected a scenario (a map of fields), got " + describe_node(root));
  }
  // The plan section is the planner's; the scenario parser never sees it.
  YAML::Node doc(YAML::NodeType::Map);
  for (const auto& kv : root) {
    if (kv.first.Scalar() == "plan") {
      grid.plan = read_plan_section(kv.second, file);
    } else {
      doc.force_insert(kv.first, kv.second);
    }
  }
  for (const GridOverride& o : overrides) {
    if (o.values.empty()) throw Error({"", 0, 0, o.flag}, "expected at least one value");
    YAML::Node value;
    if (o.values.size() == 1) {
      value = YAML::Node(o.values[0]);
    } else {
      value = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& v : o.values) value.push_back(YAML::Node(v));
    }
    set_path(doc, o.path, value, o.flag);
  }

  GridOptions options;
  options.max_points = max_points;
  const std::string base_dir =
      path.empty() ? std::string(".")
                   : std::filesystem::path(path).parent_path().lexically_normal().string();
  for (YamlGridPoint& p : expand_yaml_grid(doc, file, options)) {
    ScenarioGridPoint point;
    try {
      point.scenario = parse_scenario(p.document, file, base_dir.empty() ? "." : base_dir);
    } catch (const Error& e) {
      // A value that came from a flag is reported against the flag.
      for (const GridOverride& o : overrides) {
        if (e.location().field == o.path) throw Error({"", 0, 0, o.flag}, e.message());
      }
      throw;
    }
    for (const GridOverride& o : overrides) {
      auto origin = point.scenario.origins.find(o.path);
      if (origin != point.scenario.origins.end()) origin->second = ErrorLocation{"", 0, 0, o.flag};
    }
    point.scenario.source = path;
    point.axes = std::move(p.axes);
    grid.points.push_back(std::move(point));
  }
  return grid;
}

}  // namespace kvsim::config
