#pragma once
// `kvsim diff`: compares two kvsim JSON documents (any schema: kvsim.report/v1, compare/v1,
// plan/v1, trace-stats/v1, cost/v1, ...) leaf by leaf, for CI regression checks.
//
// Rules (the contract the CLI documents):
//  - Both documents must be JSON objects with the same string "schema" field, nested at most
//    kMaxJsonDepth deep, with every number representable as a double; anything else is unusable
//    input (kvsim::Error, exit 2).
//  - Leaves are addressed by dotted paths with array indices: "summary.ttft_s.p99",
//    "runs[1].memory.fraction.free", "deployments[0].max_rate_rps".
//  - A number is within tolerance when |new − base| <= atol + rtol × |base| (numpy.isclose), with
//    the tolerance of the last matching override, else the defaults. Integers that are equal are
//    identical; rtol applies to them as to any number (give a 0 override for exact counts).
//  - A number beyond tolerance fails, unless its path has a direction (the last matching
//    direction rule: kvsim's defaults, then the user's) and it moved the good way: then it is
//    an improvement, listed, and passes. Latency and cost are lower-is-better, capacity and
//    throughput higher-is-better by default (default_directions()).
//  - Any other leaf (string, bool, null) must be equal; a change fails. Strings at path-valued
//    fields (keys "path", "source", "lengths_from", "config", "profile") are compared as paths
//    when `normalize_paths`: "./traces/a.csv", "traces//a.csv" and "/ci/repo/traces/a.csv" are
//    the same file (lexically normalized; an absolute path equals a relative one it ends with).
//  - A value whose JSON type changes (number → string, object → array, number → null) fails.
//  - A field present in BASE and missing from NEW fails ("removed"): dashboards depend on it.
//    A field only in NEW is listed as "added" and does not fail (reports add fields freely).
//  - Arrays of different length fail once at the array's path ("length"); the elements both
//    have (the common prefix) are still compared leaf by leaf, the extra ones are not listed.
//  - A path matching an ignore pattern, or inside a subtree that matches one, is skipped (and
//    counted as ignored when it differs). default_ignore(): the version and provenance-only
//    fields, and plan's search probes (their number moves with every capacity change).
//  - With `only` patterns, just the paths they match (and the subtrees below) are compared.
//
// Patterns are glob-like over paths: `*` matches any run of characters except '.', `**` any run
// including '.', `?` one character; everything else, '[' and ']' included, matches literally. A
// leading `**.` also matches nothing ("**.p99" matches "p99"). A pattern matches a path when it
// matches the whole path or one of its ancestors ("timeline" matches "timeline[3].t";
// "runs[*].summary" matches "runs[0].summary.ttft_s.p99"). Matching takes O(|pattern| × |path|).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/json.h"

