#pragma once
// The settings table: every scenario setting that a YAML key and a command-line flag can both
// give, declared once. One row says where the value lives in a scenario YAML (its dotted path),
// its flag (vLLM's engine-argument name where vLLM has one), its help line, its type and unit,
// its range, the default shown in --help, and whether `kvsim plan` takes a list of it (a grid
// axis). The scenario YAML reader, the flags of kv/cost/simulate/compare/plan, plan's grid axes,
// --help and the relabelling of errors all read this table.
//
// A value is checked once, by parse_setting, at the location of whatever gave it:
//   s.yaml:3:19: serving.max_num_batched_tokens: expected a non-negative integer, got '-1'
//   --max-num-batched-tokens: expected a non-negative integer, got '-1'
//
// Adding a setting: one row in settings.cpp (its apply function sets the field of Scenario),
// the field itself where the code that uses it reads it, and a test.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "config/scenario.h"

namespace kvsim::config {

// The type of a setting's value, which is also its unit and its --help metavar.
enum class SettingType : std::uint8_t {
  kInt,       // INT: an integer
  kFloat,     // FLOAT: a number
  kFraction,  // FRACTION: a number in [0, 1]
  kPercent,   // P: a percentile
  kGib,       // GIB: gibibytes (stored as Bytes)
  kMs,        // MS: milliseconds (stored as TimeNs)
  kSeconds,   // SECONDS: seconds (stored as TimeNs)
  kBool,      // a switch: the flag takes no value; YAML true|false
  kChoice,    // NAME: one of choices()
  kText,      // TEXT: a name or a path
  kSpec,      // SPEC: a small language of its own (the cost model)
};

// The upper bound of count settings; a count range [1 or 0, this] reads "a positive (non-negative)
// integer" in messages.
inline constexpr double kMaxSettingCount = 1'000'000'000;

// A closed or half-open interval of numbers (integers for kInt).
struct SettingRange {
  double lo = 0;
  double hi = 0;
  bool lo_open = false;  // (lo, ...
  bool hi_open = false;  // ..., hi)
};

// Which commands take a setting as a flag.
enum class SettingScope : std::uint8_t {
  kDeployment,  // every command with a deployment: kv, cost, simulate, compare, plan
  kServing,     // the simulating commands: simulate, compare, plan
};

// A parsed value, with where it came from.
struct SettingValue {
  std::string text;          // as given (a YAML scalar or a flag's argument)
  ErrorLocation where;       // file:line:col and YAML path, or the flag
  std::int64_t integer = 0;  // kInt
  double number = 0;         // kFloat, kFraction, kPercent, kGib, kMs, kSeconds
  bool on = false;           // kBool
};

struct Setting {
  std::string_view path;   // dotted YAML path: "serving.max_num_seqs"
  std::string_view flag;   // "--max-num-seqs"
  std::string_view alias;  // another flag name ("--tp"), or ""
  // One line of --help; "{choices}" stands for the names of a kChoice setting, joined with '|'.
  std::string_view help;
  SettingType type = SettingType::kText;
  SettingRange range;             // numbers only
  std::string_view default_text;  // shown by --help as [default]; "" when the help says it
  SettingScope scope = SettingScope::kServing;
  bool grid_axis = false;                           // `kvsim plan --flag a,b,c` makes a grid axis
  std::vector<std::string> (*choices)() = nullptr;  // kChoice: the names
  // kChoice: accepts a name outside choices() too (kv_cache_dtype takes any dtype name).
  bool (*also_accepts)(std::string_view) = nullptr;
  // Stores the value into the scenario.
  void (*apply)(Scenario&, const SettingValue&) = nullptr;

  std::string_view key() const;      // the last part of path: "max_num_seqs"
  std::string_view section() const;  // the path before it: "serving" ("" at the top level)
  std::string help_text() const;     // help with {choices} filled in
};

// Every setting, in the order --help lists them.
std::span<const Setting> settings();

// The setting at a dotted YAML path or with a flag name (or alias); nullptr when none.
const Setting* find_setting_by_path(std::string_view path);
const Setting* find_setting_by_flag(std::string_view flag);

// The --help metavar of a type: INT, FLOAT, FRACTION, P, GIB, MS, SECONDS, NAME, TEXT, SPEC
// ("" for kBool).
std::string_view metavar(SettingType type);

// What a setting expects, as error messages say it: "a positive integer", "a fraction in (0, 1]".
std::string expected_text(const Setting& setting);

// Parses and range-checks `text` for `setting`. Throws kvsim::Error at `where`:
// "expected <expected_text>, got '<text>'" (with "did you mean" for a near-miss choice).
SettingValue parse_setting(const Setting& setting, std::string_view text,
                           const ErrorLocation& where);

// parse_setting, then the setting's apply on `scenario`, recording `where` as the value's origin.
void apply_setting(const Setting& setting, std::string_view text, const ErrorLocation& where,
                   Scenario& scenario);

// `error` located where the scenario's value came from, when the error has no file and its field
// names a setting (by flag or by path) that the scenario was given (a YAML line, or the flag
// that really gave it). Returns the error unchanged otherwise.
Error relabel(const Error& error, const Scenario& scenario);

}  // namespace kvsim::config
