// cli/models.cpp and cli/gpus.cpp: `kvsim models` and `kvsim gpus` list what ships.
#include <algorithm>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("kvsim models and kvsim gpus list what ships", "[cli][catalog]") {
  const auto m = run_kvsim({"models", "--format", "json"});
  REQUIRE(m.exit_code == 0);
  const Json models = Json::parse(m.out);
  CHECK(models["schema"] == "kvsim.models/v1");
  REQUIRE(models["models"].size() == 15);
  CHECK(models["models"][0]["name"] == "deepseek-v2-lite");
  CHECK(models["models"][0]["kv_bytes_per_token"] == 31'104);
  CHECK(models["models"][1]["name"] == "deepseek-v3.2");
  CHECK(models["models"][1]["kv_bytes_per_token"] == 48'068);  // fp8_ds_mla + indexer keys
  const auto mt = run_kvsim({"models", "--format", "table"});
  CHECK(has(mt.out, "llama-3-70b"));
  CHECK(has(mt.out, "327,680"));
  const auto mc = run_kvsim({"models", "--format", "csv"});
  CHECK(std::count(mc.out.begin(), mc.out.end(), '\n') == 16);

  const auto g = run_kvsim({"gpus", "--format", "json"});
  REQUIRE(g.exit_code == 0);
  const Json gpus = Json::parse(g.out);
  CHECK(gpus["schema"] == "kvsim.gpus/v1");
  REQUIRE(gpus["gpus"].size() == 11);
  const auto gt = run_kvsim({"gpus", "--format", "table"});
  CHECK(has(gt.out, "h100-sxm"));
  CHECK(has(gt.out, "mi300x"));
  const auto gc = run_kvsim({"gpus", "--format", "csv"});
  CHECK(std::count(gc.out.begin(), gc.out.end(), '\n') == 12);
}
