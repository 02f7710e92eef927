#include "trace/python_literal.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "trace/field_parse.h"

namespace kvsim::trace {
namespace {

Error run_error(const std::string& file, int line, int column, const std::string& field,
                const std::string& message) {
  return Error(ErrorLocation{file, line, column, field}, message);
}

class PyLiteralParser {
 public:
  PyLiteralParser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  // The literal, then (DistServe's benchmark writes one) an optional summary block
  // "{\n\tkey: number\n ...}" whose numbers go to `summary`.
  PyValue parse_document(std::vector<std::pair<std::string, double>>& summary) {
    PyValue v = value();
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '{') {
      ++pos_;
      while (true) {
        skip_space();
        if (pos_ >= s_.size()) throw error("", "unterminated summary block, expected '}'");
        if (s_[pos_] == '}') {
          ++pos_;
          break;
        }
        const std::size_t colon = s_.find(':', pos_);
        const std::size_t eol = s_.find('\n', pos_);
        if (colon == std::string::npos || (eol != std::string::npos && colon > eol)) {
          throw error("", "expected 'key: number' in the summary block");
        }
        std::string key = s_.substr(pos_, colon - pos_);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        pos_ = colon + 1;
        PyValue n = value();
        if (n.kind != PyValue::Kind::kNumber) throw error(key, "expected a number");
        summary.emplace_back(key, n.number);
      }
      skip_space();
    }
    if (pos_ != s_.size()) throw error("", "unexpected text after the literal");
    return v;
  }

 private:
  Error error(const std::string& field, const std::string& message) const {
    const auto [line, col] = line_col(s_, pos_);
    return run_error(file_, line, col, field, message);
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyValue value() {
    skip_space();
    if (pos_ >= s_.size()) throw error("", "unexpected end of file, expected a value");
    PyValue v;
    const auto [line, col] = line_col(s_, pos_);
    v.line = line;
    v.column = col;
    const char c = s_[pos_];
    if (c == '[' || c == '(') {
      const char close = c == '[' ? ']' : ')';
      ++pos_;
      v.kind = PyValue::Kind::kList;
      if (consume(close)) return v;
      while (true) {
        v.items.push_back(value());
        if (consume(close)) return v;
        if (!consume(',')) throw error("", std::string("expected ',' or '") + close + "'");
        if (consume(close)) return v;  // trailing comma
      }
    }
    if (c == '{') {
      ++pos_;
      v.kind = PyValue::Kind::kDict;
      if (consume('}')) return v;
      while (true) {
        PyValue key = value();
        if (key.kind != PyValue::Kind::kString) throw error("", "expected a string key");
        if (!consume(':')) throw error(key.text, "expected ':' after the key");
        v.keys.push_back(key.text);
        v.values.push_back(value());
        if (consume('}')) return v;
        if (!consume(',')) throw error("", "expected ',' or '}'");
        if (consume('}')) return v;
      }
    }
    if (c == '\'' || c == '"') return string_value(v);
    if (std::isalpha(static_cast<unsigned char>(c))) {
      std::size_t end = pos_;
      while (end < s_.size() && std::isalnum(static_cast<unsigned char>(s_[end]))) ++end;
      const std::string word = s_.substr(pos_, end - pos_);
      if (word == "None") {
        v.kind = PyValue::Kind::kNone;
      } else if (word == "True" || word == "False") {
        v.kind = PyValue::Kind::kBool;
        v.boolean = word == "True";
      } else if (word == "nan" || word == "inf") {
        v.kind = PyValue::Kind::kNumber;
        v.number = word == "nan" ? std::nan("") : HUGE_VAL;
      } else {
        throw error("", "unexpected name '" + word +
                            "', expected a number, string, list, "
                            "dict, None, True or False");
      }
      pos_ = end;
      return v;
    }
    return number_value(v);
  }

  PyValue string_value(PyValue& v) {
    const char quote = s_[pos_++];
    v.kind = PyValue::Kind::kString;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c == '\\' && pos_ < s_.size()) {
        const char e = s_[pos_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      v.text += c;
    }
    if (pos_ >= s_.size()) throw error("", "unterminated string");
    ++pos_;
    return v;
  }

  PyValue number_value(PyValue& v) {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin) throw error("", "expected a value");
    pos_ += static_cast<std::size_t>(end - begin);
    v.kind = PyValue::Kind::kNumber;
    v.number = d;
    return v;
  }

  const std::string& s_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

}  // namespace

PyValue parse_python_literal(const std::string& text, const std::string& file,
                             std::vector<std::pair<std::string, double>>& summary) {
  return PyLiteralParser(text, file).parse_document(summary);
}

const PyValue* dict_get(const PyValue& d, const std::string& key) {
  for (std::size_t i = 0; i < d.keys.size(); ++i) {
    if (d.keys[i] == key) return &d.values[i];
  }
  return nullptr;
}

}  // namespace kvsim::trace
