#include "report/calibration_report.h"

#include <algorithm>
#include <cstdio>

#include "common/format.h"
#include "cost/ops.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

Json curve_json(const model::EfficiencyCurve& c) {
  if (c.knots_x.empty()) return c.value;
  return Json{{"log10_x", c.knots_x}, {"y", c.knots_y}};
}

std::string curve_text(const model::EfficiencyCurve& c) {
  if (c.knots_x.empty()) return fixed(c.value, 3);
  std::string s;
  for (std::size_t i = 0; i < c.knots_x.size(); ++i) {
    s += (i ? " " : "") + fixed(c.knots_y[i], 2) + "@" + fixed(c.knots_x[i], 1);
  }
  return s;
}

std::string shape_text(const cost::KernelShape& s) {
  const std::string dt(model::dtype_name(s.dtype));
  switch (s.op) {
    case cost::OpClass::kGemm:
      return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
             " k=" + std::to_string(s.k) + " " + dt;
    case cost::OpClass::kAttnDecode:
      return "batch=" + std::to_string(s.batch) + " kv=" + std::to_string(s.kv_len) +
             " heads=" + std::to_string(s.q_heads) + "/" + std::to_string(s.kv_heads) + "x" +
             std::to_string(s.head_dim);
    case cost::OpClass::kAttnPrefill:
      return "q=" + std::to_string(s.q_len) + " kv=" + std::to_string(s.kv_len) +
             " heads=" + std::to_string(s.q_heads) + "/" + std::to_string(s.kv_heads) + "x" +
             std::to_string(s.head_dim);
    case cost::OpClass::kAllreduce:
      return human_bytes(static_cast<Bytes>(s.bytes)) + " x" + std::to_string(s.num_gpus) + " GPUs";
    case cost::OpClass::kMoe:
      return "tokens=" + std::to_string(s.m) + " experts=" + std::to_string(s.experts) + " top" +
             std::to_string(s.top_k) + " " + std::to_string(s.k) + "x" + std::to_string(s.n) + " " +
             dt;
    default:
      return human_bytes(static_cast<Bytes>(s.bytes));
  }
}

// "gemm" or a per-dtype entry "gemm.fp8": whether its class has a compute roof.
bool has_compute_roof(const std::string& entry) {
  const auto op = cost::parse_op_class(entry.substr(0, entry.find('.')));
  return op && cost::has_compute_roof(*op);
}

}  // namespace

std::vector<KernelRow> kernel_rows(const std::vector<cost::Measurement>& rows,
                                   const model::HardwareSpec& hardware) {
  double best_copy = 0;
  std::map<std::string, double> best_gemm;
  for (const auto& m : rows) {
    const cost::Work w = cost::kernel_work(m.shape);
    if (m.shape.op == cost::OpClass::kMemcpy) best_copy = std::max(best_copy, w.bytes / m.time_s);
    if (m.shape.op == cost::OpClass::kGemm) {
      auto& b = best_gemm[std::string(model::dtype_name(m.shape.dtype))];
      b = std::max(b, w.flops / m.time_s);
    }
  }
  std::vector<KernelRow> out;
  for (const auto& m : rows) {
    const cost::Work w = cost::kernel_work(m.shape);
    KernelRow r;
    r.kernel = std::string(cost::op_class_name(m.shape.op));
    r.shape = shape_text(m.shape);
    r.time_s = m.time_s;
    bool compute = false;
    if (cost::has_compute_roof(m.shape.op)) {
      const auto roof = cost::roof_for(hardware, m.shape.op, m.shape.dtype, 1);
      compute = w.flops / roof.peak_flops > w.bytes / roof.bandwidth;
    }
    if (compute) {
      r.rate = w.flops / m.time_s;
      r.unit = "TFLOP/s";
      const auto it = best_gemm.find(std::string(model::dtype_name(m.shape.dtype)));
      r.fraction = it != best_gemm.end() && it->second > 0 ? r.rate / it->second : 0;
    } else {
      r.rate = w.bytes / m.time_s;
      r.unit = "TB/s";
      r.fraction =
          best_copy > 0 && m.shape.op != cost::OpClass::kAllreduce ? r.rate / best_copy : 0;
    }
    out.push_back(r);
  }
  return out;
}

