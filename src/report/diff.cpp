#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/atomic_file.h"
#include "common/error.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

// Whole-string glob: '*' = any run without '.', '**' = any run, '?' = one character.
bool glob_full(std::string_view p, std::string_view s) {
  if (p.empty()) return s.empty();
  if (p[0] == '*') {
    const bool deep = p.size() > 1 && p[1] == '*';
    const std::string_view rest = p.substr(deep ? 2 : 1);
    for (std::size_t i = 0;; ++i) {
      if (glob_full(rest, s.substr(i))) return true;
      if (i == s.size()) return false;
      if (!deep && s[i] == '.') return false;
    }
  }
  if (s.empty()) return false;
  if (p[0] != '?' && p[0] != s[0]) return false;
  return glob_full(p.substr(1), s.substr(1));
}

bool is_ignored(const DiffOptions& options, std::string_view path) {
  return std::any_of(options.ignore.begin(), options.ignore.end(),
                     [&](const std::string& p) { return glob_full(p, path); });
}

// JSON type with the three number types folded into one.
int type_class(const Json& v) {
  if (v.is_number()) return 0;
  if (v.is_string()) return 1;
  if (v.is_boolean()) return 2;
  if (v.is_null()) return 3;
  if (v.is_object()) return 4;
  return 5;  // array
}

std::int64_t count_leaves(const Json& v) {
  if (v.is_object() || v.is_array()) {
    std::int64_t n = 0;
    for (const auto& child : v) n += count_leaves(child);
    return n;
  }
  return 1;
}

class Walker {
 public:
  Walker(const DiffOptions& options, DiffResult& result) : options_(options), result_(result) {}

  void walk(const Json* base, const Json* next, const std::string& path) {
    if (!path.empty() && is_ignored(options_, path)) {
      if (base == nullptr || next == nullptr || *base != *next) {
        DiffEntry e = make(path, DiffKind::kIgnored, base, next);
        add(std::move(e));
        ++result_.num_ignored;
      }
      return;
    }
    if (next == nullptr) {
      result_.num_leaves += count_leaves(*base);
      add(make(path, DiffKind::kRemoved, base, nullptr));
      return;
    }
    if (base == nullptr) {
      result_.num_leaves += count_leaves(*next);
      add(make(path, DiffKind::kAdded, nullptr, next));
      return;
    }
    if (type_class(*base) != type_class(*next)) {
      result_.num_leaves += count_leaves(*base);
      add(make(path, DiffKind::kTypeChanged, base, next));
      return;
    }
    if (base->is_object()) {
      for (auto it = base->begin(); it != base->end(); ++it) {
        const auto found = next->find(it.key());
        walk(&it.value(), found == next->end() ? nullptr : &found.value(), child(path, it.key()));
      }
      for (auto it = next->begin(); it != next->end(); ++it) {
        if (base->find(it.key()) == base->end()) walk(nullptr, &it.value(), child(path, it.key()));
      }
      return;
    }
    if (base->is_array()) {
      if (base->size() != next->size()) {
        DiffEntry e;
        e.path = path;
        e.kind = DiffKind::kLength;
        e.base = base->size();
        e.next = next->size();
        add(std::move(e));
      }
      const std::size_t common = std::min(base->size(), next->size());
      for (std::size_t i = 0; i < common; ++i) {
        walk(&(*base)[i], &(*next)[i], path + "[" + std::to_string(i) + "]");
      }
      return;
    }
    ++result_.num_leaves;
    if (*base == *next) return;
    if (base->is_number()) {
      DiffEntry e = make(path, DiffKind::kWithin, base, next);
      e.numeric = true;
      e.tolerance = tolerance_for(path);
      const double b = base->get<double>();
      const double n = next->get<double>();
      e.abs_change = n - b;
      e.rel_change = b != 0.0 ? (n - b) / std::fabs(b) : std::nan("");
      const bool within = std::fabs(n - b) <= e.tolerance.atol + e.tolerance.rtol * std::fabs(b);
      e.kind = within ? DiffKind::kWithin : DiffKind::kOutside;
      add(std::move(e));
      return;
    }
    add(make(path, DiffKind::kChanged, base, next));
  }

 private:
  static std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  static DiffEntry make(const std::string& path, DiffKind kind, const Json* base,
                        const Json* next) {
    DiffEntry e;
    e.path = path;
    e.kind = kind;
    e.has_base = base != nullptr;
    e.has_next = next != nullptr;
    if (base) e.base = *base;
    if (next) e.next = *next;
    return e;
  }

