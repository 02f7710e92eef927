#pragma once
// Number formatting for tables (people); JSON never uses these.

#include <cstdint>
#include <string>

#include "common/units.h"

namespace kvsim {

// 42949672960 → "42,949,672,960".
std::string with_commas(std::int64_t value);
std::string with_commas(std::uint64_t value);
// Fixed decimals: fixed(3.14159, 2) → "3.14".
std::string fixed(double value, int decimals);
// Decimal units, 3 significant-ish digits: 42949672960 → "42.95 GB".
std::string human_bytes(Bytes bytes);
// Binary units: 42949672960 → "40.00 GiB".
std::string human_bytes_binary(Bytes bytes);
// Exact, then human: 42949672960 → "42,949,672,960 B (42.95 GB)"; under 1000 B no parenthesis.
std::string exact_bytes(Bytes bytes);
// 0.2041 → "20.4%".
std::string percent(double fraction, int decimals = 1);
// Seconds in the unit a person would pick: "850 us", "12.3 ms", "1.25 s".
std::string human_seconds(double seconds);

}  // namespace kvsim