Json calibration_json(const CalibrationReportInput& in) {
  Json j = envelope("kvsim.calibration/v1", "calibrate");
  j["profile"] = in.profile_path.empty() ? Json(nullptr) : Json(in.profile_path);
  j["gpu"] = in.gpu;
  j["sources"] = in.sources;
  if (!in.measurements_path.empty()) j["measurements_csv"] = in.measurements_path;
  Json prov;
  prov["kind"] = in.provenance.kind;
  prov["device"] = in.provenance.device;
  prov["driver"] = in.provenance.driver;
  prov["date"] = in.provenance.date;
  prov["kvsim_version"] = in.provenance.kvsim_version;
  prov["source"] = in.provenance.source;
  prov["fitted_op_classes"] = in.provenance.fitted_op_classes;
  if (!in.provenance.held_out.empty()) {
    Json held = Json::object();
    for (const auto& [op, e] : in.provenance.held_out) {
      held[op] = {{"rows", e.rows}, {"median_ape", e.median_ape}, {"p90_ape", e.p90_ape}};
    }
    prov["held_out"] = {{"fraction", in.provenance.held_out_fraction},
                        {"seed", in.provenance.held_out_seed},
                        {"op_classes", held}};
  }
  j["provenance"] = prov;
  Json rows = Json::object();
  for (const auto& [op, n] : in.measurements) rows[op] = n;
  j["measurements"] = rows;
  Json fitted = Json::object();
  if (in.fit) {
    for (const auto& c : in.fit->classes) {
      Json f;
      f["rows"] = c.rows;
      f["compute_bound_rows"] = c.compute_bound_rows;
      f["memory_bound_rows"] = c.memory_bound_rows;
      f["launch_us"] = c.launch_latency_s * 1e6;
      f["compute"] = has_compute_roof(c.op) ? curve_json(c.profile.compute) : Json(nullptr);
      f["memory"] = curve_json(c.profile.memory);
      f["roofline_mape"] = c.roofline_mape;
      fitted[c.op] = f;
    }
    j["tables"] = in.fit->num_tables;
    j["table_points"] = in.fit->num_table_points;
  }
  j["fitted"] = fitted;
  Json val = Json::object();
  for (const std::string& op : cost::op_class_names()) {
    const auto it = in.validation.find(op);
    if (it == in.validation.end()) continue;
    const auto& s = it->second;
    val[op] = Json{{"rows", s.rows},
                   {"mape", s.mape},
                   {"median_ape", s.median_ape},
                   {"p90_ape", s.p90_ape},
                   {"table_rows", s.table_rows}};
  }
  j["validation"] = val;
  j["validation_sources"] = in.validation_sources;
  if (!in.kernels.empty()) {
    Json ks = Json::array();
    for (const auto& k : in.kernels) {
      ks.push_back(Json{{"kernel", k.kernel},
                        {"shape", k.shape},
                        {"time_s", k.time_s},
                        {"rate", k.rate},
                        {"unit", k.unit},
                        {"fraction", k.fraction}});
    }
    j["kernels"] = ks;
  }
  return j;
}

std::string calibration_table(const CalibrationReportInput& in) {
  std::string out;
  if (!in.kernels.empty()) {
    Table k({"kernel", "shape", "time", "achieved", "fraction"});
    k.set_title(
        "Measured kernels (fraction of the measured copy bandwidth or of the best GEMM rate)");
    for (const auto& r : in.kernels) {
      const double scaled = r.rate / 1e12;
      k.add_row({r.kernel, r.shape, human_seconds(r.time_s),
                 fixed(scaled, scaled < 10 ? 3 : 1) + " " + r.unit,
                 r.fraction > 0 ? percent(r.fraction) : "-"});
    }
    out += k.render() + "\n";
  }
  if (in.fit) {
    Table f(
        {"op class", "rows", "compute-bound", "launch", "eta_compute", "eta_memory", "fit MAPE"});
    f.set_title("Fitted efficiencies on " + in.gpu + " (knots: eta@log10 x)");
    for (const auto& c : in.fit->classes) {
      const bool roof = has_compute_roof(c.op);
      f.add_row({c.op, with_commas(c.rows), with_commas(c.compute_bound_rows),
                 fixed(c.launch_latency_s * 1e6, 1) + " us",
                 roof ? curve_text(c.profile.compute) : "-", curve_text(c.profile.memory),
                 fixed(c.roofline_mape, 1) + "%"});
    }
    out += f.render() + "\n";
  }
  if (!in.validation.empty()) {
    Table v({"op class", "rows", "from tables", "MAPE", "median APE", "p90 APE"});
    v.set_title("Validation on held-out measurements");
    for (const std::string& op : cost::op_class_names()) {
      const auto it = in.validation.find(op);
      if (it == in.validation.end()) continue;
      const auto& s = it->second;
      v.add_row({op, with_commas(s.rows), with_commas(s.table_rows), fixed(s.mape, 2) + "%",
                 fixed(s.median_ape, 2) + "%", fixed(s.p90_ape, 2) + "%"});
    }
    out += v.render() + "\n";
  }
  KeyValueTable kv;
  kv.add("profile", in.profile_path.empty() ? "(not written)" : in.profile_path);
  kv.add("provenance",
         in.provenance.kind + (in.provenance.device.empty() ? "" : ", " + in.provenance.device));
  if (in.fit) {
    kv.add("tables", with_commas(in.fit->num_tables) + " (" +
                         with_commas(in.fit->num_table_points) + " points)");
  }
  if (!in.measurements_path.empty()) kv.add("measurements", in.measurements_path);
  return out + kv.render();
}

}  // namespace kvsim::report
