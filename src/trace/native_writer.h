#pragma once
// Writing requests as a native CSV trace:
//   arrival_s,prompt_tokens,output_tokens[,session_id][,prefix_hashes]
// Arrivals are written as exact decimal seconds (up to 9 fractional digits), so reading the file
// back gives the same nanoseconds; prefix hashes are ';'-separated.

#include <cstdio>
#include <string>

#include "trace/request.h"

namespace kvsim::trace {

// Formats rows into a buffer and hands full chunks to a FILE*.
class NativeCsvWriter {
 public:
  // Writes the header for `columns` to `sink` (not owned; stays open). `display_name` names the
  // destination in errors.
  NativeCsvWriter(std::FILE* sink, TraceColumns columns, std::string display_name);
  ~NativeCsvWriter();
  NativeCsvWriter(const NativeCsvWriter&) = delete;
  NativeCsvWriter& operator=(const NativeCsvWriter&) = delete;

  void write(const RequestSpec& request);
  // Writes what is buffered; throws kvsim::Error naming the destination on a write error.
  void flush();

 private:
  std::FILE* sink_;
  TraceColumns columns_;
  std::string name_;
  std::string buffer_;
};

// A file that appears at `path` only when commit() succeeds: rows go to "<path>.tmp.<pid>",
// which commit() syncs and renames over `path`; the destructor removes it otherwise.
class AtomicOutputFile {
 public:
  // Throws kvsim::Error naming `path` when the temporary file cannot be created.
  explicit AtomicOutputFile(std::string path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  std::FILE* file() { return file_; }
  const std::string& path() const { return path_; }
  // Flushes, syncs and renames; throws kvsim::Error (and removes the temporary) on failure.
  void commit();

 private:
  std::string path_, tmp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace kvsim::trace
