#pragma once
// Small string helpers shared by every layer: splitting, trimming, strict number parsing and
// "did you mean" suggestions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim {

std::string_view trim(std::string_view s);
// Splits on `sep`; keeps empty fields ("a,,b" → 3 fields).
std::vector<std::string_view> split(std::string_view s, char sep);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Whole-string parses: no leading/trailing junk, no overflow. nullopt on failure.
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);  // finite values only

// Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `name` when it is close enough to be a likely typo, else empty.
std::string suggest(std::string_view name, const std::vector<std::string>& candidates);

// ", did you mean 'x'?" or "" — ready to append to a message.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace kvsim
