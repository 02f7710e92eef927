#include "trace/trace_format.h"

#include <algorithm>

#include "common/strings.h"

namespace kvsim::trace {
namespace {

struct Known {
  TraceFormat format;
  const char* name;
  std::vector<std::string> header;  // required header columns, for detection
};

const std::vector<Known>& known_formats() {
  static const std::vector<Known> kKnown = {
      {TraceFormat::kAuto, "auto", {}},
      {TraceFormat::kNative, "native", {"arrival_s", "prompt_tokens", "output_tokens"}},
      {TraceFormat::kAzure, "azure", {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}},
      {TraceFormat::kMooncake, "mooncake", {}},
      {TraceFormat::kBurstGpt, "burstgpt", {"Timestamp", "Request tokens", "Response tokens"}},
      {TraceFormat::kVidur, "vidur", {"arrived_at", "num_prefill_tokens", "num_decode_tokens"}},
  };
  return kKnown;
}

std::string unquote(std::string_view cell) {
  cell = trim(cell);
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(trim(cell));
}

}  // namespace

std::string_view format_name(TraceFormat format) {
  for (const auto& k : known_formats()) {
    if (k.format == format) return k.name;
  }
  return "?";
}

std::vector<std::string> trace_format_names() {
  std::vector<std::string> names;
  for (const auto& k : known_formats()) names.emplace_back(k.name);
  return names;
}

TraceFormat parse_trace_format(std::string_view name, const ErrorLocation& where) {
  const std::string lower = to_lower(trim(name));
  if (lower == "splitwise") return TraceFormat::kVidur;
  for (const auto& k : known_formats()) {
    if (lower == k.name) return k.format;
  }
  auto names = trace_format_names();
  throw Error(where, "expected a trace format (" + join(names, ", ") + "), got '" +
                         std::string(name) + "'" + did_you_mean(name, names));
}

TraceFormat detect_trace_format(const std::string& path, std::string_view first_line) {
  const std::string_view line = trim(first_line);
  if (!line.empty() && line.front() == '{') return TraceFormat::kMooncake;
  std::vector<std::string> columns;
  for (const auto cell : split(line, ',')) columns.push_back(unquote(cell));
  const auto has_all = [&](const std::vector<std::string>& wanted) {
    return !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
      return std::find(columns.begin(), columns.end(), w) != columns.end();
    });
  };
  for (const auto& k : known_formats()) {
    if (has_all(k.header)) return k.format;
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
