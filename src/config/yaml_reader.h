#pragma once
// Strict, located reading of YAML maps for config/ only (yaml-cpp stays inside config/).
//
// A MapReader reads one mapping field by field. Each getter checks the type and range and, on
// bad input, throws kvsim::Error with file, line, column and the dotted field path, e.g.
//   configs/models/x.yaml:12:5: attention.kv_heads: expected a positive integer, got -8
// finish() then rejects every key that no getter asked for, suggesting the closest known key.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kvsim::config {

// Limits on the shape of a YAML document, checked when it is loaded (README "Limits").
inline constexpr int kMaxYamlDepth = 64;  // maps and lists nested deeper: an error
// Nodes a walk of the document may visit, aliases expanded (nested aliases, "billion laughs").
// (100,000: a walk of that many yaml-cpp nodes takes seconds under the sanitizers, and no kvsim
// YAML comes near it.)
inline constexpr std::int64_t kMaxYamlNodes = 100'000;

// Parses a YAML file; syntax errors become kvsim::Error with line and column. The document is
// then checked (check_yaml_document), so every walk of it is finite and every key is text.
YAML::Node load_yaml_file(const std::string& path);
// Parses YAML text; `display_name` stands for the file in error messages.
YAML::Node load_yaml_text(std::string_view text, const std::string& display_name);

// Throws kvsim::Error, located in `file`, for a map key that is not text (`{[a]: 1}`, a null
// key), a key given twice in one map, a bare key without ':' (a truncated last line), nesting
// deeper than kMaxYamlDepth (which is also what a self-referencing alias such as `x: &x [*x]`
// amounts to), or a document that expands, aliases followed, to more than kMaxYamlNodes nodes.
void check_yaml_document(const YAML::Node& root, const std::string& file);

// Location of a node (1-based line and column), for errors.
ErrorLocation node_location(const YAML::Node& node, const std::string& file,
                            const std::string& field);

class MapReader {
 public:
  // `node` must be a map (throws otherwise). `path` is the dotted prefix of its keys ("" at top).
  MapReader(const YAML::Node& node, std::string file, std::string path = "");

  const std::string& file() const { return file_; }
  bool has(const std::string& key) const;
  // Full dotted name of `key` inside this map.
  std::string field(const std::string& key) const;

  std::int64_t get_int(const std::string& key,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max());
  std::int64_t get_positive_int(const std::string& key) { return get_int(key, 1); }
  std::optional<std::int64_t> optional_int(
      const std::string& key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
      std::int64_t max = std::numeric_limits<std::int64_t>::max());
  double get_double(const std::string& key, double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity());
  std::optional<double> optional_double(const std::string& key,
                                        double min = -std::numeric_limits<double>::infinity(),
                                        double max = std::numeric_limits<double>::infinity());
  std::string get_string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  // A catalog name: non-empty, lower-case letters, digits, '.', '-' and '_'.
  std::string get_name(const std::string& key);
  // One of `choices` (exact match), with a suggestion when it is close to one.
  std::string get_choice(const std::string& key, const std::vector<std::string>& choices);
  std::optional<std::string> optional_choice(const std::string& key,
                                             const std::vector<std::string>& choices);
  bool get_bool(const std::string& key);
  bool optional_bool(const std::string& key, bool default_value);

  // A nested map; the returned reader's fields are prefixed with this key.
  MapReader get_map(const std::string& key);
  std::optional<MapReader> optional_map(const std::string& key);
  // Raw node (marks the key as read). Throws if absent.
  YAML::Node get_node(const std::string& key);
  std::optional<YAML::Node> optional_node(const std::string& key);

  // Marks keys as known without reading them (e.g. documentation-only keys).
  void ignore(const std::string& key);

  // Error located at `key` (its value if present, else this map).
  Error error(const std::string& key, const std::string& message) const;

  // Throws for the first key no getter read: "unknown key 'kv_head', did you mean 'kv_heads'?"
  void finish() const;

  // The keys this map actually has, in file order.
  std::vector<std::string> keys() const;

 private:
  YAML::Node value_or_throw(const std::string& key);

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> read_;
};

// Describes a scalar for "got ..." in messages: the text, or "a map"/"a list"/"null".
std::string describe_node(const YAML::Node& node);

}  // namespace kvsim::config
