#include "trace/line_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace kvsim::trace {
namespace {

constexpr std::size_t kChunk = 1 << 20;
constexpr std::size_t kMaxLine = 64u << 20;

}  // namespace

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  struct stat st {};
  const bool known = ::stat(path_.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    throw Error(ErrorLocation{path_, 0, 0, ""}, "expected a trace file, got a directory");
  }
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error(ErrorLocation{path_, 0, 0, ""},
                std::string("cannot open the trace file: ") + std::strerror(errno));
  }
  // A small file gets one buffer of its size rounded up to a power of two (one read, no
  // megabyte to zero; doubling still meets kMaxLine exactly); larger ones read in chunks.
  std::size_t size = kChunk;
  if (known && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) < kChunk) {
    size = std::bit_ceil(std::max<std::size_t>(4096, static_cast<std::size_t>(st.st_size) + 1));
  }
  buffer_.resize(size);
}

LineReader::~LineReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LineReader::fill() {
  if (eof_) return false;
  // Keep the unreturned bytes, moved to the front; grow when a line fills the whole buffer.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    if (buffer_.size() >= kMaxLine) {
      throw Error(ErrorLocation{path_, static_cast<int>(line_number_ + 1), 0, ""},
                  "expected a line shorter than 64 MiB (is this a text trace?)");
    }
    buffer_.resize(buffer_.size() * 2);
  }
  const std::size_t n = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
  if (n == 0) {
    if (std::ferror(file_)) {
      throw Error(ErrorLocation{path_, static_cast<int>(line_number_ + 1), 0, ""},
                  std::string("read error: ") + std::strerror(errno));
    }
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scan_from = begin_;
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(buffer_.data() + scan_from, '\n', end_ - scan_from);
    if (nl != nullptr) {
      const char* stop = static_cast<const char*>(nl);
      std::size_t len = static_cast<std::size_t>(stop - start);
      if (len > 0 && start[len - 1] == '\r') --len;
      line = std::string_view(start, len);
      begin_ = static_cast<std::size_t>(stop - buffer_.data()) + 1;
      break;
    }
    const std::size_t pending = end_ - begin_;
    if (!fill()) {
      if (end_ == begin_) return false;
      // Final line without a terminator.
      const char* last = buffer_.data() + begin_;
      std::size_t len = end_ - begin_;
      if (len > 0 && last[len - 1] == '\r') --len;
      line = std::string_view(last, len);
      begin_ = end_;
      break;
    }
    scan_from = begin_ + pending;  // fill() moved the pending bytes to begin_ == 0
  }
  ++line_number_;
  if (line_number_ == 1 && line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") {
    line.remove_prefix(3);
  }
  return true;
}

}  // namespace kvsim::trace
