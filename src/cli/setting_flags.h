#pragma once
// The flags of the settings table (config/settings.h): one flag per setting, registered with
// its help, metavar and default from the table, its value kept as text until
// apply_setting_flags checks it with config::parse_setting (errors name the flag).
//
// Usage in a command file:
//   SettingFlags flags;
//   add_setting_flags(command, flags, config::SettingScope::kDeployment, SettingForm::kSingle);
//   ... in the callback:
//   config::Scenario s;                  // or one loaded from --config
//   apply_setting_flags(flags, s);       // the flags given override the scenario's values

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "config/scenario.h"
#include "config/settings.h"

namespace kvsim::cli {

enum class SettingForm : std::uint8_t {
  kSingle,   // one value per flag
  kCompare,  // compare: --allocator and --scheduler take comma-separated lists (one run each)
  kPlan,     // plan: every grid-axis setting takes a comma-separated list (a grid axis)
};

// The setting flags given on a command line, as text, in the order given.
struct SettingFlags {
  SettingForm form = SettingForm::kSingle;
  std::vector<std::pair<const config::Setting*, std::string>> given;

  // The text given for `flag` (its canonical name), or nullptr when not given.
  const std::string* find(std::string_view flag) const;
  // True when the flag takes a list in this form (and is therefore not applied as one value).
  bool is_list(const config::Setting& setting) const;
};

// Registers the flags of every setting of `scope` (kServing: all of them) on `command`.
void add_setting_flags(CLI::App* command, SettingFlags& flags, config::SettingScope scope,
                       SettingForm form);

// Registers one setting's flag, outside the scope a command takes (kv's profile run takes two
// serving settings). `help_override`, when not empty, replaces the table's help line: the same
// value, described the way this command uses it. Call after add_setting_flags (which sets the
// form).
void add_setting_flag(CLI::App* command, SettingFlags& flags, const config::Setting& setting,
                      std::string_view help_override = {});

// Applies, in order, every flag given that takes one value: config::apply_setting at the flag
// ("--block-size"). Throws kvsim::Error naming the flag on a bad value.
void apply_setting_flags(const SettingFlags& flags, config::Scenario& scenario);

// A default scenario with the flags applied (kv, cost: commands without --config).
config::Scenario scenario_from_flags(const SettingFlags& flags);

}  // namespace kvsim::cli
