// common/format.cpp: numbers formatted for people.
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
