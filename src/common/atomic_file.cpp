#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace kvsim {

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error({path, 0, 0, ""}, std::string("cannot write: ") + std::strerror(errno));
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error({path, 0, 0, ""}, std::string("cannot write: ") + std::strerror(err));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error({path, 0, 0, ""}, std::string("cannot write: ") + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error({path, 0, 0, ""}, std::string("cannot write: ") + std::strerror(err));
  }
}

void check_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  const ErrorLocation where{"", 0, 0, flag};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(where, "cannot write '" + path + "': it is a folder, expected a file name");
  }
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  if (!std::filesystem::exists(folder, ec)) {
    throw Error(where, "cannot write '" + path + "': folder '" + folder + "' does not exist");
  }
  if (!std::filesystem::is_directory(folder, ec)) {
    throw Error(where, "cannot write '" + path + "': '" + folder + "' is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw Error(where, "cannot write '" + path + "': folder '" + folder + "' is not writable (" +
                           std::strerror(errno) + ")");
  }
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error({path, 0, 0, ""}, "cannot read: is a folder, expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error({path, 0, 0, ""}, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error({path, 0, 0, ""}, "read failed");
  return buffer.str();
}

}  // namespace kvsim
