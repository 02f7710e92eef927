#pragma once
// JSON building blocks shared by every report writer (report/ and cli/ only). Field order is
// insertion order (ordered_json), so output is stable byte for byte.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvsim::report {

using Json = nlohmann::ordered_json;

// {"schema": schema, "kvsim_version": ..., "command": command} — the head of every document.
Json envelope(std::string_view schema, std::string_view command);

// Two-space indented text with a final newline; non-finite doubles are written as null.
std::string dump(const Json& json);

}  // namespace kvsim::report
