// Every file of every fuzz corpus (tests/fuzz/corpus/<target>/), seeds and reproducers alike, fed
// to its parser: the only exception allowed out is kvsim::Error (which the target swallows), so
// the target must return normally.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fuzz/fuzz_targets.h"
#include "test_util.h"

namespace fs = std::filesystem;

TEST_CASE("fuzz corpora: every parser lets only kvsim::Error out", "[fuzz][errors]") {
  const fs::path root = fs::path(kvsim::test::source_dir()) / "tests" / "fuzz" / "corpus";
  REQUIRE(fs::is_directory(root));
  std::size_t total = 0;
  for (const kvsim::fuzz::Target& target : kvsim::fuzz::targets()) {
    const fs::path dir = root / target.name;
    INFO("corpus " << dir.string());
    REQUIRE(fs::is_directory(dir));
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    CHECK(!files.empty());
    for (const fs::path& file : files) {
      INFO("input " << file.string());
      const std::string data = kvsim::test::slurp(file.string());
      CHECK_NOTHROW(target.run(data));
      ++total;
    }
  }
  CHECK(total >= 13);
}
