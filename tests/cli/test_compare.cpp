// `kvsim compare` (cli/compare.cpp) run as a user would.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::ordered_json;
using kvsim::test::slurp;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

}  // namespace

TEST_CASE("compare: several allocators side by side, in order", "[sim][cli]") {
  const auto run = run_kvsim({"compare", "--config", golden("external-fragmentation/scenario.yaml"),
                              "--allocator", "contiguous-oracle,paged", "--scheduler",
                              "vllm,static", "--format", "json"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  CHECK(j["schema"] == "kvsim.compare/v1");
  REQUIRE(j["runs"].size() == 4);
  const std::vector<std::string> labels = {"contiguous-oracle / vllm", "contiguous-oracle / static",
                                           "paged / vllm", "paged / static"};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(j["runs"][i]["schema"] == "kvsim.report/v1");
    CHECK(j["runs"][i]["command"] == "compare");
    CHECK(j["runs"][i]["label"] == labels[i]);
  }
  // The first column is the golden external-fragmentation case.
  CHECK(j["runs"][0]["memory"]["fraction"]["external_fragmentation"] == 0.08);
  CHECK(j["runs"][2]["memory"]["fraction"]["external_fragmentation"] == 0.0);
  const auto table =
      run_kvsim({"compare", "--config", golden("external-fragmentation/scenario.yaml"),
                 "--allocator", "contiguous-oracle,paged", "--format", "table"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("KV external fragmentation") != std::string::npos);
  CHECK(table.out.find("x)") != std::string::npos);
  const auto csv = run_kvsim({"compare", "--config", golden("external-fragmentation/scenario.yaml"),
                              "--allocator", "contiguous-oracle,paged", "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("label,model,gpu,", 0) == 0);
  CHECK(csv.out.find(",seed,requests_completed,") != std::string::npos);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 3);
}
