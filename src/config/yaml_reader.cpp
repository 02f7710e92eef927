#include "config/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "common/strings.h"

namespace kvsim::config {
namespace {

std::string fixed_or_int(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// YAML scalars may carry digit separators people write (1_000_000).
std::string without_underscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '_') out += c;
  }
  return out;
}

// The bounded walk behind check_yaml_document. Recursion is at most kMaxYamlDepth deep. The
// dotted path of the node being visited is kept in one string, extended and cut back as the walk
// goes (a fresh string per node made the 1,000,000-node bound take seconds).
class DocumentChecker {
 public:
  explicit DocumentChecker(const std::string& file) : file_(file) {}

  void walk(const YAML::Node& node, int depth) {
    if (++visited_ > kMaxYamlNodes) {
      throw Error(node_location(node, file_, path_), "the document expands to more than " +
                                                         std::to_string(kMaxYamlNodes) +
                                                         " values (nested aliases?)");
    }
    if (!node.IsMap() && !node.IsSequence()) return;
    if (depth >= kMaxYamlDepth) {
      throw Error(node_location(node, file_, path_), "nested deeper than " +
                                                         std::to_string(kMaxYamlDepth) +
                                                         " levels (a self-referencing alias?)");
    }
    const std::size_t length = path_.size();
    if (node.IsSequence()) {
      std::size_t index = 0;
      for (const auto& element : node) {
        path_ += '[';
        path_ += std::to_string(index++);
        path_ += ']';
        walk(element, depth + 1);
        path_.resize(length);
      }
      return;
    }
    std::unordered_map<std::string, YAML::Mark> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        throw Error(node_location(kv.first, file_, path_),
                    "expected a text key, got " + describe_node(kv.first));
      }
      const std::string& key = kv.first.Scalar();
      if (!path_.empty()) path_ += '.';
      path_ += key;
      const auto [it, inserted] = seen.emplace(key, kv.first.Mark());
      if (!inserted) {
        std::string first = "earlier";
        if (it->second.line >= 0) first = "at line " + std::to_string(it->second.line + 1);
        std::string message = "duplicate key '";
        message += key;
        message += "' (first given ";
        message += first;
        message += ')';
        throw Error(node_location(kv.first, file_, path_), message);
      }
      // yaml-cpp reads a bare `key` (no ':'), e.g. a file cut off mid-line, as `key: null`; the
      // null then starts where the key does, which an explicit `key:` never does.
      if (kv.second.IsNull() && kv.second.Mark().pos == kv.first.Mark().pos) {
        throw Error(node_location(kv.first, file_, path_),
                    "expected 'key: value', got a key without ':' (a truncated line?)");
      }
      walk(kv.second, depth + 1);
      path_.resize(length);
    }
  }

 private:
  const std::string& file_;
  std::string path_;
  std::int64_t visited_ = 0;
};

}  // namespace

void check_yaml_document(const YAML::Node& root, const std::string& file) {
  DocumentChecker(file).walk(root, 0);
}

