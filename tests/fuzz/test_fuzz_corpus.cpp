// Every file of every fuzz corpus (tests/fuzz/corpus/<target>/), seeds and reproducers alike, fed
// to its parser: the only exception allowed out is kvsim::Error (which the target swallows), so
// the target must return normally.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <sstream>
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
  CHECK(total >= 14);
}

TEST_CASE("fuzz corpora: one folder per harness, one harness per folder", "[fuzz]") {
  // tests/fuzz/CMakeLists.txt builds one fuzz_<name> per target and scripts/fuzz runs one per
  // corpus folder: a folder without a target, or a target without a folder, is never fuzzed.
  const fs::path root = fs::path(kvsim::test::source_dir()) / "tests" / "fuzz" / "corpus";
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory()) folders.push_back(entry.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  std::vector<std::string> names;
  for (const kvsim::fuzz::Target& target : kvsim::fuzz::targets()) names.emplace_back(target.name);
  std::sort(names.begin(), names.end());
  CHECK(folders == names);
  CHECK(names.size() == 14);
  // The names in set(KVSIM_FUZZ_TARGETS ...).
  const std::string cmake = kvsim::test::slurp(
      (fs::path(kvsim::test::source_dir()) / "tests" / "fuzz" / "CMakeLists.txt").string());
  const std::string open = "set(KVSIM_FUZZ_TARGETS";
  const auto begin = cmake.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = cmake.find(')', begin);
  REQUIRE(end != std::string::npos);
  std::istringstream list(cmake.substr(begin + open.size(), end - begin - open.size()));
  std::vector<std::string> built{std::istream_iterator<std::string>(list),
                                 std::istream_iterator<std::string>()};
  std::sort(built.begin(), built.end());
  CHECK(built == names);
}
