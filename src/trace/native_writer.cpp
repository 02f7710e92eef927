#include "trace/native_writer.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/error.h"
#include "trace/field_parse.h"

namespace kvsim::trace {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

void append_int(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;
  out.append(digits, end);
}

void append_csv_cell(std::string& out, const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) {
    out += cell;
    return;
  }
  out += '"';
  for (const char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

}  // namespace

NativeCsvWriter::NativeCsvWriter(std::FILE* sink, TraceColumns columns, std::string display_name)
    : sink_(sink), columns_(columns), name_(std::move(display_name)) {
  buffer_ = "arrival_s,prompt_tokens,output_tokens";
  if (columns_.session_id) buffer_ += ",session_id";
  if (columns_.prefix_hashes) buffer_ += ",prefix_hashes";
  buffer_ += '\n';
}

NativeCsvWriter::~NativeCsvWriter() = default;

void NativeCsvWriter::write(const RequestSpec& r) {
  buffer_ += format_ns_as_seconds(r.arrival_ns);
  buffer_ += ',';
  append_int(buffer_, static_cast<std::uint64_t>(r.prompt_tokens));
  buffer_ += ',';
  append_int(buffer_, static_cast<std::uint64_t>(r.output_tokens));
  if (columns_.session_id) {
    buffer_ += ',';
    append_csv_cell(buffer_, r.session_id);
  }
  if (columns_.prefix_hashes) {
    buffer_ += ',';
    for (std::size_t i = 0; i < r.prefix_hashes.size(); ++i) {
      if (i > 0) buffer_ += ';';
      append_int(buffer_, r.prefix_hashes[i]);
    }
  }
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) flush();
}

void NativeCsvWriter::flush() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), sink_) != buffer_.size()) {
    throw Error(ErrorLocation{name_, 0, 0, ""},
                std::string("cannot write: ") + std::strerror(errno));
  }
  buffer_.clear();
}

AtomicOutputFile::AtomicOutputFile(std::string path)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw Error(ErrorLocation{path_, 0, 0, ""},
                std::string("cannot write: ") + std::strerror(errno));
  }
}

AtomicOutputFile::~AtomicOutputFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void AtomicOutputFile::commit() {
  const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int err = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!ok || !closed || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const int e = ok && closed ? errno : err;
    std::remove(tmp_path_.c_str());
    throw Error(ErrorLocation{path_, 0, 0, ""}, std::string("cannot write: ") + std::strerror(e));
  }
  committed_ = true;
}

}  // namespace kvsim::trace
