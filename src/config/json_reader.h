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
#include <set>
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

// Limits on a JSON document's shape (README "Limits").
inline constexpr int kMaxJsonDepth = 64;  // objects and lists nested deeper: an error

// Checks the text before a JSON parser sees it: throws kvsim::Error located in `file` for
// nesting deeper than kMaxJsonDepth and for a number beyond the range of a double (1e400).
// Anything else malformed is left to the parser.
void check_json_text(std::string_view text, const std::string& file);

// Which keys an importer asked each object for, so that the keys it never asked for can be
// checked for near-misses of the ones it did (warn_near_miss_keys).
struct KeyLog {
  struct Object {
    const Json* json = nullptr;
    std::set<std::string> asked;
  };
  std::map<std::string, Object> objects;  // by dotted path ("" = the top object)
};

// Where every value of a JSON document starts, by dotted path ("text_config.head_dim",
// "layer_types[3]"). Runs on text nlohmann has already accepted.
// Paths are recorded for values at most kLocatedDepth levels deep (importers read no deeper),
// so its memory is linear in the text; the text must have passed check_json_text.
class Locator {
 public:
  static constexpr int kLocatedDepth = 4;

  explicit Locator(std::string_view text) : text_(text) {
    skip_ws();
    value("", 0);
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
  void value(const std::string& path, int depth) {
    if (i_ >= text_.size()) return;
    const bool located = depth <= kLocatedDepth;
    if (located) positions_[path] = position_of_cached(i_);
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
        std::string child;
        if (located) {
          child = path;
          if (!child.empty()) child += '.';
          child += key;
        }
        value(child, depth + 1);
        skip_ws();
        if (i_ < text_.size() && text_[i_] == ',') ++i_;
      }
      ++i_;
    } else if (c == '[') {
      ++i_;
      for (int index = 0;; ++index) {
        skip_ws();
        if (i_ >= text_.size() || text_[i_] == ']') break;
        value(located ? path + "[" + std::to_string(index) + "]" : std::string(), depth + 1);
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
  // `log`, when given, records every key asked for (see KeyLog); it must outlive the reader.
  JsonReader(const Json& object, std::string file, std::string path, const Locator& locator,
             KeyLog* log = nullptr)
      : object_(&object),
        file_(std::move(file)),
        path_(std::move(path)),
        locator_(&locator),
        log_(log) {
    if (log_ != nullptr) log_->objects[path_].json = object_;
  }

  std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  const std::string& path() const { return path_; }

  bool has(const std::string& key) const {
    if (log_ != nullptr) log_->objects[path_].asked.insert(key);
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

  // Integers are at most kMaxJsonInt unless `max` says less, so that a loader's arithmetic on
  // them cannot overflow before validation bounds each quantity.
  static constexpr std::int64_t kMaxJsonInt = std::int64_t{1} << 40;

  std::optional<std::int64_t> optional_int(const std::string& key, std::int64_t min = 1,
                                           std::int64_t max = kMaxJsonInt) const {
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
    if (!value || *value < min || *value > max) {
      std::string expected = min == 1   ? "a positive integer"
                             : min == 0 ? "a non-negative integer"
                                        : "an integer >= " + std::to_string(min);
      if (value && *value > max) {
        expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
      }
      throw error(key, "expected " + expected + ", got " + describe_json(v));
    }
    return value;
  }
  std::int64_t get_int(const std::string& key, std::int64_t min = 1,
                       std::int64_t max = kMaxJsonInt) const {
    if (auto v = optional_int(key, min, max)) return *v;
    throw missing(key, "an integer");
  }
  // The first of `keys` present (aliases, e.g. num_hidden_layers / n_layer).
  std::int64_t get_int_any(const std::vector<std::string>& keys, std::int64_t min = 1,
                           std::int64_t max = kMaxJsonInt) const {
    for (const auto& k : keys) {
      if (has(k)) return get_int(k, min, max);
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
    return JsonReader(v, file_, field(key), *locator_, log_);
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
  KeyLog* log_;
};

// Warns (common/warning.h) for every key of a logged object that no reader asked for but that is
// one edit away from a key one asked for and did not find there (`num_key_value_head` for
// `num_key_value_heads`): an importer that ignores unknown keys would otherwise silently take
// that field's default.
void warn_near_miss_keys(const KeyLog& log, const std::string& file, const Locator& locator);

}  // namespace kvsim::config
