#include "config/scenario.h"

#include <filesystem>
#include <initializer_list>

#include "common/error.h"
#include "common/strings.h"
#include "config/scenario_yaml.h"
#include "config/settings.h"
#include "config/workload_yaml.h"
#include "config/yaml_reader.h"

namespace kvsim::config {
namespace {

// Marks every key a section accepts as known up front, so that a misspelt one is reported with
// the closest of them ("did you mean") even when the intended key is absent.
void declare(MapReader& r, std::string_view section, std::initializer_list<const char*> extra) {
  for (const Setting& setting : settings()) {
    if (setting.section() == section) r.ignore(std::string(setting.key()));
  }
  for (const char* k : extra) r.ignore(k);
}

// Reads the settings of the table (config/settings.h) that live in `section` ("" = top level,
// "serving", "slo"), each checked by parse_setting at its YAML location.
void read_settings(MapReader& r, std::string_view section, Scenario& s) {
  for (const Setting& setting : settings()) {
    const std::string key(setting.key());
    if (setting.section() != section || !r.has(key)) continue;
    const YAML::Node node = r.get_node(key);
    if (setting.type == SettingType::kSpec && node.IsMap()) continue;  // read_cost_model
    const ErrorLocation where = node_location(node, r.file(), r.field(key));
    if (!node.IsScalar()) {
      throw Error(where, "expected " + expected_text(setting) + ", got " + describe_node(node));
    }
    apply_setting(setting, node.Scalar(), where, s);
  }
}

void read_cost_model(MapReader& top, Scenario& s) {
  if (!top.has("cost_model")) return;
  const YAML::Node node = top.get_node("cost_model");
  if (!node.IsMap()) return;  // a scalar spec: read_settings
  s.origins.insert_or_assign("cost_model",
                             node_location(node, top.file(), top.field("cost_model")));
  MapReader r(node, top.file(), top.field("cost_model"));
  declare(r, "cost_model",
          {"kind", "base_us", "prefill_us_per_token", "decode_us_per_seq", "context_us_per_token",
           "swap_gb_per_s", "step_overhead_us"});
  const std::string kind = r.get_choice("kind", {"roofline", "linear"});
  const std::vector<std::string> only_linear = {"base_us", "prefill_us_per_token",
                                                "decode_us_per_seq", "context_us_per_token",
                                                "swap_gb_per_s"};
  for (const std::string& key :
       kind == "linear" ? std::vector<std::string>{"step_overhead_us"} : only_linear) {
    if (r.has(key)) {
      throw r.error(key,
                    "applies to kind: " + std::string(kind == "linear" ? "roofline" : "linear") +
                        " only, and kind is " + kind);
    }
  }
  s.cost = cost::CostModelConfig{};
  if (kind == "linear") {
    s.cost.kind = cost::CostModelKind::kLinear;
    cost::LinearCostParams& p = s.cost.linear;
    p.base_ns = r.optional_double("base_us", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_prefill_token_ns =
        r.optional_double("prefill_us_per_token", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_decode_seq_ns = r.optional_double("decode_us_per_seq", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_context_token_ns =
        r.optional_double("context_us_per_token", 0.0, 1e12).value_or(0.0) * 1e3;
    if (r.has("swap_gb_per_s")) {
      const double gbps = r.get_double("swap_gb_per_s", 0.0, 1e6);
      if (gbps <= 0.0) throw r.error("swap_gb_per_s", "expected a positive bandwidth, got 0");
      p.swap_bytes_per_s = gbps * 1e9;
    }
  } else if (r.has("step_overhead_us")) {
    s.cost.roofline.step_overhead_s = r.get_double("step_overhead_us", 0.0, 1e9) * 1e-6;
  }
  r.finish();
}

// A model or GPU given as a relative path is relative to the scenario file's folder (names of
// shipped configs are left alone: a value is a path when it has a '/' or a YAML/JSON suffix).
std::string resolve_config_path(const std::string& value, const std::string& base_dir) {
  const bool looks_like_path = value.find('/') != std::string::npos || value.ends_with(".yaml") ||
                               value.ends_with(".yml") || value.ends_with(".json");
  if (!looks_like_path || value.empty() || value.front() == '/' || base_dir.empty()) return value;
  return (std::filesystem::path(base_dir) / value).lexically_normal().string();
}

std::string folder_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

}  // namespace

cost::CostModelConfig parse_cost_model_spec(const std::string& spec, const ErrorLocation& where) {
  cost::CostModelConfig config;
  if (spec == "roofline") return config;
  const auto parts = split(spec, ':');
  if (parts.empty() || parts[0] != "linear" || parts.size() < 4 || parts.size() > 5) {
    throw Error(where,
                "expected 'roofline' or 'linear:BASE_US:PREFILL_US_PER_TOKEN:DECODE_US_PER_SEQ"
                "[:CONTEXT_US_PER_TOKEN]', got '" +
                    spec + "'" + did_you_mean(spec, {"roofline", "linear"}));
  }
  double v[4] = {0, 0, 0, 0};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto d = parse_double(parts[i]);
    if (!d || *d < 0.0) {
      throw Error(where, "expected a non-negative number of microseconds, got '" +
                             std::string(parts[i]) + "' in '" + spec + "'");
    }
    v[i - 1] = *d;
  }
  config.kind = cost::CostModelKind::kLinear;
  config.linear.base_ns = v[0] * 1e3;
  config.linear.per_prefill_token_ns = v[1] * 1e3;
  config.linear.per_decode_seq_ns = v[2] * 1e3;
  config.linear.per_context_token_ns = v[3] * 1e3;
  return config;
}

void reject_lists(const YAML::Node& root, const std::string& file) {
  if (root.IsSequence()) {
    throw Error(node_location(root, file, ""), "lists make a sweep: use kvsim plan");
  }
  if (!root.IsMap()) return;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (kv.second.IsSequence()) {
      throw Error(node_location(kv.second, file, key), "lists make a sweep: use kvsim plan");
    }
    try {
      reject_lists(kv.second, file);
    } catch (const Error& e) {
      // Prefix the nested key so the field reads "serving.scheduler".
      ErrorLocation where = e.location();
      where.field = where.field.empty() ? key : key + "." + where.field;
      throw Error(where, e.message());
    }
  }
}

Scenario parse_scenario(const YAML::Node& root, const std::string& file,
                        const std::string& base_dir) {
  MapReader top(root, file);
  declare(top, "", {"serving", "cost_model", "slo", "workload"});
  Scenario s;
  s.source = file;
  read_settings(top, "", s);
  ScenarioDeployment& d = s.deployment;
  d.model = resolve_config_path(d.model, base_dir);
  d.gpu = resolve_config_path(d.gpu, base_dir);
  if (auto serving = top.optional_map("serving")) {
    declare(*serving, "serving", {});
    read_settings(*serving, "serving", s);
    serving->finish();
  }
  read_cost_model(top, s);
  if (auto slo = top.optional_map("slo")) {
    declare(*slo, "slo", {});
    read_settings(*slo, "slo", s);
    slo->finish();
  }
  if (auto workload = top.optional_map("workload")) {
    s.workload = parse_workload(*workload, base_dir);
    s.has_workload = true;
  }
  top.finish();
  return s;
}

Scenario parse_scenario_text(std::string_view yaml, const std::string& display_name,
                             const std::string& base_dir) {
  const YAML::Node root = load_yaml_text(yaml, display_name);
  reject_lists(root, display_name);
  return parse_scenario(root, display_name, base_dir);
}

Scenario load_scenario(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  reject_lists(root, path);
  return parse_scenario(root, path, folder_of(path));
}

}  // namespace kvsim::config
