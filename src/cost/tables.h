#pragma once
// Measured-time tables of a profile, prepared for fast interpolation.
//
// Invariants of a PreparedTable: lines are sorted by x2 with distinct x2; each line has at least
// one point, with strictly increasing x1; values are logs (x1 > 0 and time > 0 are enforced).

#include <map>
#include <string>
#include <vector>

#include "model/cost_profile.h"

namespace kvsim::cost {

class PreparedTable {
 public:
  explicit PreparedTable(const model::MeasuredTable& table);

  // Interpolated time in seconds at (x1, x2), or a negative value when (x1, x2) lies outside the
  // measured range: log time is linear in log x1 along each measured x2 line and linear in
  // log(1 + x2) between the two lines that bracket x2; both lines must cover x1. Exact points
  // return their measured time. No allocation.
  double lookup(double x1, double x2) const;

  std::size_t num_points() const { return num_points_; }

 private:
  struct Line {
    double x2 = 0;
    double log1p_x2 = 0;
    std::vector<double> log_x1;
    std::vector<double> log_t;
  };
  static double along(const Line& line, double log_x1);  // log time; log_x1 within the line
  std::vector<Line> lines_;
  std::size_t num_points_ = 0;
};

// Every table of a profile, by table_key() (cost/ops.h).
class TableIndex {
 public:
  TableIndex() = default;
  explicit TableIndex(const std::vector<model::MeasuredTable>& tables);
  // The table for a family, or nullptr.
  const PreparedTable* find(const std::string& key) const;
  bool empty() const { return tables_.empty(); }

 private:
  std::map<std::string, PreparedTable> tables_;
};

}  // namespace kvsim::cost
