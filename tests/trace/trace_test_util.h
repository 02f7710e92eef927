#pragma once
// Helpers for trace tests: write a small trace, read it all.

#include <string>
#include <vector>

#include "test_util.h"
#include "trace/request.h"
#include "trace/workload.h"

namespace kvsim::test {

inline std::vector<trace::RequestSpec> read_all(trace::TraceReader& reader) {
  std::vector<trace::RequestSpec> out;
  for (trace::RequestSpec r; reader.next(r);) out.push_back(r);
  return out;
}

// Writes `content` to a fresh temp file `name` and returns its path.
inline std::string trace_file(const std::string& name, const std::string& content) {
  return write_temp_file(temp_dir(), name, content);
}

inline trace::TraceFileOptions file_options(const std::string& path, bool skip = false,
                                            trace::TraceFormat format = trace::TraceFormat::kAuto) {
  trace::TraceFileOptions f;
  f.path = path;
  f.skip_bad_rows = skip;
  f.format = format;
  return f;
}

}  // namespace kvsim::test
