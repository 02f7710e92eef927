#pragma once
// Exact, allocation-free parsers for trace fields (the readers' hot path), and the row error
// that readers turn into kvsim::Error or a skipped-row count.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"
#include "common/units.h"

namespace kvsim::trace {

enum class ParseStatus { kOk, kNotANumber, kNegative, kOutOfRange };

// A non-negative decimal integer ("123", surrounding spaces allowed). kNegative for "-5".
ParseStatus parse_count(std::string_view text, std::int64_t& out);
ParseStatus parse_u64(std::string_view text, std::uint64_t& out);

// A non-negative decimal number of `unit_ns`-nanosecond units ("12", "0.052", "1.5e-3") →
// nanoseconds, rounded half up at the nanosecond, computed exactly from the digits (no binary
// floating point). Values beyond ~292 years are kOutOfRange.
ParseStatus parse_decimal_ns(std::string_view text, std::int64_t unit_ns, TimeNs& out);

// "YYYY-MM-DD HH:MM:SS[.f…]" (or 'T' between date and time; 0–9 fractional digits; an optional
// trailing "Z" or "+HH:MM"/"-HH:MM" offset) → nanoseconds since 1970-01-01 UTC, exactly.
// False on any other shape or an invalid date/time.
bool parse_datetime_ns(std::string_view text, TimeNs& out);

// "12.345678" style text for nanoseconds as seconds: the shortest exact decimal (up to 9
// fractional digits, no trailing zeros, no '.' for whole seconds). Inverse of
// parse_decimal_ns(…, kNsPerSecond, …) for non-negative values.
std::string format_ns_as_seconds(TimeNs ns);

// Text of a bad value for messages: quoted, shortened to 40 characters.
std::string quote_value(std::string_view text);

// 1-based line and column of byte `offset` in `text` (past the end: the end's position).
std::pair<int, int> line_col(const std::string& text, std::size_t offset);

// A bad row as a reader saw it; `column` is 1-based (a character position in the line).
struct RowError {
  int column = 0;
  std::string field;
  std::string message;
};

// kvsim::Error "file:line:column: field: message".
Error row_error(const std::string& file, std::int64_t line, const RowError& error);

}  // namespace kvsim::trace
