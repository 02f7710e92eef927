// common/format.cpp: numbers formatted for people.
#include <cstdint>

#include <catch2/catch.hpp>

#include "common/format.h"

TEST_CASE("numbers are formatted for people", "[common]") {
  CHECK(kvsim::with_commas(std::int64_t{42949672960}) == "42,949,672,960");
  CHECK(kvsim::with_commas(std::int64_t{-1234}) == "-1,234");
  CHECK(kvsim::with_commas(std::int64_t{999}) == "999");
  CHECK(kvsim::human_bytes(42949672960ULL) == "42.95 GB");
  CHECK(kvsim::human_bytes_binary(42949672960ULL) == "40.00 GiB");
  CHECK(kvsim::percent(0.2041) == "20.4%");
  CHECK(kvsim::human_seconds(0.0123) == "12.3 ms");
}

TEST_CASE("format: commas at both ends of the integer range, units and exact bytes",
          "[common][format]") {
  CHECK(kvsim::with_commas(std::uint64_t{18446744073709551615ULL}) == "18,446,744,073,709,551,615");
  CHECK(kvsim::with_commas(std::int64_t{INT64_MIN}) == "-9,223,372,036,854,775,808");
  CHECK(kvsim::with_commas(std::int64_t{0}) == "0");
  CHECK(kvsim::with_commas(std::int64_t{1000}) == "1,000");
  CHECK(kvsim::fixed(3.14159, 2) == "3.14");
  CHECK(kvsim::fixed(2.5, 0) == "2");  // printf rounds half to even
  CHECK(kvsim::human_bytes(999) == "999 B");
  CHECK(kvsim::human_bytes(1000) == "1.00 kB");
  CHECK(kvsim::human_bytes_binary(1023) == "1023 B");
  CHECK(kvsim::human_bytes_binary(1536) == "1.50 KiB");
  CHECK(kvsim::exact_bytes(999) == "999 B");
  CHECK(kvsim::exact_bytes(42949672960ULL) == "42,949,672,960 B (42.95 GB)");
  CHECK(kvsim::percent(0.5, 0) == "50%");
  CHECK(kvsim::percent(1.0 / 3.0, 2) == "33.33%");
}

TEST_CASE("format: seconds in the unit a person would pick", "[common][format]") {
  CHECK(kvsim::human_seconds(0) == "0 s");
  CHECK(kvsim::human_seconds(850e-6) == "850.0 us");
  CHECK(kvsim::human_seconds(2.5e-6) == "2.50 us");
  CHECK(kvsim::human_seconds(0.005) == "5.00 ms");
  CHECK(kvsim::human_seconds(1.25) == "1.250 s");
  CHECK(kvsim::human_seconds(12.5) == "12.50 s");
  CHECK(kvsim::human_seconds(-0.0123) == "-12.3 ms");
}
