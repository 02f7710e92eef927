#include "cost/measurement_csv.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "common/strings.h"

namespace kvsim::cost {

CsvFile read_csv(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ErrorLocation{path, 0, 0, ""},
                "cannot read: is a directory, expected a measurements CSV file");
  }
  std::ifstream in(path);
  if (!in) throw Error(ErrorLocation{path, 0, 0, ""}, "cannot open file");
  CsvFile f;
  f.path = path;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> cells;
    for (std::string_view c : split(line, ',')) cells.emplace_back(trim(c));
    if (f.header.empty()) {
      f.header = cells;
      for (std::size_t i = 0; i < cells.size(); ++i) f.column[cells[i]] = i;
      continue;
    }
    if (cells.size() != f.header.size()) {
      throw Error(ErrorLocation{path, number, 0, ""},
                  "expected " + std::to_string(f.header.size()) + " cells, got " +
                      std::to_string(cells.size()));
    }
    f.rows.emplace_back(number, std::move(cells));
  }
  if (f.header.empty())
    throw Error(ErrorLocation{path, 0, 0, ""}, "expected a CSV header, got an empty file");
  return f;
}

const std::string& CsvRow::cell(const std::string& name) const {
  const auto it = f_.column.find(name);
  if (it == f_.column.end()) {
    throw Error(ErrorLocation{f_.path, 1, 0, name}, "expected a column named '" + name + "'");
  }
  return cells_[it->second];
}

ErrorLocation CsvRow::where(const std::string& name) const {
  const auto it = f_.column.find(name);
  return ErrorLocation{f_.path, line_, it == f_.column.end() ? 0 : static_cast<int>(it->second) + 1,
                       name};
}

std::int64_t CsvRow::integer(const std::string& name, bool required, std::int64_t min) const {
  const std::string& s = cell(name);
  if (s.empty()) {
    if (required) throw Error(where(name), "expected an integer, got an empty cell");
    return 0;
  }
  const auto v = parse_int(s);
  if (!v || *v < min || *v > kMaxMeasuredDimension) {
    throw Error(where(name), "expected an integer in [" + std::to_string(min) + ", " +
                                 std::to_string(kMaxMeasuredDimension) + "], got '" + s + "'");
  }
  return *v;
}

double CsvRow::number(const std::string& name, bool required, double min, double max) const {
  const std::string& s = cell(name);
  if (s.empty()) {
    if (required) throw Error(where(name), "expected a number, got an empty cell");
    return 0;
  }
  const auto v = parse_double(s);
  if (!v || *v < min || *v > max) {
    throw Error(where(name),
                "expected a number >= " + std::to_string(min) + " and <= 1e18, got '" + s + "'");
  }
  return *v;
}

double CsvRow::positive(const std::string& name, double unit_us) const {
  const double v = number(name, true, 0, std::numeric_limits<double>::max());
  if (!(v > 0)) throw Error(where(name), "expected a positive time, got '" + cell(name) + "'");
  if (v * unit_us > kMaxMeasuredTimeUs) {
    throw Error(where(name), "expected a time of at most 1e9 us (1000 s), got '" + cell(name) +
                                 "'" + (unit_us == 1 ? "" : " ms"));
  }
  return v;
}

}  // namespace kvsim::cost
