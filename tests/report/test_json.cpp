// report/json.cpp: the envelope every document starts with, and the one way JSON is written.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "report/json.h"

using namespace kvsim::report;

TEST_CASE("json: the envelope names schema, version and command, in that order", "[report][json]") {
  const Json j = envelope("kvsim.report/v1", "simulate");
  REQUIRE(j.size() == 3);
  auto it = j.begin();
  CHECK(it.key() == "schema");
  CHECK(*it == "kvsim.report/v1");
  ++it;
  CHECK(it.key() == "kvsim_version");
  CHECK_FALSE(it->get<std::string>().empty());
  ++it;
  CHECK(it.key() == "command");
  CHECK(*it == "simulate");
}

TEST_CASE("json: dump indents by two, keeps insertion order, ends with a newline, nulls NaN",
          "[report][json]") {
  Json j;
  j["z"] = 1;
  j["a"] = {{"x", std::numeric_limits<double>::quiet_NaN()},
            {"y", std::numeric_limits<double>::infinity()}};
  j["s"] = std::string("bad \xff byte");
  CHECK(dump(j) ==
        "{\n  \"z\": 1,\n  \"a\": {\n    \"x\": null,\n    \"y\": null\n  },\n"
        "  \"s\": \"bad \xEF\xBF\xBD byte\"\n}\n");
  CHECK(dump(Json::array()) == "[]\n");
}