  Tolerance tolerance_for(const std::string& path) const {
    Tolerance t = options_.tolerance;
    for (const auto& o : options_.overrides) {
      if (path_matches(o.pattern, path)) t = o.tolerance;
    }
    return t;
  }

  void add(DiffEntry e) {
    if (diff_kind_fails(e.kind)) ++result_.num_failed;
    result_.entries.push_back(std::move(e));
  }

  const DiffOptions& options_;
  DiffResult& result_;
};

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

}  // namespace

std::string_view diff_kind_name(DiffKind kind) {
  switch (kind) {
    case DiffKind::kWithin:
      return "within";
    case DiffKind::kOutside:
      return "outside";
    case DiffKind::kChanged:
      return "changed";
    case DiffKind::kTypeChanged:
      return "type";
    case DiffKind::kRemoved:
      return "removed";
    case DiffKind::kAdded:
      return "added";
    case DiffKind::kLength:
      return "length";
    case DiffKind::kIgnored:
      return "ignored";
  }
  return "";
}

bool diff_kind_fails(DiffKind kind) {
  return kind == DiffKind::kOutside || kind == DiffKind::kChanged ||
         kind == DiffKind::kTypeChanged || kind == DiffKind::kRemoved || kind == DiffKind::kLength;
}

std::vector<std::string> DiffResult::failed_paths() const {
  std::vector<std::string> paths;
  for (const auto& e : entries) {
    if (diff_kind_fails(e.kind)) paths.push_back(e.path);
  }
  return paths;
}

bool path_matches(std::string_view pattern, std::string_view path) {
  if (glob_full(pattern, path)) return true;
  for (std::size_t i = 1; i < path.size(); ++i) {
    if ((path[i] == '.' || path[i] == '[') && glob_full(pattern, path.substr(0, i))) return true;
  }
  return false;
}

Json parse_json_text(std::string_view text, const std::string& display_name) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based index of the last byte read: the offending one.
    const std::size_t pos = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < pos; ++i) {
      if (text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    std::string what = e.what();
    // nlohmann: "[json.exception.parse_error.101] parse error at line L, column C: <reason>".
    const std::size_t colon = what.find(": ", what.find("parse error"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    if (reason.rfind("syntax error while parsing ", 0) == 0) {
      reason = reason.substr(std::string("syntax error while parsing ").size());
    }
    // The offending bytes are located by line and column; nlohmann's echo of them may hold raw
    // newlines, so it is left out.
    const std::size_t echo = reason.find("; last read: '");
    if (echo != std::string::npos) {
      const std::size_t end = reason.find("'; expected", echo);
      reason.erase(echo, end == std::string::npos ? std::string::npos : end + 1 - echo);
    }
    throw Error({display_name, line, static_cast<int>(pos - line_start) + 1, ""},
                "invalid JSON: " + reason);
  }
}

Json parse_json_file(const std::string& path) {
  const std::string text = read_file(path);
  return parse_json_text(text, path);
}

void check_comparable(const Json& base, const Json& next, const std::string& base_name,
                      const std::string& next_name) {
  for (const auto* doc : {&base, &next}) {
    const std::string& name = doc == &base ? base_name : next_name;
    const auto it = doc->is_object() ? doc->find("schema") : doc->end();
    if (!doc->is_object() || it == doc->end() || !it->is_string()) {
      throw Error({name, 0, 0, "schema"},
                  "expected a kvsim JSON report (an object with a string \"schema\" field)");
    }
  }
  const std::string a = base["schema"].get<std::string>();
  const std::string b = next["schema"].get<std::string>();
  if (a != b) {
    throw Error({next_name, 0, 0, "schema"}, "cannot compare different schemas: " + base_name +
                                                 " is " + a + ", " + next_name + " is " + b);
  }
}

DiffResult diff_json(const Json& base, const Json& next, const DiffOptions& options) {
  DiffResult result;
  Walker(options, result).walk(&base, &next, "");
  return result;
}

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
  std::int64_t within = 0, added = 0;
  for (const auto& e : result.entries) {
    within += e.kind == DiffKind::kWithin;
    added += e.kind == DiffKind::kAdded;
  }
  out += "compared " + std::to_string(result.num_leaves) + " values: " + std::to_string(within) +
         " moved within tolerance, " + std::to_string(result.num_failed) + " failed, " +
         std::to_string(added) + " added, " + std::to_string(result.num_ignored) +
         " ignored: " + (result.passed() ? "PASS" : "FAIL") + "\n";
  return out;
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
  j["options"] = std::move(opts);
  j["leaves"] = result.num_leaves;
  j["failed"] = result.num_failed;
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
    }
    j["entries"].push_back(std::move(entry));
  }
  return j;
}

}  // namespace kvsim::report
