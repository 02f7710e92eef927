#pragma once
// One-line warnings for input kvsim reads but suspects (an HF config key one edit away from one
// kvsim reads). They go to stderr as "kvsim: warning: <location>: <message>" unless a test
// installs a sink. Warnings never change a result; they say what was assumed.

#include <functional>
#include <string>

#include "common/error.h"

namespace kvsim {

// Prints (or hands to the sink) format_error(location, message) as a warning.
void warn(const ErrorLocation& location, const std::string& message);

// Replaces where warnings go (the full "file:line:col: field: message" text) and returns the
// previous sink; an empty function restores stderr. For tests.
using WarningSink = std::function<void(const std::string&)>;
WarningSink set_warning_sink(WarningSink sink);

}  // namespace kvsim
