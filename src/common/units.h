#pragma once
// Units live in types and names. Inside the simulator time is TimeNs (integer nanoseconds) and
// sizes are Bytes; seconds appear only when a report is written.

#include <cmath>
#include <cstdint>
#include <limits>

namespace kvsim {

using TimeNs = std::int64_t;  // nanoseconds
using Bytes = std::uint64_t;  // bytes

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerSecond = 1'000'000'000;
inline constexpr TimeNs kTimeNever = std::numeric_limits<TimeNs>::max();

inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;
inline constexpr Bytes kGB = 1'000'000'000;

// Seconds → nanoseconds, rounded to nearest. Callers validate the range (|s| < ~292 years).
inline TimeNs seconds_to_ns(double seconds) {
  return std::llround(seconds * 1e9);
}
inline double ns_to_seconds(TimeNs ns) {
  return static_cast<double>(ns) / 1e9;
}

}  // namespace kvsim
