#pragma once
// The CSV reader the measurement importers share (cost/measurements.cpp for kvsim's and Vidur's
// formats, cost/aiconfigurator.cpp for NVIDIA aiconfigurator's tables): a whole file as header
// and rows, and typed, range-checked cells whose errors name file, line, column and field.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace kvsim::cost {

// Upper bounds of a measurement (README "Limits"): one kernel's time, a byte count and a shape
// dimension (tokens, heads, GPUs).
inline constexpr double kMaxMeasuredTimeUs = 1e9;
inline constexpr double kMaxMeasuredBytes = 1e18;
inline constexpr std::int64_t kMaxMeasuredDimension = 1'000'000'000;

struct CsvFile {
  std::string path;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> column;                   // name → index
  std::vector<std::pair<int, std::vector<std::string>>> rows;  // (line, cells)
};

// Reads `path`: blank lines skipped, cells trimmed, CRLF accepted, every row as wide as the
// header. Throws kvsim::Error for a directory, an unreadable or empty file, or a ragged row.
CsvFile read_csv(const std::string& path);

// One row of a CsvFile, read cell by cell.
class CsvRow {
 public:
  CsvRow(const CsvFile& f, const std::pair<int, std::vector<std::string>>& row)
      : f_(f), line_(row.first), cells_(row.second) {}

  bool has_column(const std::string& name) const { return f_.column.count(name) > 0; }
  // The cell of column `name`; throws (line 1, the header) when there is no such column.
  const std::string& cell(const std::string& name) const;
  ErrorLocation where(const std::string& name) const;
  // Integer cell in [min, kMaxMeasuredDimension]; empty → 0 unless `required`.
  std::int64_t integer(const std::string& name, bool required, std::int64_t min = 0) const;
  // Number cell in [min, max]; empty → 0 unless `required`.
  double number(const std::string& name, bool required, double min = 0,
                double max = kMaxMeasuredBytes) const;
  // A time in units of `unit_us` microseconds (1 for time_us, 1000 for milliseconds): positive
  // and at most 1e9 us (1000 s for one kernel).
  double positive(const std::string& name, double unit_us = 1) const;
  int line() const { return line_; }
  const CsvFile& file() const { return f_; }
  const std::vector<std::string>& cells() const { return cells_; }

 private:
  const CsvFile& f_;
  int line_;
  const std::vector<std::string>& cells_;
};

}  // namespace kvsim::cost
