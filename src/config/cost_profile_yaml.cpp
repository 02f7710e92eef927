#include "config/cost_profile_yaml.h"

#include <cstdio>

namespace kvsim::config {
namespace {

model::EfficiencyCurve parse_curve(MapReader& op, const std::string& key) {
  model::EfficiencyCurve curve;
  const auto node = op.optional_node(key);
  if (!node) return curve;
  if (node->IsScalar()) {
    curve.value = op.get_double(key, 1e-6, 1.0);
    return curve;
  }
  MapReader m = op.get_map(key);
  const YAML::Node xs = m.get_node("log10_x");
  const YAML::Node ys = m.get_node("y");
  if (!xs.IsSequence() || !ys.IsSequence() || xs.size() != ys.size() || xs.size() == 0) {
    throw m.error("y", "expected two lists of equal, non-zero length (log10_x and y)");
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i].as<double>();
    const double y = ys[i].as<double>();
    if (!curve.knots_x.empty() && x <= curve.knots_x.back()) {
      throw Error(node_location(xs[i], m.file(), m.field("log10_x")),
                  "expected strictly increasing values");
    }
    if (!(y > 0.0 && y <= 1.0)) {
      throw Error(node_location(ys[i], m.file(), m.field("y")),
                  "expected an efficiency in (0, 1], got " + describe_node(ys[i]));
    }
    curve.knots_x.push_back(x);
    curve.knots_y.push_back(y);
  }
  m.finish();
  return curve;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string curve_yaml(const model::EfficiencyCurve& c) {
  if (c.knots_x.empty()) return num(c.value);
  std::string xs, ys;
  for (std::size_t i = 0; i < c.knots_x.size(); ++i) {
    xs += (i ? ", " : "") + num(c.knots_x[i]);
    ys += (i ? ", " : "") + num(c.knots_y[i]);
  }
  return "{log10_x: [" + xs + "], y: [" + ys + "]}";
}

}  // namespace

model::CostProfile parse_cost_profile(MapReader& section) {
  model::CostProfile profile;
  if (auto prov = section.optional_map("provenance")) {
    profile.provenance.kind = prov->get_choice("kind", {"datasheet", "calibrated", "imported"});
    profile.provenance.device = prov->optional_string("device").value_or("");
    profile.provenance.driver = prov->optional_string("driver").value_or("");
    profile.provenance.date = prov->optional_string("date").value_or("");
    profile.provenance.kvsim_version = prov->optional_string("kvsim_version").value_or("");
    profile.provenance.source = prov->optional_string("source").value_or("");
    prov->finish();
  }
  profile.step_overhead_s = section.optional_double("step_overhead_us", 0, 1e6).value_or(0) * 1e-6;
  if (auto ops = section.optional_map("op_classes")) {
    for (const std::string& name : ops->keys()) {
      MapReader op = ops->get_map(name);
      model::OpClassProfile p;
      p.compute = parse_curve(op, "compute");
      p.memory = parse_curve(op, "memory");
      p.launch_latency_s = op.optional_double("launch_us", 0, 1e6).value_or(0) * 1e-6;
      op.finish();
      profile.op_classes[name] = p;
    }
  }
  section.finish();
  return profile;
}

std::string emit_cost_profile_yaml(const model::CostProfile& profile, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const auto& p = profile.provenance;
  std::string out;
  out += pad + "provenance:\n";
  out += pad + "  kind: " + p.kind + "\n";
  if (!p.device.empty()) out += pad + "  device: \"" + p.device + "\"\n";
  if (!p.driver.empty()) out += pad + "  driver: \"" + p.driver + "\"\n";
  if (!p.date.empty()) out += pad + "  date: \"" + p.date + "\"\n";
  if (!p.kvsim_version.empty()) out += pad + "  kvsim_version: \"" + p.kvsim_version + "\"\n";
  if (!p.source.empty()) out += pad + "  source: \"" + p.source + "\"\n";
  out += pad + "step_overhead_us: " + num(profile.step_overhead_s * 1e6) + "\n";
  out += pad + "op_classes:\n";
  for (const auto& [name, op] : profile.op_classes) {
    out += pad + "  " + name + ": {compute: " + curve_yaml(op.compute) +
           ", memory: " + curve_yaml(op.memory) + ", launch_us: " + num(op.launch_latency_s * 1e6) +
           "}\n";
  }
  return out;
}

}  // namespace kvsim::config
