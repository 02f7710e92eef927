#include "config/scenario_grid_yaml.h"

#include <limits>

#include "common/error.h"
#include "config/yaml_reader.h"

namespace kvsim::config {
namespace {

constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

std::string child_path(const std::string& path, const YAML::Node& key) {
  const std::string k = key.IsScalar() ? key.Scalar() : "?";
  return path.empty() ? k : path + "." + k;
}

bool is_list_field(const GridOptions& options, const std::string& path) {
  return options.list_fields.count(path) != 0;
}

// A list at `path` is an axis unless it is a list field's single value (a list of scalars/maps
// there; a list of lists is still an axis).
bool is_axis(const YAML::Node& node, const std::string& path, const GridOptions& options) {
  if (!node.IsSequence()) return false;
  if (!is_list_field(options, path)) return true;
  for (const auto& element : node) {
    if (!element.IsSequence()) return false;
  }
  return node.size() > 0;
}

std::string flow_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

bool has_axis(const YAML::Node& node, const std::string& path, const GridOptions& options) {
  if (is_axis(node, path, options)) return true;
  if (!node.IsMap()) return false;
  for (const auto& kv : node) {
    if (has_axis(kv.second, child_path(path, kv.first), options)) return true;
  }
  return false;
}

std::int64_t count(const YAML::Node& node, const std::string& path, const GridOptions& options) {
  if (is_axis(node, path, options)) {
    std::int64_t n = 0;
    for (const auto& element : node) {
      // An element of a list field's axis is that field's value: a literal list.
      n = add_sat(n, is_list_field(options, path) ? 1 : count(element, path, options));
    }
    return n;
  }
  if (node.IsMap()) {
    std::int64_t n = 1;
    for (const auto& kv : node)
      n = mul_sat(n, count(kv.second, child_path(path, kv.first), options));
    return n;
  }
  return 1;
}

std::vector<YamlGridPoint> expand(const YAML::Node& node, const std::string& path,
                                  const std::string& file, const GridOptions& options) {
  if (is_axis(node, path, options)) {
    if (node.size() == 0) {
      throw Error(node_location(node, file, path),
                  "an empty list makes an empty grid; give at least one value");
    }
    std::vector<YamlGridPoint> points;
    for (const auto& element : node) {
      if (is_list_field(options, path)) {
        points.push_back({element, {{path, flow_text(element)}}});
        continue;
      }
      // A structured element may hold axes of its own: each of its points is one value of this
      // axis, labelled by its whole (single-valued) text.
      for (auto& sub : expand(element, path, file, options)) {
        sub.axes = {AxisValue{path, flow_text(sub.document)}};
        points.push_back(std::move(sub));
      }
    }
    return points;
  }
  if (!has_axis(node, path, options)) return {{node, {}}};

  // Cartesian product over the fields, the first field outermost.
  std::vector<YamlGridPoint> points = {{YAML::Node(YAML::NodeType::Map), {}}};
  for (const auto& kv : node) {
    const std::vector<YamlGridPoint> values =
        expand(kv.second, child_path(path, kv.first), file, options);
    std::vector<YamlGridPoint> next;
    next.reserve(points.size() * values.size());
    for (const auto& prefix : points) {
      for (const auto& value : values) {
        YamlGridPoint p;
        p.document = YAML::Node(YAML::NodeType::Map);
        for (const auto& field : prefix.document)
          p.document.force_insert(field.first, field.second);
        p.document.force_insert(kv.first, value.document);
        p.axes = prefix.axes;
        p.axes.insert(p.axes.end(), value.axes.begin(), value.axes.end());
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

}  // namespace

std::int64_t count_yaml_grid(const YAML::Node& document, const GridOptions& options) {
  return count(document, "", options);
}

std::vector<YamlGridPoint> expand_yaml_grid(const YAML::Node& document, const std::string& file,
                                            const GridOptions& options) {
  const std::int64_t n = count_yaml_grid(document, options);
  if (n > options.max_points) {
    throw Error(node_location(document, file, ""),
                "the grid has " + (n == kSaturated ? std::string("too many") : std::to_string(n)) +
                    " points, more than the limit of " + std::to_string(options.max_points) +
                    "; shorten the lists");
  }
  return expand(document, "", file, options);
}

}  // namespace kvsim::config
