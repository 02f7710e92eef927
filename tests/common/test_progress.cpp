// common/progress.cpp: the status line on stderr: drawn in place, erased or kept at the end,
// nothing at all when disabled.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "common/progress.h"
#include "test_util.h"

using kvsim::ProgressLine;

namespace {

// What `body` writes to stderr (file descriptor 2).
std::string stderr_of(const std::function<void()>& body) {
  const std::string path = kvsim::test::temp_dir() + "/stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(saved >= 0);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  body();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  return kvsim::test::slurp(path);
}

ProgressLine::Text text(const std::string& s) {
  return [s](double elapsed_s) {
    CHECK(elapsed_s >= 0);
    return s;
  };
}

}  // namespace

TEST_CASE("progress: disabled, it writes nothing", "[common][progress]") {
  const std::string out = stderr_of([] {
    ProgressLine p(false, ProgressLine::AtEnd::kKeep);
    CHECK_FALSE(p.enabled());
    p.update(text("a"), true);
    p.finish(text("b"));
  });
  CHECK(out.empty());
}

TEST_CASE("progress: each draw clears the line; a run's line is erased at the end",
          "[common][progress]") {
  const std::string out = stderr_of([] {
    ProgressLine p(true, ProgressLine::AtEnd::kErase);
    p.update(text("10%"));        // nothing shown yet: drawn
    p.update(text("20%"), true);  // forced
    p.finish();
    p.update(text("30%"), true);  // after the end: nothing
  });
  CHECK(out == "\r\033[K10%\r\033[K20%\r\033[K");
}

TEST_CASE("progress: the plan's bar is kept with a newline after a last draw",
          "[common][progress]") {
  const std::string out = stderr_of([] {
    ProgressLine p(true, ProgressLine::AtEnd::kKeep);
    p.update(text("1/2"));
    p.finish(text("2/2"));
    p.finish(text("again"));  // a second finish draws nothing
  });
  CHECK(out == "\r\033[K1/2\r\033[K2/2\n");
}

TEST_CASE("progress: a line never shown leaves nothing at the end, also from the destructor",
          "[common][progress]") {
  CHECK(stderr_of([] { ProgressLine p(true, ProgressLine::AtEnd::kKeep); }).empty());
  CHECK(stderr_of([] {
          ProgressLine p(true, ProgressLine::AtEnd::kErase);
          p.update(text("x"));
        }) == "\r\033[Kx\r\033[K");  // the destructor erases the shown line
}
