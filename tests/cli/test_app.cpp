#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;

TEST_CASE("kvsim --version prints the version and exits 0", "[cli]") {
  const auto r = run_kvsim({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("kvsim ") == 0);
}

TEST_CASE("an unknown subcommand or flag is bad input: exit 2 with a message", "[cli]") {
  const auto r = run_kvsim({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("kvsim: error:") == 0);
}
