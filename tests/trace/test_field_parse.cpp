#include <catch2/catch.hpp>

#include "common/rng.h"
#include "trace/field_parse.h"

using namespace kvsim;
using namespace kvsim::trace;

TEST_CASE("decimal seconds become exact nanoseconds (no binary floating point)", "[trace][parse]") {
  TimeNs ns = -1;
  CHECK(parse_decimal_ns("0.052", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 52'000'000);
  CHECK(parse_decimal_ns("3435.948056", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 3'435'948'056'000);
  CHECK(parse_decimal_ns("0.1", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 100'000'000);
  CHECK(parse_decimal_ns("12", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 12'000'000'000);
  CHECK(parse_decimal_ns("1.5e-3", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 1'500'000);
  CHECK(parse_decimal_ns("2E2", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 200'000'000'000);
  // Rounded half up at the nanosecond.
  CHECK(parse_decimal_ns("0.0000000015", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 2);
  CHECK(parse_decimal_ns("0.0000000014999", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 1);
  // Milliseconds (Mooncake).
  CHECK(parse_decimal_ns("3536999", kNsPerMs, ns) == ParseStatus::kOk);
  CHECK(ns == 3'536'999'000'000);
  CHECK(parse_decimal_ns(" 7 ", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 7'000'000'000);
  CHECK(parse_decimal_ns("-0", kNsPerSecond, ns) == ParseStatus::kOk);
  CHECK(ns == 0);
}

TEST_CASE("malformed, negative and huge times are told apart", "[trace][parse]") {
  TimeNs ns = 0;
  CHECK(parse_decimal_ns("", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns("abc", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns("1.2.3", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns("1e", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns(".", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns("nan", kNsPerSecond, ns) == ParseStatus::kNotANumber);
  CHECK(parse_decimal_ns("-0.5", kNsPerSecond, ns) == ParseStatus::kNegative);
  CHECK(parse_decimal_ns("1e10", kNsPerSecond, ns) == ParseStatus::kOutOfRange);
  CHECK(parse_decimal_ns("99999999999999999999999", kNsPerSecond, ns) == ParseStatus::kOutOfRange);
}

TEST_CASE("format_ns_as_seconds is the exact inverse of the parser", "[trace][parse]") {
  CHECK(format_ns_as_seconds(0) == "0");
  CHECK(format_ns_as_seconds(1'500'000'000) == "1.5");
  CHECK(format_ns_as_seconds(52'000'000) == "0.052");
  CHECK(format_ns_as_seconds(1) == "0.000000001");
  CHECK(format_ns_as_seconds(12'000'000'000) == "12");
  Rng rng(11);
  for (int i = 0; i < 10000; ++i) {
    const TimeNs t = rng.uniform_int(0, 700'000'000'000'000LL);  // up to ~8 days
    TimeNs back = -1;
    REQUIRE(parse_decimal_ns(format_ns_as_seconds(t), kNsPerSecond, back) == ParseStatus::kOk);
    REQUIRE(back == t);
  }
}

TEST_CASE("Azure date-times convert exactly in 100 ns ticks", "[trace][parse]") {
  TimeNs a = 0, b = 0;
  REQUIRE(parse_datetime_ns("2023-11-16 18:17:03.9799600", a));
  REQUIRE(parse_datetime_ns("2023-11-16 18:17:04.0319600", b));
  CHECK(b - a == 52'000'000);
  // 1970-01-01 is the epoch; leap years count.
  REQUIRE(parse_datetime_ns("1970-01-01 00:00:00", a));
  CHECK(a == 0);
  REQUIRE(parse_datetime_ns("2024-03-01T00:00:00Z", a));
  REQUIRE(parse_datetime_ns("2024-02-28 00:00:00", b));
  CHECK(a - b == 2 * 86400 * kNsPerSecond);  // 2024 is a leap year
  REQUIRE(parse_datetime_ns("2023-11-16 18:17:03.1234567", a));
  REQUIRE(parse_datetime_ns("2023-11-16 18:17:03", b));
  CHECK(a - b == 123'456'700);
  REQUIRE(parse_datetime_ns("2024-05-10 10:00:00+02:00", a));
  REQUIRE(parse_datetime_ns("2024-05-10 08:00:00", b));
  CHECK(a == b);
  for (const char* bad :
       {"", "2023-11-16", "2023-13-01 00:00:00", "2023-02-29 00:00:00", "2023-11-16 24:00:00",
        "2023-11-16 18:17:03.", "2023-11-16 18:17:03.1234567890", "2023/11/16 18:17:03",
        "2023-11-16 18:17:03 x", "16-11-2023 18:17:03"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_datetime_ns(bad, a));
  }
}

TEST_CASE("counts reject signs, junk and overflow", "[trace][parse]") {
  std::int64_t v = 0;
  CHECK(parse_count("4808", v) == ParseStatus::kOk);
  CHECK(v == 4808);
  CHECK(parse_count("-5", v) == ParseStatus::kNegative);
  CHECK(parse_count("5.0", v) == ParseStatus::kNotANumber);
  CHECK(parse_count("", v) == ParseStatus::kNotANumber);
  CHECK(parse_count("9223372036854775808", v) == ParseStatus::kOutOfRange);
  std::uint64_t u = 0;
  CHECK(parse_u64("18446744073709551615", u) == ParseStatus::kOk);
  CHECK(u == 18446744073709551615ULL);
  CHECK(parse_u64("18446744073709551616", u) == ParseStatus::kOutOfRange);
}
