#include "config/cost_profile_yaml.h"

#include <algorithm>
#include <cstdio>

#include "common/strings.h"
#include "cost/ops.h"
#include "cost/overhead_fit.h"
#include "model/dtype.h"

namespace kvsim::config {
namespace {

// Upper bounds of a measured table (README "Limits"): a coordinate is a token count or a byte
// count, a time one kernel's duration.
constexpr double kMaxCoordinate = 1e18;
constexpr double kMaxTimeUs = 1e9;
// log10 of an efficiency curve's x (FLOPs or bytes per kernel).
constexpr double kMaxLog10X = 30;
// A table's fixed shape values (heads, head_dim, ...).
constexpr std::int64_t kMaxShapeValue = 1'000'000'000;

// A number inside a YAML list, with its location on error.
double list_number(const YAML::Node& node, const std::string& file, const std::string& field) {
  if (node.IsScalar()) {
    if (const auto v = parse_double(node.Scalar())) return *v;
  }
  throw Error(node_location(node, file, field), "expected a number, got " + describe_node(node));
}

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
    const double x = list_number(xs[i], m.file(), m.field("log10_x"));
    const double y = list_number(ys[i], m.file(), m.field("y"));
    if (!(x >= -kMaxLog10X && x <= kMaxLog10X)) {
      throw Error(node_location(xs[i], m.file(), m.field("log10_x")),
                  "expected a log10 in [-30, 30], got " + describe_node(xs[i]));
    }
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

// Coordinates (token counts, bytes) round-trip exactly.
std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
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

model::MeasuredTable parse_table(const YAML::Node& node, const std::string& file,
                                 const std::string& path) {
  MapReader t(node, file, path);
  model::MeasuredTable table;
  table.op = t.get_choice("op", cost::op_class_names());
  if (table.op == "elementwise")
    throw t.error("op", "expected an op class with tables, got 'elementwise'");
  const std::string dtype = t.get_string("dtype");
  const auto parsed = model::parse_dtype(dtype);
  if (!parsed) {
    throw t.error("dtype", "expected one of " + join(model::dtype_names(), ", ") + ", got '" +
                               dtype + "'" + did_you_mean(dtype, model::dtype_names()));
  }
  table.dtype = std::string(model::dtype_name(*parsed));
  if (auto shape = t.optional_map("shape")) {
    for (const std::string& key : shape->keys()) {
      table.shape.emplace_back(key, shape->get_int(key, 0, kMaxShapeValue));
    }
    shape->finish();
  }
  const YAML::Node points = t.get_node("points");
  const std::string pfield = t.field("points");
  if (!points.IsSequence() || points.size() == 0) {
    throw Error(node_location(points, file, pfield),
                "expected a non-empty list of [x1, x2, time_us]");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const YAML::Node pt = points[i];
    if (!pt.IsSequence() || pt.size() != 3) {
      throw Error(node_location(pt, file, pfield),
                  "expected [x1, x2, time_us], got " + describe_node(pt));
    }
    model::MeasuredTable::Point p;
    p.x1 = list_number(pt[0], file, pfield);
    p.x2 = list_number(pt[1], file, pfield);
    const double time_us = list_number(pt[2], file, pfield);
    p.time_s = time_us * 1e-6;
    if (!(p.x1 > 0) || !(p.x2 >= 0) || !(p.time_s > 0)) {
      throw Error(node_location(pt, file, pfield),
                  "expected x1 > 0, x2 >= 0 and a positive time, got " + describe_node(pt[0]) +
                      ", " + describe_node(pt[1]) + ", " + describe_node(pt[2]));
    }
    if (p.x1 > kMaxCoordinate || p.x2 > kMaxCoordinate || time_us > kMaxTimeUs) {
      throw Error(node_location(pt, file, pfield),
                  "expected x1, x2 <= 1e18 and time_us <= 1e9 (1000 s), got " +
                      describe_node(pt[0]) + ", " + describe_node(pt[1]) + ", " +
                      describe_node(pt[2]));
    }
    if (!table.points.empty()) {
      const auto& q = table.points.back();
      if (std::make_pair(p.x2, p.x1) <= std::make_pair(q.x2, q.x1)) {
        throw Error(node_location(pt, file, pfield),
                    "expected points sorted by (x2, x1) without repeats");
      }
    }
    table.points.push_back(p);
  }
  t.finish();
  return table;
}

// fitted_op_classes: [gemm, gemm.fp8, attn_decode, ...]: op-class entries, each once.
std::vector<std::string> parse_op_class_list(const YAML::Node& node, const MapReader& prov) {
  if (!node.IsSequence()) throw prov.error("fitted_op_classes", "expected a list of op classes");
  const auto names = cost::op_class_names();
  std::vector<std::string> out;
  for (const auto& item : node) {
    const std::string name = item.IsScalar() ? item.Scalar() : std::string();
    if (!cost::is_op_class_key(name) || std::find(out.begin(), out.end(), name) != out.end()) {
      throw prov.error("fitted_op_classes", "expected distinct op classes (" + join(names, ", ") +
                                                ", or one per dtype such as gemm.fp8), got '" +
                                                name + "'" + did_you_mean(name, names));
    }
    out.push_back(name);
  }
  return out;
}

// fitted_overheads: a subset of the fit's terms (cost::kOverheadTermKeys).
std::vector<std::string> parse_overhead_list(const YAML::Node& node, const MapReader& prov) {
  const std::vector<std::string> names(cost::kOverheadTermKeys.begin(),
                                       cost::kOverheadTermKeys.end());
  if (!node.IsSequence()) throw prov.error("fitted_overheads", "expected a list of overhead keys");
  std::vector<std::string> out;
  for (const auto& item : node) {
    const std::string name = item.IsScalar() ? item.Scalar() : std::string();
    if (std::find(names.begin(), names.end(), name) == names.end() ||
        std::find(out.begin(), out.end(), name) != out.end()) {
      throw prov.error("fitted_overheads", "expected distinct overhead keys (" + join(names, ", ") +
                                               "), got '" + name + "'" + did_you_mean(name, names));
    }
    out.push_back(name);
  }
  return out;
}

// held_out: {fraction: F, seed: N, <profile entry>: {rows: R, median_ape: P, p90_ape: Q}, ...}
// (an entry: an op class, or one with a dtype such as gemm.fp8)
void parse_held_out(MapReader& held, model::CostProvenance& prov) {
  prov.held_out_fraction = held.get_double("fraction", 0, 1);
  prov.held_out_seed = held.get_int("seed", 0);
  const auto names = cost::op_class_names();
  for (const std::string& name : held.keys()) {
    if (name == "fraction" || name == "seed") continue;
    if (!cost::is_op_class_key(name)) {
      throw held.error(name, "expected fraction, seed or an op class (" + join(names, ", ") +
                                 ", or one with a dtype: gemm.fp8)" + did_you_mean(name, names));
    }
    MapReader c = held.get_map(name);
    model::HeldOutError e;
    e.rows = c.get_int("rows", 1);
    e.median_ape = c.get_double("median_ape", 0, 1e9);
    e.p90_ape = c.get_double("p90_ape", 0, 1e9);
    c.finish();
    prov.held_out[name] = e;
  }
  held.finish();
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
    if (auto fitted = prov->optional_node("fitted_op_classes")) {
      profile.provenance.fitted_op_classes = parse_op_class_list(*fitted, *prov);
    }
    if (auto fitted = prov->optional_node("fitted_overheads")) {
      profile.provenance.fitted_overheads = parse_overhead_list(*fitted, *prov);
    }
    if (auto held = prov->optional_map("held_out")) parse_held_out(*held, profile.provenance);
    prov->finish();
  }
  profile.step_overhead_s =
      section.optional_double("step_overhead_us", 0, 1e6).value_or(profile.step_overhead_s * 1e6) *
      1e-6;
  profile.seq_overhead_s = section.optional_double("seq_overhead_us", 0, 1e6).value_or(0) * 1e-6;
  profile.prefill_token_overhead_s =
      section.optional_double("prefill_token_overhead_us", 0, 1e6).value_or(0) * 1e-6;
  profile.context_token_overhead_s =
      section.optional_double("context_token_overhead_us", 0, 1e6).value_or(0) * 1e-6;
  profile.frontend_latency_s =
      section.optional_double("frontend_latency_us", 0, 1e7).value_or(0) * 1e-6;
  profile.eager_layer_host_s =
      section.optional_double("eager_layer_host_us", 0, 1e6).value_or(0) * 1e-6;
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
  if (auto tables = section.optional_node("tables")) {
    if (!tables->IsSequence()) {
      throw section.error("tables", "expected a list of measured tables");
    }
    for (std::size_t i = 0; i < tables->size(); ++i) {
      profile.tables.push_back(parse_table(
          (*tables)[i], section.file(), section.field("tables") + "[" + std::to_string(i) + "]"));
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
  if (!p.fitted_op_classes.empty()) {
    out += pad + "  fitted_op_classes: [" + join(p.fitted_op_classes, ", ") + "]\n";
  }
  if (!p.fitted_overheads.empty()) {
    out += pad + "  fitted_overheads: [" + join(p.fitted_overheads, ", ") + "]\n";
  }
  if (!p.held_out.empty()) {
    out += pad + "  held_out:  # absolute % error on measurements left out of the fit\n";
    out += pad + "    fraction: " + num(p.held_out_fraction) + "\n";
    out += pad + "    seed: " + std::to_string(p.held_out_seed) + "\n";
    for (const auto& [name, e] : p.held_out) {
      out.append(pad).append("    ").append(name).append(": {rows: ");
      out.append(std::to_string(e.rows)).append(", median_ape: ").append(num(e.median_ape));
      out.append(", p90_ape: ").append(num(e.p90_ape)).append("}\n");
    }
  }
  out += pad + "step_overhead_us: " + num(profile.step_overhead_s * 1e6) + "\n";
  // Written only when set, so that profiles without them keep their text.
  if (profile.seq_overhead_s != 0)
    out += pad + "seq_overhead_us: " + num(profile.seq_overhead_s * 1e6) + "\n";
  if (profile.prefill_token_overhead_s != 0) {
    out += pad + "prefill_token_overhead_us: " + num(profile.prefill_token_overhead_s * 1e6) + "\n";
  }
  if (profile.context_token_overhead_s != 0) {
    out += pad + "context_token_overhead_us: " + num(profile.context_token_overhead_s * 1e6) + "\n";
  }
  if (profile.frontend_latency_s != 0)
    out += pad + "frontend_latency_us: " + num(profile.frontend_latency_s * 1e6) + "\n";
  if (profile.eager_layer_host_s != 0)
    out += pad + "eager_layer_host_us: " + num(profile.eager_layer_host_s * 1e6) + "\n";
  out += pad + "op_classes:\n";
  for (const auto& [name, op] : profile.op_classes) {
    out.append(pad).append("  ").append(name);
    out.append(": {compute: ").append(curve_yaml(op.compute));
    out.append(", memory: ").append(curve_yaml(op.memory));
    out.append(", launch_us: ").append(num(op.launch_latency_s * 1e6)).append("}\n");
  }
  if (!profile.tables.empty()) {
    out += pad +
           "tables:  # measured times: points [x1, x2, time_us] (cost/ops.h: table_coordinates)\n";
    for (const auto& t : profile.tables) {
      out += pad + "  - op: " + t.op + "\n";
      out += pad + "    dtype: " + t.dtype + "\n";
      out += pad + "    shape: {";
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        out += (i ? ", " : "") + t.shape[i].first + ": " + std::to_string(t.shape[i].second);
      }
      out += "}\n";
      out += pad + "    points: [";
      for (std::size_t i = 0; i < t.points.size(); ++i) {
        const auto& p = t.points[i];
        out +=
            (i ? ", [" : "[") + exact(p.x1) + ", " + exact(p.x2) + ", " + num(p.time_s * 1e6) + "]";
      }
      out += "]\n";
    }
  }
  return out;
}

std::string replace_cost_model_section(std::string_view yaml, const model::CostProfile& profile) {
  std::string out;
  bool inside = false, replaced = false;
  std::size_t pos = 0;
  while (pos < yaml.size()) {
    const std::size_t end = yaml.find('\n', pos);
    const std::string_view line =
        yaml.substr(pos, end == std::string_view::npos ? yaml.size() - pos : end - pos);
    pos = end == std::string_view::npos ? yaml.size() : end + 1;
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '\t';
    if (inside && top_level) inside = false;
    if (top_level && line.substr(0, 11) == "cost_model:") {
      inside = true;
      replaced = true;
      out += "cost_model:\n" + emit_cost_profile_yaml(profile, 2);
      continue;
    }
    if (!inside) {
      out += line;
      out += "\n";
    }
  }
  if (!replaced) {
    if (!out.empty() && out.back() != '\n') out += "\n";
    out += "cost_model:\n" + emit_cost_profile_yaml(profile, 2);
  }
  return out;
}

}  // namespace kvsim::config
