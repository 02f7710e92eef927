#include "common/error.h"

namespace kvsim {

std::string format_error(const ErrorLocation& location, const std::string& message) {
  std::string out;
  if (!location.file.empty()) {
    out += location.file;
    if (location.line > 0) {
      out += ':' + std::to_string(location.line);
      if (location.column > 0) out += ':' + std::to_string(location.column);
    }
    out += ": ";
  }
  if (!location.field.empty()) out += location.field + ": ";
  out += message;
  return out;
}

Error::Error(std::string message) : std::runtime_error(message), message_(std::move(message)) {}

Error::Error(ErrorLocation location, std::string message)
    : std::runtime_error(format_error(location, message)),
      location_(std::move(location)),
      message_(std::move(message)) {}

}  // namespace kvsim