namespace kvsim::report {

// Deeper documents are rejected when parsed (no kvsim document is deeper than 10).
inline constexpr int kMaxJsonDepth = 256;

struct Tolerance {
  double rtol = 0.01;  // relative to |base|; 0.01 = 1%
  double atol = 0.0;   // absolute, in the metric's own unit
};

struct ToleranceOverride {
  std::string pattern;  // glob over paths (see above)
  Tolerance tolerance;
};

enum class Direction {
  kEither,          // any move beyond tolerance fails
  kHigherIsBetter,  // a rise beyond tolerance is an improvement, a fall fails
  kLowerIsBetter,   // a fall beyond tolerance is an improvement, a rise fails
};

struct DirectionRule {
  std::string pattern;
  Direction direction = Direction::kEither;
};

// kvsim's own report fields: capacity, throughput and attainment up; latency, cost, GPUs,
// rejections and preemptions down. Everything else is two-sided.
std::vector<DirectionRule> default_directions();
// kvsim_version, provenance-only fields (display names, source URLs, calibration provenance,
// the sweep file's path) and plan's per-deployment search probes.
std::vector<std::string> default_ignore();

struct DiffOptions {
  Tolerance tolerance;                       // for numbers no override matches
  std::vector<ToleranceOverride> overrides;  // the last one matching a path wins
  // Paths (glob patterns) skipped entirely. Adding a pattern can only reduce failures.
  std::vector<std::string> ignore = default_ignore();
  // When not empty, only paths matching one of these (or inside such a subtree) are compared.
  std::vector<std::string> only;
  // The last rule matching a number's path gives its direction; none = kEither.
  std::vector<DirectionRule> directions = default_directions();
  bool normalize_paths = true;  // compare path-valued strings by the file they name
  // Patterns that must match at least one path of BASE or NEW (the user's own); those that match
  // none come back in DiffResult::unmatched, in this order.
  std::vector<std::string> require_match;
};

enum class DiffKind {
  kWithin,       // number moved, within tolerance: listed, does not fail
  kOutside,      // number moved beyond tolerance the bad way (or either way): fails
  kImproved,     // number moved beyond tolerance the good way: listed, does not fail
  kChanged,      // string/bool/null changed: fails
  kTypeChanged,  // JSON type changed: fails
  kRemoved,      // in BASE, missing from NEW: fails
  kAdded,        // only in NEW: listed, does not fail
  kLength,       // array length changed: fails
  kIgnored,      // differs, but the path is ignored: listed, does not fail
};

// The JSON name ("within", "outside", "improved", "changed", "type", "removed", "added",
// "length", "ignored").
std::string_view diff_kind_name(DiffKind kind);
bool diff_kind_fails(DiffKind kind);
std::string_view direction_name(Direction direction);  // "either", "higher", "lower"

// One leaf (or array, or subtree) that is not identical in both documents.
struct DiffEntry {
  std::string path;
  DiffKind kind = DiffKind::kWithin;
  Json base;  // the base value (null when absent; for kLength the base length)
  Json next;  // the new value (null when absent; for kLength the new length)
  bool has_base = true;
  bool has_next = true;
  double rel_change = 0.0;                   // numbers: (new − base) / |base|; NaN when base is 0
  double abs_change = 0.0;                   // numbers: new − base
  Tolerance tolerance;                       // what applied (numbers)
  Direction direction = Direction::kEither;  // what applied (numbers)
  bool numeric = false;                      // base and new are both numbers
};

struct DiffResult {
  std::vector<DiffEntry> entries;      // in document order (BASE's order, then NEW's additions)
  std::int64_t num_leaves = 0;         // leaves compared (present in BASE or NEW, not ignored)
  std::int64_t num_failed = 0;         // entries whose kind fails
  std::int64_t num_ignored = 0;        // differing leaves skipped by an ignore pattern
  std::int64_t num_improved = 0;       // entries of kind kImproved
  std::vector<std::string> unmatched;  // require_match patterns that matched no path

  bool passed() const { return num_failed == 0; }
  // The paths of the failing entries, in order.
  std::vector<std::string> failed_paths() const;
};

// Whole-path glob match (no ancestors), linear in |pattern| × |path|.
bool glob_matches(std::string_view pattern, std::string_view path);
// Glob match as described at the top (whole path or an ancestor at a '.'/'[' boundary).
bool path_matches(std::string_view pattern, std::string_view path);

// Parses a JSON document from `text`; on a syntax error, a number beyond double range or nesting
// deeper than kMaxJsonDepth throws kvsim::Error naming `display_name` with the line and column of
// the offending byte ("invalid JSON: ...").
Json parse_json_text(std::string_view text, const std::string& display_name);
// Reads and parses a file; a missing/unreadable file or bad JSON throws kvsim::Error naming it.
Json parse_json_file(const std::string& path);

// Throws kvsim::Error (field "schema") unless both are objects carrying the same string schema.
void check_comparable(const Json& base, const Json& next, const std::string& base_name,
                      const std::string& next_name);

// Compares two documents (check_comparable first). Deterministic: same inputs, same result.
// Iterative: the depth of the documents costs heap, not stack.
DiffResult diff_json(const Json& base, const Json& next, const DiffOptions& options);

// Renderings of a result (diff_render.cpp). `base_name`/`next_name` label the documents.
// Table: title, the entries (path, base, new, change, tolerance, verdict), then a summary line.
std::string diff_table(const DiffResult& result, const std::string& base_name,
                       const std::string& next_name);
std::string diff_csv(const DiffResult& result);
// GitHub-flavoured markdown for a CI job summary or a PR comment: the verdict, the regressions
// and improvements as tables, the moves within tolerance folded in a <details> block.
std::string diff_markdown(const DiffResult& result, const std::string& base_name,
                          const std::string& next_name);
// {"schema": "kvsim.diff/v1", ..., base, new, options, leaves, failed, improved, ignored,
//  verdict, entries: [{path, verdict, base, new, change, tolerance, direction}]}.
Json diff_to_json(const DiffResult& result, const DiffOptions& options,
                  const std::string& base_name, const std::string& next_name);

// "summary.ttft_s.p99 (+5.00% > 1.00%)": one failing entry for an error line.
std::string describe_failure(const DiffEntry& entry);

}  // namespace kvsim::report
