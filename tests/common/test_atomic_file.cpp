#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "test_util.h"

TEST_CASE("atomic write replaces the file whole and leaves no temporary", "[common]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string path = dir + "/r.json";
  kvsim::write_file_atomically(path, "first");
  kvsim::write_file_atomically(path, "second");
  CHECK(kvsim::read_file(path) == "second");
  struct stat st {};
  CHECK(::stat((path + ".tmp." + std::to_string(::getpid())).c_str(), &st) != 0);
}

TEST_CASE("atomic write to an impossible path names the path", "[common]") {
  try {
    kvsim::write_file_atomically("/nonexistent-dir/x.json", "x");
    FAIL("expected an error");
  } catch (const kvsim::Error& e) {
    CHECK(e.location().file == "/nonexistent-dir/x.json");
  }
}
