// Golden scenarios: tests/golden/<case>/scenario.yaml run through the kvsim binary, compared byte
// for byte with the expected report and request log next to it (scripts/update-golden writes
// them; a test never does). The repository's absolute path is stripped before comparing.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::slurp;

namespace {

std::string strip_root(std::string text) {
  const std::string root = kvsim::test::source_dir() + "/";
  for (auto pos = text.find(root); pos != std::string::npos; pos = text.find(root, pos)) {
    text.erase(pos, root.size());
  }
  return text;
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  const auto dir = std::filesystem::path(kvsim::test::source_dir()) / "tests" / "golden";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (std::filesystem::exists(entry.path() / "scenario.yaml")) {
      cases.push_back(entry.path().string());
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace

TEST_CASE("Golden scenarios reproduce their expected reports byte for byte", "[sim][golden]") {
  const auto cases = golden_cases();
  REQUIRE(cases.size() >= 3);
  for (const std::string& dir : cases) {
    INFO("golden case " << dir << " (scripts/update-golden rewrites it after a reviewed change)");
    const std::string requests = kvsim::test::temp_dir() + "/requests.csv";
    const auto run = kvsim::test::run_kvsim({"simulate", "--config", dir + "/scenario.yaml",
                                             "--format", "json", "--requests", requests});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(strip_root(run.out) == slurp(dir + "/expected.json"));
    CHECK(slurp(requests) == slurp(dir + "/expected-requests.csv"));
  }
}
