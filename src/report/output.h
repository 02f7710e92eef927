#pragma once
// How every command delivers its result: --format table|json|csv to stdout (table by default on a
// terminal, JSON otherwise) and, with --out FILE, the JSON written atomically to FILE.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kvsim::report {

enum class Format { kTable, kJson, kCsv };

// "table" | "json" | "csv"; throws kvsim::Error (field "--format") otherwise.
Format parse_format(std::string_view name);
// kTable when stdout is a terminal, else kJson.
Format default_format();

// The three renderings of one result. Each is called at most once, only if needed; csv may be
// empty when a command has no CSV form (then --format csv is an error naming the command).
struct Renderers {
  std::function<std::string()> json;  // complete JSON document, ends with '\n'
  std::function<std::string()> table;
  std::function<std::string()> csv;
};

struct OutputOptions {
  std::string format;    // as given by --format; empty = default_format()
  std::string out_path;  // --out; empty = none
};

// Renders and writes: --out first (atomically), then stdout. Throws kvsim::Error on a bad format
// or an unwritable --out path, before anything is printed.
void emit(const OutputOptions& options, const Renderers& renderers, std::string_view command);

}  // namespace kvsim::report
