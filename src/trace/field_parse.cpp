#include "trace/field_parse.h"

#include <limits>

#include "common/int128.h"

namespace kvsim::trace {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
// days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(std::int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Reads exactly `n` digits at `pos` into `out`.
bool fixed_digits(std::string_view s, std::size_t& pos, int n, int& out) {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos++];
    if (!is_digit(c)) return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

ParseStatus parse_u64(std::string_view text, std::uint64_t& out) {
  text = trim_spaces(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return ParseStatus::kNotANumber;
  if (text.front() == '-') {
    for (std::size_t i = 1; i < text.size(); ++i) {
      if (!is_digit(text[i])) return ParseStatus::kNotANumber;
    }
    return text.size() > 1 ? ParseStatus::kNegative : ParseStatus::kNotANumber;
  }
  std::uint64_t value = 0;
  for (const char c : text) {
    if (!is_digit(c)) return ParseStatus::kNotANumber;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return ParseStatus::kOutOfRange;
    }
    value = value * 10 + digit;
  }
  out = value;
  return ParseStatus::kOk;
}

ParseStatus parse_count(std::string_view text, std::int64_t& out) {
  std::uint64_t value = 0;
  const ParseStatus status = parse_u64(text, value);
  if (status != ParseStatus::kOk) return status;
  if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return ParseStatus::kOutOfRange;
  }
  out = static_cast<std::int64_t>(value);
  return ParseStatus::kOk;
}

namespace {

// A decimal's digits: value = mantissa × 10^exponent10.
struct Decimal {
  UInt128 mantissa = 0;
  int num_digits = 0;  // significant digits kept in mantissa
  int exponent10 = 0;
  bool any_digit = false;
  bool nonzero_dropped = false;  // digits beyond what mantissa keeps (only far fraction digits)
};

// Integer and fraction digits from `pos` on.
Decimal scan_mantissa(std::string_view text, std::size_t& pos) {
  Decimal d;
  constexpr int kMaxDigits = 20;  // × unit_ns (≤ 1e9) stays inside 128 bits
  while (pos < text.size() && is_digit(text[pos])) {
    d.any_digit = true;
    if (d.num_digits < kMaxDigits) {
      d.mantissa = d.mantissa * 10 + static_cast<unsigned>(text[pos] - '0');
      if (d.mantissa != 0) ++d.num_digits;
    } else {
      ++d.exponent10;  // integer digits beyond precision: far out of range anyway
    }
    ++pos;
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && is_digit(text[pos])) {
      d.any_digit = true;
      if (d.num_digits < kMaxDigits) {
        d.mantissa = d.mantissa * 10 + static_cast<unsigned>(text[pos] - '0');
        if (d.mantissa != 0) ++d.num_digits;
        --d.exponent10;
      } else if (text[pos] != '0') {
        d.nonzero_dropped = true;
      }
      ++pos;
    }
  }
  return d;
}

// An optional "e[+-]digits" from `pos` on, added to exponent10; false when malformed.
bool scan_exponent(std::string_view text, std::size_t& pos, int& exponent10) {
  if (pos >= text.size() || (text[pos] != 'e' && text[pos] != 'E')) return true;
  ++pos;
  bool exp_negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    exp_negative = text[pos] == '-';
    ++pos;
  }
  if (pos >= text.size() || !is_digit(text[pos])) return false;
  int e = 0;
  while (pos < text.size() && is_digit(text[pos])) {
    if (e < 100000) e = e * 10 + (text[pos] - '0');
    ++pos;
  }
  exponent10 += exp_negative ? -e : e;
  return true;
}

