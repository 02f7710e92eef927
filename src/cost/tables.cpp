#include "cost/tables.h"

#include <algorithm>
#include <cmath>

#include "common/assert.h"
#include "cost/ops.h"

namespace kvsim::cost {

PreparedTable::PreparedTable(const model::MeasuredTable& table) {
  for (const auto& p : table.points) {
    KVSIM_ASSERT(p.x1 > 0 && p.time_s > 0 && p.x2 >= 0, "table points are validated on input");
    if (lines_.empty() || lines_.back().x2 != p.x2) {
      KVSIM_ASSERT(lines_.empty() || lines_.back().x2 < p.x2, "table points sorted by x2");
      lines_.push_back(Line{p.x2, std::log1p(p.x2), {}, {}});
    }
    Line& line = lines_.back();
    const double lx = std::log(p.x1);
    KVSIM_ASSERT(line.log_x1.empty() || line.log_x1.back() < lx, "table points sorted by x1");
    line.log_x1.push_back(lx);
    line.log_t.push_back(std::log(p.time_s));
    ++num_points_;
  }
}

double PreparedTable::along(const Line& line, double log_x1) {
  const auto& xs = line.log_x1;  // the caller checked that log_x1 is within [front, back]
  const auto it = std::lower_bound(xs.begin(), xs.end(), log_x1);
  const std::size_t hi = static_cast<std::size_t>(it - xs.begin());
  if (xs[hi] == log_x1) return line.log_t[hi];
  const std::size_t lo = hi - 1;
  const double t = (log_x1 - xs[lo]) / (xs[hi] - xs[lo]);
  return line.log_t[lo] + t * (line.log_t[hi] - line.log_t[lo]);
}

double PreparedTable::lookup(double x1, double x2) const {
  if (lines_.empty() || !(x1 > 0)) return -1.0;
  if (x2 < lines_.front().x2 || x2 > lines_.back().x2) return -1.0;
  const double lx = std::log(x1);
  const auto it = std::lower_bound(lines_.begin(), lines_.end(), x2,
                                   [](const Line& l, double v) { return l.x2 < v; });
  if (it->x2 == x2) {
    const auto& xs = it->log_x1;
    if (lx < xs.front() || lx > xs.back()) return -1.0;
    return std::exp(along(*it, lx));
  }
  const Line& hi = *it;
  const Line& lo = *(it - 1);
  if (lx < lo.log_x1.front() || lx > lo.log_x1.back()) return -1.0;
  if (lx < hi.log_x1.front() || lx > hi.log_x1.back()) return -1.0;
  const double a = along(lo, lx);
  const double b = along(hi, lx);
  const double t = (std::log1p(x2) - lo.log1p_x2) / (hi.log1p_x2 - lo.log1p_x2);
  return std::exp(a + t * (b - a));
}

TableIndex::TableIndex(const std::vector<model::MeasuredTable>& tables) {
  for (const auto& t : tables) {
    tables_.emplace(table_key(t.op, t.dtype, t.shape), PreparedTable(t));
  }
}

const PreparedTable* TableIndex::find(const std::string& key) const {
  const auto it = tables_.find(key);
  return it == tables_.end() ? nullptr : &it->second;
}

}  // namespace kvsim::cost
