#pragma once
// Shared test helpers: where the data is, and running the kvsim binary as a user would.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kvsim::test {

// Repository root (compile definition, not the working directory).
std::string source_dir();
// ../shared/data relative to the repository root.
std::string shared_data_dir();
// A file under shared_data_dir(), or nullopt when it is absent (the caller SKIPs with a message).
std::optional<std::string> shared_data_file(const std::string& relative);
// A fresh empty temporary directory, removed by the OS's tmp cleaning (unique per call).
std::string temp_dir();

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built kvsim binary with `args` (no shell), capturing stdout and stderr.
RunResult run_kvsim(const std::vector<std::string>& args);

// The whole file, or "" when it cannot be read.
std::string slurp(const std::string& path);

// Writes `content` to `dir/name` and returns the path.
std::string write_temp_file(const std::string& dir, const std::string& name,
                            const std::string& content);

// Runs `f` and returns the message of the kvsim::Error it throws, or "(no error)".
std::string error_of(const std::function<void()>& f);

// Checks that `r` is the one way kvsim reports bad input (DESIGN.md): exit code 2, nothing on
// stdout, and one line "kvsim: error: ..." on stderr that contains each of `expect`, in order.
void check_one_error(const RunResult& r, const std::vector<std::string>& expect);

}  // namespace kvsim::test

// Skips the current test with a message when a shared data file is missing.
#define KVSIM_REQUIRE_SHARED(var, relative)                                                \
  const auto var##_opt = ::kvsim::test::shared_data_file(relative);                        \
  if (!var##_opt) {                                                                        \
    WARN("skipped: shared data file " << (relative) << " is absent (see ../shared/data)"); \
    return;                                                                                \
  }                                                                                        \
  const std::string var = *var##_opt
