#pragma once
// The one error type for bad input (files, rows, fields, flags). main() catches it once, prints
// "kvsim: error: <what()>" and exits with code 2. Bugs use KVSIM_ASSERT instead.

#include <stdexcept>
#include <string>

namespace kvsim {

// Where the bad input is. Every part is optional: an empty file, a zero line or column, or an
// empty field is left out of the message.
struct ErrorLocation {
  std::string file;   // as the user gave it, e.g. "configs/models/x.yaml"
  int line = 0;       // 1-based; 0 = unknown
  int column = 0;     // 1-based; 0 = unknown
  std::string field;  // dotted path or column name, e.g. "attention.kv_heads"
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message);
  Error(ErrorLocation location, std::string message);

  const ErrorLocation& location() const { return location_; }
  // The message without the location prefix, e.g. "expected a positive integer, got -8".
  const std::string& message() const { return message_; }

 private:
  ErrorLocation location_;
  std::string message_;
};

// "file:line:col: field: message" with absent parts left out.
std::string format_error(const ErrorLocation& location, const std::string& message);

// Exit code for bad input, used by main and by commands that report instead of throwing.
inline constexpr int kExitBadInput = 2;

}  // namespace kvsim
