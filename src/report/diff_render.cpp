// The renderings of a diff result: table, CSV, markdown (GitHub job summaries) and JSON.
#include <cmath>
#include <cstdio>

#include "report/diff.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

std::string format_g(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string value_text(const Json& v, bool present) {
  if (!present) return "-";
  if (v.is_object()) return v.empty() ? "{}" : "{...}";
  if (v.is_array()) return "[" + std::to_string(v.size()) + " items]";
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string change_text(const DiffEntry& e) {
  if (e.kind == DiffKind::kLength) {
    return "length " + e.base.dump() + " -> " + e.next.dump();
  }
  if (!e.numeric) return "";
  if (std::isnan(e.rel_change)) return (e.abs_change >= 0 ? "+" : "") + format_g(e.abs_change, 4);
  return (e.rel_change >= 0 ? "+" : "") + format_g(e.rel_change * 100.0, 3) + "%";
}

std::string tolerance_text(const DiffEntry& e) {
  if (!e.numeric) return "";
  std::string s = format_g(e.tolerance.rtol * 100.0, 3) + "%";
  if (e.tolerance.atol != 0.0) s += " + " + format_g(e.tolerance.atol, 4);
  return s;
}

std::string verdict_text(DiffKind kind) {
  switch (kind) {
    case DiffKind::kWithin:
      return "ok";
    case DiffKind::kOutside:
      return "FAIL";
    case DiffKind::kImproved:
      return "improved";
    case DiffKind::kChanged:
      return "FAIL (changed)";
    case DiffKind::kTypeChanged:
      return "FAIL (type)";
    case DiffKind::kRemoved:
      return "FAIL (removed)";
    case DiffKind::kAdded:
      return "added";
    case DiffKind::kLength:
      return "FAIL (length)";
    case DiffKind::kIgnored:
      return "ignored";
  }
  return "";
}

std::vector<std::string> entry_cells(const DiffEntry& e) {
  std::string base = e.kind == DiffKind::kLength ? "[" + e.base.dump() + " items]"
                                                 : value_text(e.base, e.has_base);
  std::string next = e.kind == DiffKind::kLength ? "[" + e.next.dump() + " items]"
                                                 : value_text(e.next, e.has_next);
  return {e.path, base, next, change_text(e), tolerance_text(e), verdict_text(e.kind)};
}

struct Counts {
  std::int64_t within = 0, added = 0;
};

Counts count(const DiffResult& result) {
  Counts c;
  for (const auto& e : result.entries) {
    c.within += e.kind == DiffKind::kWithin;
    c.added += e.kind == DiffKind::kAdded;
  }
  return c;
}

std::string summary_line(const DiffResult& result) {
  const Counts c = count(result);
  return "compared " + std::to_string(result.num_leaves) + " values: " + std::to_string(c.within) +
         " moved within tolerance, " + std::to_string(result.num_failed) + " failed, " +
         std::to_string(result.num_improved) + " improved, " + std::to_string(c.added) +
         " added, " + std::to_string(result.num_ignored) +
         " ignored: " + (result.passed() ? "PASS" : "FAIL");
}

// A markdown table cell: '|' escaped, code spans for paths.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

void md_table(std::string& out, const DiffResult& result, bool (*keep)(DiffKind)) {
  out += "| path | base | new | change | tolerance | verdict |\n";
  out += "| --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const auto& e : result.entries) {
    if (!keep(e.kind)) continue;
    const auto cells = entry_cells(e);
    out += "| `" + md_cell(cells[0].empty() ? "(document)" : cells[0]) + "` | " +
           md_cell(cells[1]) + " | " + md_cell(cells[2]) + " | " + md_cell(cells[3]) + " | " +
           md_cell(cells[4]) + " | " + md_cell(cells[5]) + " |\n";
  }
}

}  // namespace

std::string describe_failure(const DiffEntry& e) {
  std::string s = e.path.empty() ? std::string("(document)") : e.path;
  switch (e.kind) {
    case DiffKind::kOutside:
      return s + " (" + value_text(e.base, true) + " -> " + value_text(e.next, true) + ", " +
             change_text(e) + " > " + tolerance_text(e) + ")";
    case DiffKind::kLength:
      return s + " (" + change_text(e) + ")";
    case DiffKind::kRemoved:
      return s + " (removed)";
    case DiffKind::kTypeChanged:
      return s + " (type changed: " + value_text(e.base, true) + " -> " + value_text(e.next, true) +
             ")";
    default:
      return s + " (" + value_text(e.base, e.has_base) + " -> " + value_text(e.next, e.has_next) +
             ")";
  }
}

