#pragma once
// Strict parsing of flag values given as text, shared by the commands. Every failure is a
// kvsim::Error whose field is the flag ("--block-size") and whose message says what was expected
// and what was given (exit 2).

#include <cstdint>
#include <string>

#include "common/error.h"

namespace kvsim::cli {

Error flag_error(const std::string& flag, const std::string& message);

// An integer / a number; otherwise "expected <expected>, got '<text>'".
std::int64_t int_flag(const std::string& flag, const std::string& text,
                      const std::string& expected);
double double_flag(const std::string& flag, const std::string& text, const std::string& expected);

// An integer >= lo: "expected a positive integer[ >= lo]" (lo >= 1) or "a non-negative integer".
std::int64_t int_at_least(const std::string& flag, const std::string& text, std::int64_t lo);

// A number in (lo, hi] when open_low, else [lo, hi]; otherwise "expected <expected>, got ...".
double number_in(const std::string& flag, const std::string& text, double lo, double hi,
                 bool open_low, const std::string& expected);

}  // namespace kvsim::cli
