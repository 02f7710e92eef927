#include "trace/trace_format.h"

#include <algorithm>

#include "common/enum_names.h"
#include "common/strings.h"

namespace kvsim::trace {
namespace {

constexpr EnumNames<TraceFormat, 6> kFormatNames{{{
    {TraceFormat::kAuto, "auto"},
    {TraceFormat::kNative, "native"},
    {TraceFormat::kAzure, "azure"},
    {TraceFormat::kMooncake, "mooncake"},
    {TraceFormat::kBurstGpt, "burstgpt"},
    {TraceFormat::kVidur, "vidur"},
}}};

std::string unquote(std::string_view cell) {
  cell = trim(cell);
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(trim(cell));
}

}  // namespace

std::string_view format_name(TraceFormat format) {
  return kFormatNames.name(format);
}

std::vector<std::string> trace_format_names() {
  return kFormatNames.names();
}

TraceFormat parse_trace_format(std::string_view name, const ErrorLocation& where) {
  const std::string lower = to_lower(trim(name));
  if (lower == "splitwise") return TraceFormat::kVidur;
  if (const auto format = kFormatNames.parse(lower)) return *format;
  auto names = trace_format_names();
  throw Error(where, "expected a trace format (" + join(names, ", ") + "), got '" +
                         std::string(name) + "'" + did_you_mean(name, names));
}

CsvColumns csv_columns(TraceFormat format) {
  switch (format) {
    case TraceFormat::kNative:
      return {"arrival_s", "prompt_tokens", "output_tokens", "session_id", "prefix_hashes"};
    case TraceFormat::kAzure:
      return {"TIMESTAMP", "ContextTokens", "GeneratedTokens", nullptr, nullptr};
    case TraceFormat::kBurstGpt:
      return {"Timestamp", "Request tokens", "Response tokens", "Session ID", nullptr};
    case TraceFormat::kVidur:
      return {"arrived_at", "num_prefill_tokens", "num_decode_tokens", nullptr, nullptr};
    case TraceFormat::kAuto:
    case TraceFormat::kMooncake:
      break;
  }
  return {};
}

TraceFormat detect_trace_format(const std::string& path, std::string_view first_line) {
  const std::string_view line = trim(first_line);
  if (!line.empty() && line.front() == '{') return TraceFormat::kMooncake;
  std::vector<std::string> columns;
  for (const auto cell : split(line, ',')) columns.push_back(unquote(cell));
  const auto has = [&](const char* name) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  };
  for (const auto& [format, name] : kFormatNames.entries) {
    const CsvColumns c = csv_columns(format);
    if (c.arrival != nullptr && has(c.arrival) && has(c.prompt) && has(c.output)) return format;
  }
  const std::string lower_path = to_lower(path);
  if (line.empty() && (lower_path.ends_with(".jsonl") || lower_path.ends_with(".json"))) {
    return TraceFormat::kMooncake;
  }
  const std::string shown =
      line.size() > 80 ? std::string(line.substr(0, 77)) + "..." : std::string(line);
  throw Error(ErrorLocation{path, 1, 1, ""},
              "cannot detect the trace format from the first line '" + shown +
                  "': expected a header naming arrival_s,prompt_tokens,output_tokens (native), "
                  "TIMESTAMP,ContextTokens,GeneratedTokens (azure), Timestamp,Request "
                  "tokens,Response tokens (burstgpt), arrived_at,num_prefill_tokens,"
                  "num_decode_tokens (vidur), or a JSON object per line (mooncake); or pass "
                  "--trace-format");
}

}  // namespace kvsim::trace
