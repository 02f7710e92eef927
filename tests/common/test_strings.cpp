#include <catch2/catch.hpp>

#include "common/format.h"
#include "common/strings.h"

TEST_CASE("split keeps empty fields", "[common]") {
  const auto parts = kvsim::split("a,,b,", ',');
  REQUIRE(parts.size() == 4);
  CHECK(parts[1].empty());
  CHECK(parts[3].empty());
}

TEST_CASE("parse_int and parse_double take whole strings only", "[common]") {
  CHECK(kvsim::parse_int("42") == 42);
  CHECK(kvsim::parse_int(" -8 ") == -8);
  CHECK_FALSE(kvsim::parse_int("4x"));
  CHECK_FALSE(kvsim::parse_int(""));
  CHECK_FALSE(kvsim::parse_int("99999999999999999999"));
  CHECK(kvsim::parse_double("1.5e3") == 1500.0);
  CHECK_FALSE(kvsim::parse_double("nan"));
  CHECK_FALSE(kvsim::parse_double("1.5.3"));
}

TEST_CASE("suggestions catch typos and ignore unrelated names", "[common]") {
  const std::vector<std::string> keys = {"kv_heads", "q_heads", "head_dim", "kind"};
  CHECK(kvsim::suggest("kv_head", keys) == "kv_heads");
  CHECK(kvsim::suggest("hed_dim", keys) == "head_dim");
  CHECK(kvsim::suggest("vocabulary", keys).empty());
  CHECK(kvsim::did_you_mean("kv_head", keys) == ", did you mean 'kv_heads'?");
}
