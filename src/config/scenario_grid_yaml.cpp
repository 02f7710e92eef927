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

// Throws for an empty axis (an empty grid): count() of it would be 0, and a product with 0 would
// pass any size guard while its siblings still build every other combination.
[[noreturn]] void throw_empty_axis(const YAML::Node& node, const std::string& path,
                                   const std::string& file) {
  throw Error(node_location(node, file, path),
              "an empty list makes an empty grid; give at least one value");
}

std::int64_t count(const YAML::Node& node, const std::string& path, const std::string& file,
                   const GridOptions& options) {
  if (is_axis(node, path, options)) {
    if (node.size() == 0) throw_empty_axis(node, path, file);
    std::int64_t n = 0;
    for (const auto& element : node) {
      // An element of a list field's axis is that field's value: a literal list.
      n = add_sat(n, is_list_field(options, path) ? 1 : count(element, path, file, options));
    }
    return n;
  }
  if (node.IsMap()) {
    std::int64_t n = 1;
    for (const auto& kv : node)
      n = mul_sat(n, count(kv.second, child_path(path, kv.first), file, options));
    return n;
  }
  return 1;
}

// New point documents are created as elements of one arena list that shares the source
// document's node memory, so attaching a source node to a point costs O(1). (A free-standing
// YAML::Node has its own memory, and yaml-cpp merges the whole source memory into it on the
// first insert; that made expansion quadratic in the number of points.)
class Expander {
 public:
  Expander(const YAML::Node& document, const std::string& file, const GridOptions& options)
      : file_(file), options_(options), arena_(YAML::NodeType::Sequence) {
    arena_.push_back(document);  // one merge of the source memory into the arena's
  }

  std::vector<YamlGridPoint> expand(const YAML::Node& node, const std::string& path) {
    if (is_axis(node, path, options_)) {
      if (node.size() == 0) throw_empty_axis(node, path, file_);
      std::vector<YamlGridPoint> points;
      for (const auto& element : node) {
        if (is_list_field(options_, path)) {
          points.push_back({element, {{path, flow_text(element)}}});
          continue;
        }
        // A structured element may hold axes of its own: each of its points is one value of
        // this axis, labelled by its whole (single-valued) text.
        for (auto& sub : expand(element, path)) {
          sub.axes = {AxisValue{path, flow_text(sub.document)}};
          points.push_back(std::move(sub));
        }
      }
      return points;
    }
    if (!has_axis(node, path, options_)) return {{node, {}}};

    // Cartesian product over the fields, the first field outermost: each field's values are
    // expanded once, then every combination is built once (an odometer over the fields).
    std::vector<YAML::Node> keys;
    std::vector<std::vector<YamlGridPoint>> values;
    for (const auto& kv : node) {
      keys.push_back(kv.first);
      values.push_back(expand(kv.second, child_path(path, kv.first)));
    }
    std::size_t total = 1;
    for (const auto& v : values) total *= v.size();  // bounded by count() <= max_points
    std::vector<YamlGridPoint> points;
    points.reserve(total);
    std::vector<std::size_t> index(values.size(), 0);
    for (std::size_t n = 0; n < total; ++n) {
      YamlGridPoint p;
      p.document = new_map();
      for (std::size_t f = 0; f < values.size(); ++f) {
        const YamlGridPoint& value = values[f][index[f]];
        p.document.force_insert(keys[f], value.document);
        p.axes.insert(p.axes.end(), value.axes.begin(), value.axes.end());
      }
      points.push_back(std::move(p));
      for (std::size_t f = values.size(); f-- > 0;) {  // the last field varies fastest
        if (++index[f] < values[f].size()) break;
        index[f] = 0;
      }
    }
    return points;
  }

 private:
  YAML::Node new_map() {
    YAML::Node map(YAML::NodeType::Map);
    arena_.push_back(map);  // `map` now lives in the arena's memory
    return map;
  }

  const std::string& file_;
  const GridOptions& options_;
  YAML::Node arena_;
};

}  // namespace

std::int64_t count_yaml_grid(const YAML::Node& document, const GridOptions& options) {
  return count(document, "", "", options);
}

std::vector<YamlGridPoint> expand_yaml_grid(const YAML::Node& document, const std::string& file,
                                            const GridOptions& options) {
  const std::int64_t n = count(document, "", file, options);
  if (n > options.max_points) {
    throw Error(node_location(document, file, ""),
                "the grid has " + (n == kSaturated ? std::string("too many") : std::to_string(n)) +
                    " points, more than the limit of " + std::to_string(options.max_points) +
                    "; shorten the lists");
  }
  return Expander(document, file, options).expand(document, "");
}

}  // namespace kvsim::config
