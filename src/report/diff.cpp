#include "report/diff.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/atomic_file.h"
#include "common/enum_names.h"
#include "common/error.h"

namespace kvsim::report {
namespace {

bool is_ignored(const DiffOptions& options, std::string_view path) {
  return std::any_of(options.ignore.begin(), options.ignore.end(),
                     [&](const std::string& p) { return glob_matches(p, path); });
}

bool in_scope(const DiffOptions& options, std::string_view path) {
  return options.only.empty() ||
         std::any_of(options.only.begin(), options.only.end(),
                     [&](const std::string& p) { return path_matches(p, path); });
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

bool is_container(const Json* v) {
  return v != nullptr && (v->is_object() || v->is_array());
}

// Leaves below `root` (1 for a scalar), without recursion.
std::int64_t count_leaves(const Json& root) {
  std::int64_t n = 0;
  std::vector<const Json*> stack{&root};
  while (!stack.empty()) {
    const Json* v = stack.back();
    stack.pop_back();
    if (v->is_object() || v->is_array()) {
      for (const auto& child : *v) stack.push_back(&child);
    } else {
      ++n;
    }
  }
  return n;
}

// The last key of a dotted path ("inputs.workload.trace.path" -> "path").
std::string_view last_key(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

bool is_path_field(std::string_view path) {
  const std::string_view key = last_key(path);
  return key == "path" || key == "source" || key == "lengths_from" || key == "config" ||
         key == "profile";
}

std::string normal_path(const std::string& s) {
  std::string n = std::filesystem::path(s).lexically_normal().generic_string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

// True when two strings name the same file (see the header).
bool same_path(const std::string& a, const std::string& b) {
  if (a.find("://") != std::string::npos || b.find("://") != std::string::npos) return false;
  if (a.empty() || b.empty()) return false;
  const std::string na = normal_path(a);
  const std::string nb = normal_path(b);
  if (na == nb) return true;
  const bool abs_a = !na.empty() && na[0] == '/';
  const bool abs_b = !nb.empty() && nb[0] == '/';
  if (abs_a != abs_b) {
    const std::string& abs = abs_a ? na : nb;
    const std::string& rel = abs_a ? nb : na;
    if (rel.rfind("..", 0) != 0 && abs.size() > rel.size() &&
        abs.compare(abs.size() - rel.size(), rel.size(), rel) == 0 &&
        abs[abs.size() - rel.size() - 1] == '/') {
      return true;
    }
  }
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(na, ea);
  const auto cb = std::filesystem::weakly_canonical(nb, eb);
  return !ea && !eb && ca == cb;
}

struct Work {
  const Json* base;
  const Json* next;
  std::string path;
};

class Walker {
 public:
  Walker(const DiffOptions& options, DiffResult& result)
      : options_(options), result_(result), matched_(options.require_match.size(), false) {}

  void run(const Json& base, const Json& next) {
    stack_.push_back({&base, &next, ""});
    while (!stack_.empty()) {
      Work w = std::move(stack_.back());
      stack_.pop_back();
      visit(w.base, w.next, w.path);
    }
    for (std::size_t i = 0; i < matched_.size(); ++i) {
      if (!matched_[i]) result_.unmatched.push_back(options_.require_match[i]);
    }
  }

 private:
  void note_match(const std::string& path) {
    for (std::size_t i = 0; i < matched_.size(); ++i) {
      if (!matched_[i] && glob_matches(options_.require_match[i], path)) matched_[i] = true;
    }
  }

  // Children of one node, pushed so that they pop in document order (BASE's keys, then NEW's
  // additions; array elements by index, the extra ones of the longer array only when `extras`).
  void push_children(const Json* base, const Json* next, const std::string& path, bool extras) {
    std::vector<Work> kids;
    const Json* shape = base != nullptr ? base : next;
    if (shape->is_object()) {
      if (base != nullptr) {
        for (auto it = base->begin(); it != base->end(); ++it) {
          const Json* n = nullptr;
          if (next != nullptr && next->is_object()) {
            const auto found = next->find(it.key());
            if (found != next->end()) n = &found.value();
          }
          kids.push_back({&it.value(), n, child(path, it.key())});
        }
      }
      if (next != nullptr && next->is_object()) {
        for (auto it = next->begin(); it != next->end(); ++it) {
          if (base == nullptr || !base->is_object() || base->find(it.key()) == base->end()) {
            kids.push_back({nullptr, &it.value(), child(path, it.key())});
          }
        }
      }
    } else {
      const std::size_t nb = base != nullptr && base->is_array() ? base->size() : 0;
      const std::size_t nn = next != nullptr && next->is_array() ? next->size() : 0;
      const std::size_t end = extras ? std::max(nb, nn) : std::min(nb, nn);
      for (std::size_t i = 0; i < end; ++i) {
        kids.push_back({i < nb ? &(*base)[i] : nullptr, i < nn ? &(*next)[i] : nullptr,
                        path + "[" + std::to_string(i) + "]"});
      }
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack_.push_back(std::move(*it));
  }

  void visit(const Json* base, const Json* next, const std::string& path) {
    if (!path.empty()) note_match(path);
    if (!path.empty() && is_ignored(options_, path)) {
      if (base == nullptr || next == nullptr || *base != *next) {
        add(make(path, DiffKind::kIgnored, base, next));
        ++result_.num_ignored;
      }
      return;
    }
    if (!in_scope(options_, path)) {
      // Out of scope: descend towards the paths `only` names, through whatever side exists.
      const bool same_shape = base != nullptr && next != nullptr &&
                              type_class(*base) == type_class(*next) && is_container(base);
      if (same_shape) {
        push_children(base, next, path, /*extras=*/true);
      } else {
        if (is_container(next)) push_children(nullptr, next, path, true);
        if (is_container(base)) push_children(base, nullptr, path, true);
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
      push_children(base, next, path, false);
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
      push_children(base, next, path, false);
      return;
    }
    ++result_.num_leaves;
    if (*base == *next) return;
    if (base->is_number()) {
      add(number_entry(path, *base, *next));
      return;
    }
    if (options_.normalize_paths && base->is_string() && is_path_field(path) &&
        same_path(base->get<std::string>(), next->get<std::string>())) {
      return;
    }
    add(make(path, DiffKind::kChanged, base, next));
  }

  DiffEntry number_entry(const std::string& path, const Json& base, const Json& next) const {
    DiffEntry e = make(path, DiffKind::kWithin, &base, &next);
    e.numeric = true;
    e.tolerance = tolerance_for(path);
    e.direction = direction_for(path);
    const double b = base.get<double>();
    const double n = next.get<double>();
    e.abs_change = n - b;
    e.rel_change = b != 0.0 ? (n - b) / std::fabs(b) : std::nan("");
    const bool within = std::fabs(n - b) <= e.tolerance.atol + e.tolerance.rtol * std::fabs(b);
    const bool better = (e.direction == Direction::kHigherIsBetter && n > b) ||
                        (e.direction == Direction::kLowerIsBetter && n < b);
    e.kind = within ? DiffKind::kWithin : better ? DiffKind::kImproved : DiffKind::kOutside;
    return e;
  }

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

  Direction direction_for(const std::string& path) const {
    Direction d = Direction::kEither;
    for (const auto& r : options_.directions) {
      if (path_matches(r.pattern, path)) d = r.direction;
    }
    return d;
  }

  void add(DiffEntry e) {
    if (diff_kind_fails(e.kind)) ++result_.num_failed;
    if (e.kind == DiffKind::kImproved) ++result_.num_improved;
    result_.entries.push_back(std::move(e));
  }

  const DiffOptions& options_;
  DiffResult& result_;
  std::vector<bool> matched_;
  std::vector<Work> stack_;
};

// Line and column (1-based) of byte `pos` of `text`.
std::pair<int, int> line_col(std::string_view text, std::size_t pos) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(pos - line_start) + 1};
}

[[noreturn]] void fail_at(std::string_view text, std::size_t pos, const std::string& name,
                          const std::string& message) {
  const auto [line, col] = line_col(text, pos);
  throw Error({name, line, col, ""}, "invalid JSON: " + message);
}

// One pass over the text outside strings: rejects nesting deeper than kMaxJsonDepth (before the
// parser builds it) and, when `check_numbers`, numbers beyond double range.
void scan_json(std::string_view text, const std::string& name, bool check_numbers) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) {
        fail_at(text, i, name, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (check_numbers && (c == '-' || (c >= '0' && c <= '9'))) {
      std::size_t end = i;
      while (end < text.size() &&
             std::string_view("0123456789+-.eE").find(text[end]) != std::string_view::npos) {
        ++end;
      }
      const std::string token(text.substr(i, end - i));
      errno = 0;
      const double v = std::strtod(token.c_str(), nullptr);
      if (std::isinf(v)) {
        fail_at(text, i, name, "number " + token + " is beyond the range of a double");
      }
      i = end - 1;
    }
  }
}

}  // namespace

std::vector<DirectionRule> default_directions() {
  std::vector<DirectionRule> rules;
  for (const char* p : {"**.throughput_rps",
                        "**.output_tokens_per_s",
                        "**.total_tokens_per_s",
                        "**.goodput_rps",
                        "**.slo_attainment",
                        "**.attainment",
                        "**.requests_completed",
                        "**.max_rate_rps",
                        "**.fail_rate_rps",
                        "**.capacity_rps",
                        "**.requests_per_gpu",
                        "**.throughput_per_gpu",
                        "**.per_user_tokens_per_s",
                        "**.max_cached_tokens",
                        "**.num_blocks",
                        "**.max_concurrent_sequences",
                        "**.kv_budget_bytes",
                        "**.replica_capacity_bytes",
                        "**.capacity_bytes",
                        "**.capacity_tokens",
                        "**.prefix_cache_hit_rate"}) {
    rules.push_back({p, Direction::kHigherIsBetter});
  }
  for (const char* p :
       {"**.ttft_s.*", "**.tpot_s.*", "**.itl_s.*", "**.e2e_s.*", "**.queue_s.*",
        "**.normalized_latency_s.*", "**.observed", "**.cost_per_hour", "**.gpus",
        "**.replicas_needed", "**.requests_rejected", "**.requests_unfinished", "**.preemptions",
        "**.preemptions_recompute", "**.preemptions_swap", "**.step_time_s"}) {
    rules.push_back({p, Direction::kLowerIsBetter});
  }
  return rules;
}

std::vector<std::string> default_ignore() {
  return {"kvsim_version",      "**.display_name",  "**.cost_model_provenance", "**.model.source",
          "**.hardware.source", "**.search.probes", "settings.source"};
}

constexpr EnumNames<DiffKind, 9> kDiffKindNames{{{
    {DiffKind::kWithin, "within"},
    {DiffKind::kOutside, "outside"},
    {DiffKind::kImproved, "improved"},
    {DiffKind::kChanged, "changed"},
    {DiffKind::kTypeChanged, "type"},
    {DiffKind::kRemoved, "removed"},
    {DiffKind::kAdded, "added"},
    {DiffKind::kLength, "length"},
    {DiffKind::kIgnored, "ignored"},
}}};

std::string_view diff_kind_name(DiffKind kind) {
  return kDiffKindNames.name(kind);
}

constexpr EnumNames<Direction, 3> kDirectionNames{{{
    {Direction::kEither, "either"},
    {Direction::kHigherIsBetter, "higher"},
    {Direction::kLowerIsBetter, "lower"},
}}};

std::string_view direction_name(Direction direction) {
  return kDirectionNames.name(direction);
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

Json parse_json_text(std::string_view text, const std::string& display_name) {
  scan_json(text, display_name, /*check_numbers=*/false);
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::out_of_range&) {
    scan_json(text, display_name, /*check_numbers=*/true);
    throw Error({display_name, 0, 0, ""}, "invalid JSON: a number is beyond the range of a double");
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based index of the last byte read: the offending one.
    const std::size_t pos = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
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
    fail_at(text, pos, display_name, reason);
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
  Walker(options, result).run(base, next);
  return result;
}

}  // namespace kvsim::report
