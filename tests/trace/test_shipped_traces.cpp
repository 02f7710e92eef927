// traces/README.md documents the exact command behind each shipped trace; re-running each
// command must reproduce the file byte for byte.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "common/strings.h"
#include "test_util.h"

using kvsim::test::slurp;

TEST_CASE("every shipped trace is reproduced by its documented kvsim trace gen command",
          "[trace][shipped]") {
  const std::string root = kvsim::test::source_dir();
  std::istringstream readme(slurp(root + "/traces/README.md"));
  int commands = 0;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("kvsim trace gen ", 0) != 0) continue;
    ++commands;
    std::vector<std::string> args;
    const std::string command = line.substr(6);  // without "kvsim "
    for (const auto word : kvsim::split(command, ' ')) {
      if (!word.empty()) args.emplace_back(word);
    }
    const auto out = std::find(args.begin(), args.end(), "--out-trace");
    REQUIRE(out != args.end());
    REQUIRE(out + 1 != args.end());
    const std::string shipped = root + "/" + *(out + 1);
    const std::string fresh = kvsim::test::temp_dir() + "/fresh.csv";
    *(out + 1) = fresh;
    args.push_back("--format");
    args.push_back("json");
    CAPTURE(line);
    const auto r = kvsim::test::run_kvsim(args);
    REQUIRE(r.exit_code == 0);
    const std::string expected = slurp(shipped);
    CHECK(!expected.empty());
    CHECK(slurp(fresh) == expected);
  }
  CHECK(commands == 4);
}
