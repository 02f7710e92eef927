#pragma once
// Helpers the replay readers share (replay_readers.cpp, aiperf_reader.cpp); not a public API.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "trace/replay_run.h"

namespace kvsim::trace::detail {

Error run_error(const std::string& file, int line, int column, const std::string& field,
                const std::string& message);
// Parses one JSON document; a syntax error names its line (plus `line_offset`) and column.
nlohmann::json parse_json_text(const std::string& text, const std::string& file, int line_offset);
// Calls `fn` with each non-blank line of a JSON Lines file, parsed, and its 1-based line number.
void for_each_json_line(const std::string& path,
                        const std::function<void(const nlohmann::json&, int line)>& fn);
// `v` as a token count: a positive integer, else an error at the given place.
std::int64_t positive_count(double v, const std::string& file, int line, int column,
                            const std::string& field);
// Sorts by arrival (stable: ties keep file order) and shifts the first arrival to 0.
void normalize_arrivals(std::vector<RealRequest>& requests);
// TPOT = (e2e − ttft) / (output − 1) where all three are known, else −1.
void set_tpot(RealRequest& r);
// The last recorded end (arrival + e2e) over the requests, s.
double span_of(const std::vector<RealRequest>& requests);

}  // namespace kvsim::trace::detail
