#include "common/warning.h"

#include <cstdio>
#include <mutex>
#include <utility>

namespace kvsim {
namespace {

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

WarningSink& sink() {
  static WarningSink s;
  return s;
}

}  // namespace

void warn(const ErrorLocation& location, const std::string& message) {
  const std::string text = format_error(location, message);
  const std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink()) {
    sink()(text);
    return;
  }
  std::fprintf(stderr, "kvsim: warning: %s\n", text.c_str());
}

WarningSink set_warning_sink(WarningSink s) {
  const std::lock_guard<std::mutex> lock(sink_mutex());
  return std::exchange(sink(), std::move(s));
}

}  // namespace kvsim
