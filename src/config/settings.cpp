#include "config/settings.h"

#include <cstdio>
#include <optional>

#include "common/strings.h"
#include "model/dtype.h"

namespace kvsim::config {
namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string interval(const SettingRange& r) {
  return std::string(r.lo_open ? "(" : "[") + format_number(r.lo) + ", " + format_number(r.hi) +
         (r.hi_open ? ")" : "]");
}

bool in_range(double v, const SettingRange& r) {
  const bool lo_ok = r.lo_open ? v > r.lo : v >= r.lo;
  const bool hi_ok = r.hi_open ? v < r.hi : v <= r.hi;
  return lo_ok && hi_ok;
}

// "a non-negative number of <unit>" when the range is [0, big]; else "a number of <unit> in I".
std::string amount(const SettingRange& r, const char* unit) {
  if (r.lo == 0 && !r.lo_open && r.hi >= 1e6)
    return std::string("a non-negative number of ") + unit;
  return std::string("a number of ") + unit + " in " + interval(r);
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string s = to_lower(text);
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  return std::nullopt;
}

}  // namespace

std::string_view Setting::key() const {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::string_view Setting::section() const {
  const std::size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

std::string Setting::help_text() const {
  std::string out(help);
  if (choices != nullptr) {
    const std::size_t at = out.find("{choices}");
    if (at != std::string::npos) out.replace(at, 9, join(choices(), "|"));
  }
  return out;
}

const Setting* find_setting_by_path(std::string_view path) {
  for (const Setting& s : settings()) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

const Setting* find_setting_by_flag(std::string_view flag) {
  for (const Setting& s : settings()) {
    if (s.flag == flag || (!s.alias.empty() && s.alias == flag)) return &s;
  }
  return nullptr;
}

std::string_view metavar(SettingType type) {
  switch (type) {
    case SettingType::kInt:
      return "INT";
    case SettingType::kFloat:
      return "FLOAT";
    case SettingType::kFraction:
      return "FRACTION";
    case SettingType::kPercent:
      return "P";
    case SettingType::kGib:
      return "GIB";
    case SettingType::kMs:
      return "MS";
    case SettingType::kSeconds:
      return "SECONDS";
    case SettingType::kBool:
      return "";
    case SettingType::kChoice:
      return "NAME";
    case SettingType::kText:
      return "TEXT";
    case SettingType::kSpec:
      return "SPEC";
  }
  return "";
}

std::string expected_text(const Setting& s) {
  const SettingRange& r = s.range;
  switch (s.type) {
    case SettingType::kInt:
      if (r.lo == 1 && r.hi >= kMaxSettingCount) return "a positive integer";
      if (r.lo == 0 && r.hi >= kMaxSettingCount) return "a non-negative integer";
      return "an integer in " + interval(r);
    case SettingType::kFloat:
      return "a number in " + interval(r);
    case SettingType::kFraction:
      return "a fraction in " + interval(r);
    case SettingType::kPercent:
      return "a percentile in " + interval(r);
    case SettingType::kGib:
      return "a number of GiB in " + interval(r);
    case SettingType::kMs:
      return amount(r, "milliseconds");
    case SettingType::kSeconds:
      return amount(r, "seconds");
    case SettingType::kBool:
      return "true or false";
    case SettingType::kChoice:
      return "one of " + join(s.choices(), "|");
    case SettingType::kText:
      return "a name or a path";
    case SettingType::kSpec:
      return "a specification";
  }
  return "";
}

SettingValue parse_setting(const Setting& s, std::string_view text, const ErrorLocation& where) {
  SettingValue v;
  v.text = std::string(trim(text));
  v.where = where;
  const auto fail = [&](const std::string& extra = "") {
    return Error(where, "expected " + expected_text(s) + ", got '" + v.text + "'" + extra);
  };
  switch (s.type) {
    case SettingType::kInt: {
      const auto i = parse_int(v.text);
      if (!i || !in_range(static_cast<double>(*i), s.range)) throw fail();
      v.integer = *i;
      break;
    }
    case SettingType::kFloat:
    case SettingType::kFraction:
    case SettingType::kPercent:
    case SettingType::kGib:
    case SettingType::kMs:
    case SettingType::kSeconds: {
      const auto d = parse_double(v.text);
      if (!d || !in_range(*d, s.range)) throw fail();
      v.number = *d;
      break;
    }
    case SettingType::kBool: {
      const auto b = parse_bool(v.text);
      if (!b) throw fail();
      v.on = *b;
      break;
    }
    case SettingType::kChoice: {
      const std::vector<std::string> names = s.choices();
      bool known = false;
      for (const std::string& n : names) known = known || n == v.text;
      if (!known && s.also_accepts != nullptr) {
        known = s.also_accepts(v.text) || s.also_accepts(to_lower(v.text));
      }
      if (!known) throw fail(did_you_mean(v.text, names));
      break;
    }
    case SettingType::kText:
    case SettingType::kSpec:
      break;
  }
  return v;
}

void apply_setting(const Setting& s, std::string_view text, const ErrorLocation& where,
                   Scenario& scenario) {
  s.apply(scenario, parse_setting(s, text, where));
  scenario.origins.insert_or_assign(std::string(s.path), where);
}

Error relabel(const Error& error, const Scenario& scenario) {
  // An error located in a file is about that file (a model YAML, say): left alone.
  if (!error.location().file.empty()) return error;
  const std::string& field = error.location().field;
  const Setting* s = find_setting_by_flag(field);
  if (s == nullptr) s = find_setting_by_path(field);
  if (s == nullptr) return error;
  const auto origin = scenario.origins.find(s->path);
  if (origin == scenario.origins.end()) return error;
  return Error(origin->second, error.message());
}

}  // namespace kvsim::config
