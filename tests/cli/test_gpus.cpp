// cli/gpus.cpp: `kvsim gpus` lists every shipped GPU profile, one row each, with its numbers.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

TEST_CASE("kvsim gpus: JSON and CSV list the same GPUs in the same order, with their numbers",
          "[cli][catalog]") {
  const auto g = run_kvsim({"gpus", "--format", "json"});
  REQUIRE(g.exit_code == 0);
  const Json j = Json::parse(g.out);
  REQUIRE(j["gpus"].is_array());
  std::vector<std::string> names;
  for (const auto& row : j["gpus"]) names.push_back(row["name"].get<std::string>());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no duplicates
  const auto a100 = std::find(names.begin(), names.end(), "a100-40gb");
  REQUIRE(a100 != names.end());
  const Json& row = j["gpus"][static_cast<std::size_t>(a100 - names.begin())];
  CHECK(row["memory_bytes"] == 42'949'672'960ULL);  // 40 GiB
  CHECK(row["peak_flops"]["bf16"] == 312e12);
  CHECK(run_kvsim({"gpus", "--format", "json"}).out == g.out);  // deterministic

  const auto csv = run_kvsim({"gpus", "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line.rfind("name,display_name,memory_bytes,", 0) == 0);
  std::vector<std::string> csv_names;
  while (std::getline(lines, line)) csv_names.push_back(line.substr(0, line.find(',')));
  CHECK(csv_names == names);
  CHECK(csv.out.find("\na100-40gb,NVIDIA A100 SXM4 40GB,42949672960,1555000000000,") !=
        std::string::npos);

  const auto bad = run_kvsim({"gpus", "--format", "yaml"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--format") != std::string::npos);
}