// ns = mantissa × unit_ns × 10^exponent10, rounded half up.
ParseStatus scale_to_ns(UInt128 mantissa, std::int64_t unit_ns, int exponent10, TimeNs& out) {
  UInt128 value = mantissa * static_cast<UInt128>(unit_ns);
  constexpr auto kLimit = static_cast<UInt128>(std::numeric_limits<std::int64_t>::max());
  if (exponent10 > 0) {
    for (int i = 0; i < exponent10; ++i) {
      if (value > kLimit) return ParseStatus::kOutOfRange;
      value *= 10;
    }
  } else if (exponent10 < 0) {
    if (exponent10 < -40) {
      value = 0;
    } else {
      UInt128 divisor = 1;
      for (int i = 0; i < -exponent10; ++i) divisor *= 10;
      const auto remainder = value % divisor;
      value /= divisor;
      if (remainder * 2 >= divisor) ++value;
    }
  }
  if (value > kLimit) return ParseStatus::kOutOfRange;
  out = static_cast<TimeNs>(value);
  return ParseStatus::kOk;
}

}  // namespace

ParseStatus parse_decimal_ns(std::string_view text, std::int64_t unit_ns, TimeNs& out) {
  text = trim_spaces(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  std::size_t pos = 0;
  Decimal d = scan_mantissa(text, pos);
  if (!d.any_digit) return ParseStatus::kNotANumber;
  if (!scan_exponent(text, pos, d.exponent10)) return ParseStatus::kNotANumber;
  if (pos != text.size()) return ParseStatus::kNotANumber;
  if (negative && (d.mantissa != 0 || d.nonzero_dropped)) return ParseStatus::kNegative;
  if (d.mantissa == 0) {
    out = 0;
    return ParseStatus::kOk;
  }
  return scale_to_ns(d.mantissa, unit_ns, d.exponent10, out);
}

bool parse_datetime_ns(std::string_view s, TimeNs& out) {
  s = trim_spaces(s);
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!fixed_digits(s, pos, 4, year) || pos >= s.size() || s[pos++] != '-') return false;
  if (!fixed_digits(s, pos, 2, month) || pos >= s.size() || s[pos++] != '-') return false;
  if (!fixed_digits(s, pos, 2, day) || pos >= s.size() || (s[pos] != ' ' && s[pos] != 'T')) {
    return false;
  }
  ++pos;
  if (!fixed_digits(s, pos, 2, hour) || pos >= s.size() || s[pos++] != ':') return false;
  if (!fixed_digits(s, pos, 2, minute) || pos >= s.size() || s[pos++] != ':') return false;
  if (!fixed_digits(s, pos, 2, second)) return false;
  std::int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    std::int64_t scale = 100'000'000;
    while (pos < s.size() && is_digit(s[pos])) {
      if (++digits > 9) return false;
      frac_ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (digits == 0) return false;
  }
  std::int64_t offset_s = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      const int sign = s[pos++] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!fixed_digits(s, pos, 2, oh)) return false;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (!fixed_digits(s, pos, 2, om) || oh > 23 || om > 59) return false;
      offset_s = sign * (std::int64_t{oh} * 3600 + std::int64_t{om} * 60);
    }
  }
  if (pos != s.size()) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1) return false;
  const int month_days = kDays[month - 1] + (month == 2 && leap(year) ? 1 : 0);
  if (day > month_days || hour > 23 || minute > 59 || second > 60) return false;
  const std::int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t seconds =
      days * 86400 + std::int64_t{hour} * 3600 + std::int64_t{minute} * 60 + second - offset_s;
  out = seconds * kNsPerSecond + frac_ns;
  return true;
}

std::string format_ns_as_seconds(TimeNs ns) {
  std::string out = std::to_string(ns / kNsPerSecond);
  std::int64_t frac = ns % kNsPerSecond;
  if (frac != 0) {
    char digits[10];
    for (int i = 8; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    int len = 9;
    while (len > 0 && digits[len - 1] == '0') --len;
    out += '.';
    out.append(digits, static_cast<std::size_t>(len));
  }
  return out;
}

std::string quote_value(std::string_view text) {
  if (text.size() > 40) return "'" + std::string(text.substr(0, 37)) + "...'";
  return "'" + std::string(text) + "'";
}

Error row_error(const std::string& file, std::int64_t line, const RowError& error) {
  const int line_int = line > std::numeric_limits<int>::max() ? 0 : static_cast<int>(line);
  return Error(ErrorLocation{file, line_int, error.column, error.field}, error.message);
}

std::pair<int, int> line_col(const std::string& text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

}  // namespace kvsim::trace
