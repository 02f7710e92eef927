#pragma once
// Located, typed reading of JSON documents for config/ importers (nlohmann json stays in the
// config/*.cpp files that parse JSON and this header, which only they include).
//
// A Locator records where every value of a document starts (line and column, by dotted path such
// as "text_config.head_dim" or "layer_types[3]"), so that a JsonReader's errors name the file,
// the line and column of the offending value, the field and what was expected.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/strings.h"

namespace kvsim::config {

using Json = nlohmann::json;

struct Position {
  int line = 0;
  int column = 0;
};

// Line and column (1-based) of byte `offset` in `text`.
Position position_of(std::string_view text, std::size_t offset);

// Replaces the bare tokens NaN, Infinity and -Infinity outside strings by null (Python's json
// writes them; strict JSON parsers reject them). Columns stay aligned where the token is at least
// as long as "null".
std::string sanitize_non_finite(std::string_view text);

// "null", "an object", "a list", "'text'" or the number, for "got ..." in messages.
std::string describe_json(const Json& value);

// Where every value of a JSON document starts, by dotted path ("text_config.head_dim",
// "layer_types[3]"). Runs on text nlohmann has already accepted.
class Locator {
 public:
  explicit Locator(std::string_view text) : text_(text) {
    skip_ws();
    value("");
  }
  std::optional<Position> find(const std::string& path) const {
    const auto it = positions_.find(path);
    if (it == positions_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void skip_ws() {
    while (i_ < text_.size() &&
           (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\n' || text_[i_] == '\r')) {
      ++i_;
    }
  }
  std::string string() {
    std::string s;
    ++i_;  // opening quote
    while (i_ < text_.size() && text_[i_] != '"') {
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) ++i_;
      s += text_[i_++];
    }
    ++i_;  // closing quote
    return s;
  }
  void value(const std::string& path) {
    if (i_ >= text_.size()) return;
    positions_[path] = position_of_cached(i_);
    const char c = text_[i_];
    if (c == '{') {
      ++i_;
      for (;;) {
        skip_ws();
        if (i_ >= text_.size() || text_[i_] == '}') break;
        if (text_[i_] != '"') return;  // not reached for valid JSON
        const std::string key = string();
        skip_ws();
        ++i_;  // ':'
        skip_ws();
        std::string child = path;
        if (!child.empty()) child += '.';
        child += key;
        value(child);
        skip_ws();
        if (i_ < text_.size() && text_[i_] == ',') ++i_;
      }
      ++i_;
    } else if (c == '[') {
      ++i_;
      for (int index = 0;; ++index) {
        skip_ws();
        if (i_ >= text_.size() || text_[i_] == ']') break;
        value(path + "[" + std::to_string(index) + "]");
        skip_ws();
        if (i_ < text_.size() && text_[i_] == ',') ++i_;
      }
      ++i_;
    } else if (c == '"') {
      string();
    } else {
      while (i_ < text_.size() && text_[i_] != ',' && text_[i_] != '}' && text_[i_] != ']' &&
             text_[i_] != ' ' && text_[i_] != '\n' && text_[i_] != '\r' && text_[i_] != '\t') {
        ++i_;
      }
    }
  }
  Position position_of_cached(std::size_t offset) {
    while (scan_ < offset && scan_ < text_.size()) {
      if (text_[scan_] == '\n') {
        ++pos_.line;
        pos_.column = 1;
      } else {
        ++pos_.column;
      }
      ++scan_;
    }
    return pos_;
  }

  std::string_view text_;
  std::size_t i_ = 0;
  std::size_t scan_ = 0;
  Position pos_{1, 1};
  std::map<std::string, Position> positions_;
};

// A JSON object read field by field. Getters check type and range and throw kvsim::Error located
// at the value (or at the object when the key is absent). Unknown keys are not errors (HF
// configs carry many fields kvsim does not need).
class JsonReader {
 public:
  JsonReader(const Json& object, std::string file, std::string path, const Locator& locator)
      : object_(&object), file_(std::move(file)), path_(std::move(path)), locator_(&locator) {}

  std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  const std::string& path() const { return path_; }

  bool has(const std::string& key) const {
    const auto it = object_->find(key);
    return it != object_->end() && !it->is_null();
  }
  // Location of `key`'s value, or of this object when the key is absent.
  ErrorLocation location(const std::string& key) const {
    ErrorLocation loc{file_, 0, 0, field(key)};
    auto p = locator_->find(field(key));
    if (!p) p = locator_->find(path_);
    if (p) {
      loc.line = p->line;
      loc.column = p->column;
    }
    return loc;
  }
  Error error(const std::string& key, const std::string& message) const {
    return Error(location(key), message);
  }

  std::optional<std::int64_t> optional_int(const std::string& key, std::int64_t min = 1) const {
    if (!has(key)) return std::nullopt;
    const Json& v = (*object_)[key];
    std::optional<std::int64_t> value;
    if (v.is_number_integer()) {
      value = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e18) {
        value = static_cast<std::int64_t>(d);
      }
    }
    if (!value || *value < min) {
      const std::string expected = min == 1   ? "a positive integer"
                                   : min == 0 ? "a non-negative integer"
                                              : "an integer >= " + std::to_string(min);
      throw error(key, "expected " + expected + ", got " + describe_json(v));
    }
    return value;
  }
  std::int64_t get_int(const std::string& key, std::int64_t min = 1) const {
    if (auto v = optional_int(key, min)) return *v;
    throw missing(key, "an integer");
  }
  // The first of `keys` present (aliases, e.g. num_hidden_layers / n_layer).
  std::int64_t get_int_any(const std::vector<std::string>& keys, std::int64_t min = 1) const {
    for (const auto& k : keys) {
      if (has(k)) return get_int(k, min);
    }
    throw Error(location(keys.front()), "missing required field (also accepted: " +
                                            join({keys.begin() + 1, keys.end()}, ", ") +
                                            "); expected an integer");
  }
  std::optional<std::string> optional_string(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const Json& v = (*object_)[key];
    if (!v.is_string()) throw error(key, "expected a string, got " + describe_json(v));
    return v.get<std::string>();
  }
  std::string get_string(const std::string& key) const {
    if (auto v = optional_string(key)) return *v;
    throw missing(key, "a string");
  }
  bool optional_bool(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const Json& v = (*object_)[key];
    if (!v.is_boolean()) throw error(key, "expected true or false, got " + describe_json(v));
    return v.get<bool>();
  }
  const Json* optional_value(const std::string& key) const {
    return has(key) ? &(*object_)[key] : nullptr;
  }
  JsonReader get_object(const std::string& key) const {
    if (!has(key)) throw missing(key, "an object");
    const Json& v = (*object_)[key];
    if (!v.is_object()) throw error(key, "expected an object, got " + describe_json(v));
    return JsonReader(v, file_, field(key), *locator_);
  }
  Error missing(const std::string& key, const std::string& expected) const {
    return Error(location(key), "missing required field; expected " + expected);
  }
  const std::string& file() const { return file_; }

 private:
  const Json* object_;
  std::string file_;
  std::string path_;
  const Locator* locator_;
};

}  // namespace kvsim::config
