#include "cli/flag_parse.h"

#include "common/strings.h"

namespace kvsim::cli {

Error flag_error(const std::string& flag, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, flag}, message);
}

std::int64_t int_flag(const std::string& flag, const std::string& text,
                      const std::string& expected) {
  const auto v = parse_int(text);
  if (!v) throw flag_error(flag, "expected " + expected + ", got '" + text + "'");
  return *v;
}

double double_flag(const std::string& flag, const std::string& text, const std::string& expected) {
  const auto v = parse_double(text);
  if (!v) throw flag_error(flag, "expected " + expected + ", got '" + text + "'");
  return *v;
}

std::int64_t int_at_least(const std::string& flag, const std::string& text, std::int64_t lo) {
  const auto v = parse_int(text);
  if (!v || *v < lo) {
    throw flag_error(flag, std::string("expected ") +
                               (lo <= 0 ? "a non-negative integer" : "a positive integer") +
                               (lo > 1 ? " >= " + std::to_string(lo) : "") + ", got '" + text +
                               "'");
  }
  return *v;
}

double number_in(const std::string& flag, const std::string& text, double lo, double hi,
                 bool open_low, const std::string& expected) {
  const auto v = parse_double(text);
  const bool ok = v && (open_low ? *v > lo : *v >= lo) && *v <= hi;
  if (!ok) throw flag_error(flag, "expected " + expected + ", got '" + text + "'");
  return *v;
}

}  // namespace kvsim::cli
