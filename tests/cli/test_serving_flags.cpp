// cli/serving_flags.cpp: the flags of simulate and compare override the scenario's fields.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::ordered_json;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

}  // namespace

TEST_CASE("simulate: flags override the scenario's fields", "[sim][cli]") {
  const auto base =
      run_kvsim({"simulate", "--config", golden("two-requests/scenario.yaml"), "--format", "json"});
  const auto one = run_kvsim({"simulate", "--config", golden("two-requests/scenario.yaml"),
                              "--max-num-seqs", "1", "--scheduler", "static", "--format", "json"});
  REQUIRE(base.exit_code == 0);
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const Json b = Json::parse(base.out);
  const Json o = Json::parse(one.out);
  CHECK(b["inputs"]["serving"]["max_num_seqs"] == 256);
  CHECK(o["inputs"]["serving"]["max_num_seqs"] == 1);
  CHECK(o["inputs"]["serving"]["scheduler"] == "static");
  // One at a time: B waits for A's last token (5.2 ms: 2.0 + 1.1 + 1.1 + … ).
  CHECK(o["summary"]["queue_s"]["max"].get<double>() >
        b["summary"]["queue_s"]["max"].get<double>());
}