std::string diff_table(const DiffResult& result, const std::string& base_name,
                       const std::string& next_name) {
  std::string out;
  if (result.entries.empty()) {
    out = "kvsim diff: " + base_name + " vs " + next_name + ": no differences\n";
  } else {
    Table table({"path", "base", "new", "change", "tolerance", "verdict"});
    table.set_title("kvsim diff: " + base_name + " (base) vs " + next_name + " (new)");
    for (std::size_t c = 0; c < 6; ++c)
      table.set_align(c, c >= 1 && c <= 4 ? Align::kRight : Align::kLeft);
    for (const auto& e : result.entries) table.add_row(entry_cells(e));
    out = table.render();
  }
  return out + summary_line(result) + "\n";
}

std::string diff_csv(const DiffResult& result) {
  Table table({"path", "base", "new", "change", "tolerance", "verdict"});
  for (const auto& e : result.entries) {
    auto cells = entry_cells(e);
    // Full values in CSV: spreadsheets want the numbers, not abbreviations.
    if (e.kind != DiffKind::kLength) {
      cells[1] = e.has_base ? e.base.dump() : "";
      cells[2] = e.has_next ? e.next.dump() : "";
    }
    table.add_row(std::move(cells));
  }
  return table.render_csv();
}

std::string diff_markdown(const DiffResult& result, const std::string& base_name,
                          const std::string& next_name) {
  const Counts c = count(result);
  std::string out = "### kvsim diff: " + std::string(result.passed() ? "PASS" : "FAIL") + "\n\n";
  out += "`" + md_cell(base_name) + "` (base) vs `" + md_cell(next_name) +
         "` (new): " + summary_line(result) + "\n";
  if (result.num_failed > 0) {
    out += "\n#### Regressions (" + std::to_string(result.num_failed) + ")\n\n";
    md_table(out, result, [](DiffKind k) { return diff_kind_fails(k); });
  }
  if (result.num_improved > 0) {
    out += "\n#### Improvements (" + std::to_string(result.num_improved) + ")\n\n";
    md_table(out, result, [](DiffKind k) { return k == DiffKind::kImproved; });
  }
  const std::int64_t rest = c.within + c.added + result.num_ignored;
  if (rest > 0) {
    out += "\n<details><summary>" + std::to_string(c.within) + " within tolerance, " +
           std::to_string(c.added) + " added, " + std::to_string(result.num_ignored) +
           " ignored</summary>\n\n";
    md_table(out, result, [](DiffKind k) {
      return k == DiffKind::kWithin || k == DiffKind::kAdded || k == DiffKind::kIgnored;
    });
    out += "\n</details>\n";
  }
  return out;
}

Json diff_to_json(const DiffResult& result, const DiffOptions& options,
                  const std::string& base_name, const std::string& next_name) {
  Json j = envelope("kvsim.diff/v1", "diff");
  j["base"] = base_name;
  j["new"] = next_name;
  Json opts;
  opts["rtol"] = options.tolerance.rtol;
  opts["atol"] = options.tolerance.atol;
  opts["overrides"] = Json::array();
  for (const auto& o : options.overrides) {
    opts["overrides"].push_back(
        {{"pattern", o.pattern}, {"rtol", o.tolerance.rtol}, {"atol", o.tolerance.atol}});
  }
  opts["ignore"] = options.ignore;
  opts["only"] = options.only;
  opts["directions"] = Json::array();
  for (const auto& d : options.directions) {
    opts["directions"].push_back(
        {{"pattern", d.pattern}, {"better", std::string(direction_name(d.direction))}});
  }
  opts["normalize_paths"] = options.normalize_paths;
  j["options"] = std::move(opts);
  j["leaves"] = result.num_leaves;
  j["failed"] = result.num_failed;
  j["improved"] = result.num_improved;
  j["ignored"] = result.num_ignored;
  j["verdict"] = result.passed() ? "pass" : "fail";
  j["entries"] = Json::array();
  for (const auto& e : result.entries) {
    Json entry;
    entry["path"] = e.path;
    entry["verdict"] = std::string(diff_kind_name(e.kind));
    entry["base"] = e.has_base ? e.base : Json();
    entry["new"] = e.has_next ? e.next : Json();
    if (e.numeric) {
      entry["abs_change"] = e.abs_change;
      entry["rel_change"] = std::isnan(e.rel_change) ? Json() : Json(e.rel_change);
      entry["rtol"] = e.tolerance.rtol;
      entry["atol"] = e.tolerance.atol;
      entry["better"] = std::string(direction_name(e.direction));
    }
    j["entries"].push_back(std::move(entry));
  }
  return j;
}

}  // namespace kvsim::report
