#include <catch2/catch.hpp>

#include "common/error.h"

using kvsim::Error;

TEST_CASE("errors name file, line, column and field in that order", "[common]") {
  Error e({"configs/x.yaml", 12, 5, "attention.kv_heads"}, "expected a positive integer, got -8");
  CHECK(std::string(e.what()) ==
        "configs/x.yaml:12:5: attention.kv_heads: expected a positive integer, got -8");
  CHECK(e.message() == "expected a positive integer, got -8");
  CHECK(e.location().line == 12);
}

TEST_CASE("absent parts of an error location are left out", "[common]") {
  CHECK(std::string(Error({"t.csv", 3, 0, ""}, "bad").what()) == "t.csv:3: bad");
  CHECK(std::string(Error({"", 0, 0, "--format"}, "bad").what()) == "--format: bad");
  CHECK(std::string(Error("plain").what()) == "plain");
}
