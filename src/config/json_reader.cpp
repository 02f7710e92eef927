#include "config/json_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "common/warning.h"

namespace kvsim::config {

Position position_of(std::string_view text, std::size_t offset) {
  Position p{1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string sanitize_non_finite(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, token.size()) == token) {
        out += "null";
        // Keep columns aligned where the token is at least as long as "null".
        if (token.size() > 4) out += std::string(token.size() - 4, ' ');
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

std::string describe_json(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  return v.dump();
}

}  // namespace kvsim::config

namespace kvsim::config {

void check_json_text(std::string_view text, const std::string& file) {
  int depth = 0;
  Position pos{1, 1};
  auto advance = [&](char c) {
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {  // skip the string, escapes included
      advance(text[i++]);
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) advance(text[i++]);
        advance(text[i++]);
      }
      if (i < text.size()) advance(text[i++]);
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw Error({file, pos.line, pos.column, ""},
                    "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i;
      while (end < text.size() &&
             (text[end] == '-' || text[end] == '+' || text[end] == '.' || text[end] == 'e' ||
              text[end] == 'E' || (text[end] >= '0' && text[end] <= '9'))) {
        ++end;
      }
      const std::string token(text.substr(i, end - i));
      errno = 0;
      const double value = std::strtod(token.c_str(), nullptr);
      if (std::isinf(value)) {
        throw Error({file, pos.line, pos.column, ""},
                    "number " + (token.size() > 40 ? token.substr(0, 40) + "..." : token) +
                        " is beyond the range of a double (about 1.8e308)");
      }
      for (; i < end; ++i) advance(text[i]);
      continue;
    }
    advance(c);
    ++i;
  }
}

void warn_near_miss_keys(const KeyLog& log, const std::string& file, const Locator& locator) {
  for (const auto& [path, object] : log.objects) {
    if (object.json == nullptr || !object.json->is_object()) continue;
    for (const auto& [key, value] : object.json->items()) {
      if (object.asked.count(key) != 0) continue;
      for (const std::string& asked : object.asked) {
        if (asked.size() < 5 || object.json->contains(asked)) continue;
        const std::size_t longer = std::max(asked.size(), key.size());
        if (longer - std::min(asked.size(), key.size()) > 1) continue;
        if (edit_distance(key, asked) != 1) continue;
        std::string field = path;
        if (!field.empty()) field += '.';
        field += key;
        ErrorLocation where{file, 0, 0, field};
        if (auto p = locator.find(field)) {
          where.line = p->line;
          where.column = p->column;
        }
        std::string message = "unknown key, did you mean '";
        message += asked;
        message += "'? (ignored: read as if '";
        message += asked;
        message += "' were absent)";
        warn(where, message);
        break;
      }
    }
  }
}

}  // namespace kvsim::config
