#include "common/format.h"

#include <cmath>
#include <cstdio>

namespace kvsim {

std::string with_commas(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[static_cast<std::size_t>(i)];
    const int remaining = n - 1 - i;
    if (remaining > 0 && remaining % 3 == 0) out += ',';
  }
  return out;
}

std::string with_commas(std::int64_t value) {
  if (value < 0) {
    std::string out = "-";
    out += with_commas(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(value));
    return out;
  }
  return with_commas(static_cast<std::uint64_t>(value));
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

namespace {

std::string scaled(double value, double base, const char* const* units, int num_units) {
  int unit = 0;
  while (unit + 1 < num_units && std::fabs(value) >= base) {
    value /= base;
    ++unit;
  }
  return fixed(value, unit == 0 ? 0 : 2) + " " + units[unit];
}

}  // namespace

std::string human_bytes(Bytes bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return scaled(static_cast<double>(bytes), 1000.0, kUnits, 6);
}

std::string human_bytes_binary(Bytes bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return scaled(static_cast<double>(bytes), 1024.0, kUnits, 6);
}

std::string exact_bytes(Bytes bytes) {
  std::string s = with_commas(bytes) + " B";
  if (bytes >= 1000) s += " (" + human_bytes(bytes) + ")";
  return s;
}

std::string percent(double fraction, int decimals) {
  return fixed(fraction * 100.0, decimals) + "%";
}

std::string human_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0.0) return "0 s";
  if (a < 1e-3) return fixed(seconds * 1e6, a < 1e-5 ? 2 : 1) + " us";
  if (a < 1.0) return fixed(seconds * 1e3, a < 1e-2 ? 2 : 1) + " ms";
  return fixed(seconds, a < 10 ? 3 : 2) + " s";
}

}  // namespace kvsim
