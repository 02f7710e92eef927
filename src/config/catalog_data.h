#pragma once
// The shipped configs (configs/models/*.yaml, configs/hardware/*.yaml), compiled into the binary
// by src/config/embed_catalog.cmake.

#include <cstddef>
#include <span>

namespace kvsim::config {

struct EmbeddedFile {
  const char* path;  // relative to the repository root, e.g. "configs/models/llama-3-70b.yaml"
  const char* data;  // file bytes, NUL-terminated
  std::size_t size;  // bytes, without the terminating NUL
};

// Every embedded file, sorted by path.
std::span<const EmbeddedFile> embedded_catalog_files();

}  // namespace kvsim::config