YAML::Node load_yaml_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error({path, 0, 0, ""}, "cannot read: is a directory, expected a YAML file");
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error({path, 0, 0, ""}, "cannot open file");
  } catch (const YAML::ParserException& e) {
    throw Error({path, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw Error({path, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
  }
  check_yaml_document(root, path);
  return root;
}

YAML::Node load_yaml_text(std::string_view text, const std::string& display_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw Error({display_name, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw Error({display_name, e.mark.line + 1, e.mark.column + 1, ""}, "invalid YAML: " + e.msg);
  }
  check_yaml_document(root, display_name);
  return root;
}

ErrorLocation node_location(const YAML::Node& node, const std::string& file,
                            const std::string& field) {
  ErrorLocation loc{file, 0, 0, field};
  if (node.IsDefined()) {
    const YAML::Mark mark = node.Mark();
    if (mark.line >= 0) {
      loc.line = mark.line + 1;
      loc.column = mark.column + 1;
    }
  }
  return loc;
}

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "'" + node.Scalar() + "'";
}

MapReader::MapReader(const YAML::Node& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    throw Error(node_location(node_, file_, path_),
                "expected a map of fields, got " + describe_node(node_));
  }
}

bool MapReader::has(const std::string& key) const {
  const YAML::Node v = node_[key];
  return v.IsDefined() && !v.IsNull();
}

std::string MapReader::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

Error MapReader::error(const std::string& key, const std::string& message) const {
  const YAML::Node v = node_[key];
  return Error(node_location(v.IsDefined() ? v : node_, file_, field(key)), message);
}

YAML::Node MapReader::value_or_throw(const std::string& key) {
  read_.insert(key);
  const YAML::Node v = node_[key];
  if (!v.IsDefined() || v.IsNull()) {
    throw Error(node_location(node_, file_, field(key)), "missing required field");
  }
  return v;
}

std::int64_t MapReader::get_int(const std::string& key, std::int64_t min, std::int64_t max) {
  const YAML::Node v = value_or_throw(key);
  std::optional<std::int64_t> value;
  if (v.IsScalar()) {
    // Accept digit separators (1_000_000) and exact floats like 8192.0.
    const std::string cleaned = without_underscores(v.Scalar());
    value = parse_int(cleaned);
    if (!value) {
      const auto d = parse_double(cleaned);
      if (d && std::floor(*d) == *d && std::fabs(*d) < 9.2e18)
        value = static_cast<std::int64_t>(*d);
    }
  }
  if (!value || *value < min || *value > max) {
    std::string expected = "an integer";
    if (min == 1 && max == std::numeric_limits<std::int64_t>::max()) {
      expected = "a positive integer";
    } else if (min == 0 && max == std::numeric_limits<std::int64_t>::max()) {
      expected = "a non-negative integer";
    } else if (min != std::numeric_limits<std::int64_t>::min() ||
               max != std::numeric_limits<std::int64_t>::max()) {
      expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    }
    throw Error(node_location(v, file_, field(key)),
                "expected " + expected + ", got " + describe_node(v));
  }
  return *value;
}

std::optional<std::int64_t> MapReader::optional_int(const std::string& key, std::int64_t min,
                                                    std::int64_t max) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_int(key, min, max);
}

double MapReader::get_double(const std::string& key, double min, double max) {
  const YAML::Node v = value_or_throw(key);
  std::optional<double> value;
  if (v.IsScalar()) {
    value = parse_double(without_underscores(v.Scalar()));
  }
  if (!value || *value < min || *value > max) {
    std::string expected = "a number";
    if (std::isfinite(min) && std::isfinite(max)) {
      expected += " in [" + fixed_or_int(min) + ", " + fixed_or_int(max) + "]";
    } else if (std::isfinite(min)) {
      expected += min == 0 ? " >= 0" : " >= " + fixed_or_int(min);
    } else if (std::isfinite(max)) {
      expected += " <= " + fixed_or_int(max);
    }
    throw Error(node_location(v, file_, field(key)),
                "expected " + expected + ", got " + describe_node(v));
  }
  return *value;
}

std::optional<double> MapReader::optional_double(const std::string& key, double min, double max) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_double(key, min, max);
}

std::string MapReader::get_string(const std::string& key) {
  const YAML::Node v = value_or_throw(key);
  if (!v.IsScalar()) {
    throw Error(node_location(v, file_, field(key)), "expected a string, got " + describe_node(v));
  }
  return v.Scalar();
}

std::string MapReader::get_name(const std::string& key) {
  std::string name = get_string(key);
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  });
  if (!ok) {
    throw error(
        key, "expected a lower-case name of letters, digits, '.', '-' and '_', got '" + name + "'");
  }
  return name;
}

std::optional<std::string> MapReader::optional_string(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::string MapReader::get_choice(const std::string& key, const std::vector<std::string>& choices) {
  std::string value = get_string(key);
  for (const auto& c : choices) {
    if (c == value) return value;
  }
  throw Error(node_location(node_[key], file_, field(key)),
              "expected one of " + join(choices, "|") + ", got '" + value + "'" +
                  did_you_mean(value, choices));
}

std::optional<std::string> MapReader::optional_choice(const std::string& key,
                                                      const std::vector<std::string>& choices) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_choice(key, choices);
}

bool MapReader::get_bool(const std::string& key) {
  const YAML::Node v = value_or_throw(key);
  if (v.IsScalar()) {
    const std::string s = to_lower(v.Scalar());
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  throw Error(node_location(v, file_, field(key)),
              "expected true or false, got " + describe_node(v));
}

bool MapReader::optional_bool(const std::string& key, bool default_value) {
  read_.insert(key);
  if (!has(key)) return default_value;
  return get_bool(key);
}

MapReader MapReader::get_map(const std::string& key) {
  const YAML::Node v = value_or_throw(key);
  return MapReader(v, file_, field(key));
}

std::optional<MapReader> MapReader::optional_map(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return get_map(key);
}

YAML::Node MapReader::get_node(const std::string& key) {
  return value_or_throw(key);
}

std::optional<YAML::Node> MapReader::optional_node(const std::string& key) {
  read_.insert(key);
  if (!has(key)) return std::nullopt;
  return node_[key];
}

void MapReader::ignore(const std::string& key) {
  read_.insert(key);
}

std::vector<std::string> MapReader::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(kv.first.Scalar());
  return out;
}

void MapReader::finish() const {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (read_.count(key) == 0) {
      throw Error(node_location(kv.first, file_, field(key)),
                  "unknown key '" + key + "'" + did_you_mean(key, known));
    }
  }
}

}  // namespace kvsim::config
