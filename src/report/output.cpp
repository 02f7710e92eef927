#include "report/output.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/strings.h"

namespace kvsim::report {

Format parse_format(std::string_view name) {
  if (name == "table") return Format::kTable;
  if (name == "json") return Format::kJson;
  if (name == "csv") return Format::kCsv;
  throw Error({"", 0, 0, "--format"}, "expected table|json|csv, got '" + std::string(name) + "'" +
                                          did_you_mean(name, {"table", "json", "csv"}));
}

Format default_format() {
  return ::isatty(STDOUT_FILENO) ? Format::kTable : Format::kJson;
}

void emit(const OutputOptions& options, const Renderers& renderers, std::string_view command) {
  const Format format = options.format.empty() ? default_format() : parse_format(options.format);
  if (format == Format::kCsv && !renderers.csv) {
    throw Error({"", 0, 0, "--format"},
                "'" + std::string(command) + "' has no CSV form; use table or json");
  }
  std::string json;
  if (!options.out_path.empty() || format == Format::kJson) json = renderers.json();
  if (!options.out_path.empty()) write_file_atomically(options.out_path, json);
  switch (format) {
    case Format::kJson:
      std::cout << json;
      break;
    case Format::kTable:
      std::cout << renderers.table();
      break;
    case Format::kCsv:
      std::cout << renderers.csv();
      break;
  }
  std::cout.flush();
}

}  // namespace kvsim::report
