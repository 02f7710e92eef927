#pragma once
// Files that are either complete or absent: content goes to "<path>.tmp.<pid>" in the same
// folder, is flushed, and is renamed over `path` only when fully written.

#include <string>
#include <string_view>

namespace kvsim {

// Writes `content` to `path` atomically. Throws kvsim::Error naming the path on any failure, and
// leaves neither `path` changed nor a temporary file behind.
void write_file_atomically(const std::string& path, std::string_view content);

// Checks, before any work is done, that write_file_atomically(path, ...) can succeed as far as
// the file system tells now: `path` is not a folder and its folder exists and is writable.
// Throws kvsim::Error naming `flag` (e.g. "--out") and the path otherwise. Empty `path`: no-op.
void check_output_path(const std::string& path, const std::string& flag);

// Reads a whole file; throws kvsim::Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace kvsim
