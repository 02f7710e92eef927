#include "cli/setting_flags.h"

#include "common/error.h"

namespace kvsim::cli {
namespace {

bool in_scope(const config::Setting& s, config::SettingScope scope) {
  return scope == config::SettingScope::kServing || s.scope == config::SettingScope::kDeployment;
}

}  // namespace

const std::string* SettingFlags::find(std::string_view flag) const {
  const std::string* out = nullptr;
  for (const auto& [setting, text] : given) {
    if (setting->flag == flag) out = &text;
  }
  return out;
}

bool SettingFlags::is_list(const config::Setting& s) const {
  switch (form) {
    case SettingForm::kSingle:
      return false;
    case SettingForm::kCompare:
      return s.flag == "--allocator" || s.flag == "--scheduler";
    case SettingForm::kPlan:
      return s.grid_axis;
  }
  return false;
}

void add_setting_flag(CLI::App* command, SettingFlags& flags, const config::Setting& s,
                      std::string_view help_override) {
  std::string names(s.flag);
  if (!s.alias.empty()) names += "," + std::string(s.alias);
  const config::Setting* setting = &s;
  std::string help = help_override.empty() ? s.help_text() : std::string(help_override);
  if (s.type == config::SettingType::kBool) {
    command->add_flag_function(
        names,
        [&flags, setting](std::int64_t count) {
          flags.given.emplace_back(setting, count > 0 ? "true" : "false");
        },
        help);
    return;
  }
  std::string type(config::metavar(s.type));
  if (flags.is_list(s)) {
    help += flags.form == SettingForm::kPlan ? " (comma-separated list: a grid axis)"
                                             : " (comma-separated list: one run each)";
    if (flags.form == SettingForm::kPlan) type += "[,...]";
  }
  CLI::Option* option = command->add_option_function<std::string>(
      names,
      [&flags, setting](const std::string& text) { flags.given.emplace_back(setting, text); },
      help);
  option->type_name(type);
  if (!s.default_text.empty()) option->default_str(std::string(s.default_text));
}

void add_setting_flags(CLI::App* command, SettingFlags& flags, config::SettingScope scope,
                       SettingForm form) {
  flags.form = form;
  for (const config::Setting& s : config::settings()) {
    if (in_scope(s, scope)) add_setting_flag(command, flags, s);
  }
}

void apply_setting_flags(const SettingFlags& flags, config::Scenario& scenario) {
  for (const auto& [setting, text] : flags.given) {
    if (flags.is_list(*setting)) continue;
    config::apply_setting(*setting, text, ErrorLocation{"", 0, 0, std::string(setting->flag)},
                          scenario);
  }
}

config::Scenario scenario_from_flags(const SettingFlags& flags) {
  config::Scenario scenario;
  apply_setting_flags(flags, scenario);
  return scenario;
}

}  // namespace kvsim::cli
