#include "test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "common/error.h"

extern char** environ;

namespace kvsim::test {

std::string source_dir() {
  return KVSIM_SOURCE_DIR;
}
std::string shared_data_dir() {
  return KVSIM_SHARED_DATA_DIR;
}

std::optional<std::string> shared_data_file(const std::string& relative) {
  const std::string path = shared_data_dir() + "/" + relative;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return path;
}

std::string temp_dir() {
  static std::atomic<int> counter{0};
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/kvsim_test_" +
                      std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

std::string write_temp_file(const std::string& dir, const std::string& name,
                            const std::string& content) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RunResult run_kvsim(const std::vector<std::string>& args) {
  const std::string dir = temp_dir();
  const std::string out_path = dir + "/stdout";
  const std::string err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> argv_storage;
  argv_storage.push_back(KVSIM_BINARY);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, KVSIM_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + std::string(KVSIM_BINARY));
  int status = 0;
  ::waitpid(pid, &status, 0);
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  ::rmdir(dir.c_str());
  return result;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void check_one_error(const RunResult& r, const std::vector<std::string>& expect) {
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("kvsim: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  std::size_t from = 0;
  for (const auto& part : expect) {
    INFO("expected, in order: " << part);
    const auto pos = r.err.find(part, from);
    CHECK(pos != std::string::npos);
    if (pos != std::string::npos) from = pos + part.size();
  }
}

}  // namespace kvsim::test
