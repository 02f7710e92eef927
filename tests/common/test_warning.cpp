// common/warning.cpp: located warnings, to a test's sink or to stderr.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/warning.h"

using namespace kvsim;

TEST_CASE("warning: the sink gets the located text; the previous sink comes back",
          "[common][warning]") {
  std::vector<std::string> got;
  const WarningSink before = set_warning_sink([&](const std::string& t) { got.push_back(t); });
  warn(ErrorLocation{"m/config.json", 3, 5, "num_kv_heads"},
       "unknown key, assumed 'num_key_value_heads' is absent");
  warn(ErrorLocation{"", 0, 0, "--gpu-util"}, "does nothing here");
  const WarningSink mine = set_warning_sink(before);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == format_error(ErrorLocation{"m/config.json", 3, 5, "num_kv_heads"},
                               "unknown key, assumed 'num_key_value_heads' is absent"));
  CHECK(got[0].rfind("m/config.json:3:5: num_kv_heads: ", 0) == 0);
  CHECK(got[1] == format_error(ErrorLocation{"", 0, 0, "--gpu-util"}, "does nothing here"));
  REQUIRE(mine);
  mine("direct");  // the returned sink is the one installed
  CHECK(got.size() == 3);
}
