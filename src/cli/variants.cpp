#include "cli/variants.h"

#include <unistd.h>

#include <string>
#include <string_view>

#include "kernels/device.h"
#include "plan/cluster.h"

namespace kvsim::cli {
namespace {

// The directory of the running executable, with a trailing '/'; empty when unknown.
std::string self_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  const std::string path(buf, static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// The sibling `argv` needs, or nullptr. The subcommand is the first argument that is not an
// option (kvsim's global options take no value).
const char* sibling_for(int argc, char** argv) {
  int sub = 1;
  while (sub < argc && argv[sub][0] == '-') ++sub;
  if (sub >= argc) return nullptr;
  const std::string_view command = argv[sub];
  if (command == "calibrate" && !kernels::cuda_compiled()) {
    for (int i = sub + 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--device" || arg.starts_with("--device=")) return "kvsim-device";
    }
  }
  if (command == "plan" && !plan::built_with_mpi() && plan::launched_by_mpi()) return "kvsim-mpi";
  return nullptr;
}

}  // namespace

void exec_sibling_if_needed(int argc, char** argv) {
  const char* sibling = sibling_for(argc, argv);
  if (sibling == nullptr) return;
  const std::string dir = self_dir();
  if (dir.empty()) return;
  const std::string path = dir + sibling;
  if (access(path.c_str(), X_OK) != 0) return;
  execv(path.c_str(), argv);  // returns only on failure
}

}  // namespace kvsim::cli
