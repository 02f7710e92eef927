#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/calibrate_run.h"
#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/strings.h"
#include "config/catalog.h"
#include "config/cost_profile_yaml.h"
#include "cost/calibration.h"
#include "cost/device_calibration.h"
#include "cost/measurements.h"
#include "kernels/device.h"
#include "kernels/kernels.h"
#include "model/dtype.h"
#include "report/calibration_report.h"

namespace kvsim::cli {
namespace {

struct CalibrateFlags {
  std::vector<std::string> from;
  std::string from_format = "auto";
  std::string gpu;
  std::string out;  // the profile (hardware YAML)
  std::vector<std::string> validate;
  int device = -1;
  std::string model;
  std::vector<std::int64_t> tensor_parallel_sizes = {1, 2, 4, 8};
  bool quick = false;
  bool no_fp8 = false;
  std::string measurements_out;
  bool no_tables = false;
  std::vector<std::string> tables_for;  // op classes to table (empty: every class)
  int max_knots = 6;
  std::vector<std::string> dtypes;  // fit only rows of these dtypes (empty: all)
  bool share_memory_curve = false;
  double holdout = 0;
  std::int64_t holdout_seed = 1;
  std::string date;
  std::string device_name;
  std::string driver;
  std::string format;
  std::string report;
  FromRunFlags from_run;  // --from-run and the deployment replaying it
};

std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// The shipped GPU whose name's first word (h200, a100, ...) appears in the device name, when
// exactly one does.
std::string guess_gpu(const std::string& device_name) {
  const std::string dev = to_lower(device_name);
  std::vector<std::string> hits;
  for (const std::string& name : config::hardware_names()) {
    const std::string head(split(name, '-').front());
    if (!head.empty() && dev.find(head) != std::string::npos) hits.push_back(name);
  }
  if (hits.size() != 1) {
    throw flag_error("--gpu", "expected --gpu BASE for device '" + device_name + "' (" +
                                  (hits.empty() ? std::string("no shipped GPU matches")
                                                : "candidates: " + join(hits, ", ")) +
                                  ")");
  }
  return hits.front();
}

std::string default_measurements_path(const std::string& out) {
  std::string base = out;
  for (const char* ext : {".yaml", ".yml"}) {
    const std::string e(ext);
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
      break;
    }
  }
  return base + ".measurements.csv";
}

// Which inputs the flags give (--from, --device, --validate) and --max-knots.
void check_flags(const CalibrateFlags& f, bool device_mode) {
  if (f.from.empty() && !device_mode && f.validate.empty()) {
    throw flag_error("--from",
                     "expected --from FILE (measurements to fit), --device N (measure this GPU), "
                     "or --validate FILE");
  }
  if (device_mode && !f.from.empty())
    throw flag_error("--device", "expected either --device or --from, not both");
  if (f.max_knots < 1 || f.max_knots > 32)
    throw flag_error("--max-knots", "expected 1..32, got " + std::to_string(f.max_knots));
  if (!(f.holdout >= 0 && f.holdout < 1)) {
    throw flag_error("--holdout", "expected a fraction in [0, 1), got " + format_number(f.holdout));
  }
  if (f.holdout > 0 && f.from.empty() && !device_mode)
    throw flag_error("--holdout", "expected --from or --device: there are no rows to hold out");
}

// The CUDA GPU --device names (with --model, whose shapes it measures).
kernels::DeviceInfo local_device(const CalibrateFlags& f) {
  if (kernels::device_count() <= f.device) {
    throw flag_error("--device", "no CUDA GPU " + std::to_string(f.device) + " here (" +
                                     kernels::device_summary() +
                                     "); fit measurements taken elsewhere with --from FILE");
  }
  if (f.model.empty()) {
    throw flag_error("--model", "expected --model NAME: calibration measures that model's shapes");
  }
  return kernels::device_info(f.device);
}

// Times the model's kernel shapes on the local GPU; records the source and kernels in `in`.
std::vector<cost::Measurement> measure_device(const CalibrateFlags& f,
                                              const model::HardwareSpec& hw,
                                              const kernels::DeviceInfo& info,
                                              report::CalibrationReportInput& in) {
  const model::ModelSpec m = config::load_model(f.model);
  cost::DevicePlanOptions po;
  po.tensor_parallel_sizes = f.tensor_parallel_sizes;
  po.quick = f.quick;
  po.fp8 = !f.no_fp8;
  po.num_gpus = info.device_count;
  po.nccl = kernels::nccl_compiled();
  const auto plan = cost::device_plan(m, po);
  std::fprintf(stderr, "kvsim calibrate: timing %zu kernels on %s\n", plan.size(),
               info.name.c_str());
  std::vector<cost::Measurement> rows =
      cost::run_device_plan(f.device, plan, f.quick, [](std::size_t done, std::size_t total) {
        if (done % 25 == 0 || done == total) std::fprintf(stderr, "  %zu/%zu\n", done, total);
      });
  in.sources.push_back("device " + std::to_string(f.device) + " (" + info.name + ")");
  in.kernels = report::kernel_rows(rows, hw);
  if (!f.out.empty() || !f.measurements_out.empty()) {
    in.measurements_path =
        f.measurements_out.empty() ? default_measurements_path(f.out) : f.measurements_out;
  }
  return rows;
}

// Every file's rows; an importer's notes on skipped rows go to stderr.
std::vector<cost::Measurement> load_all(const std::vector<std::string>& paths,
                                        cost::MeasurementFormat format,
                                        std::vector<std::string>& sources) {
  std::vector<cost::Measurement> rows;
  for (const std::string& path : paths) {
    std::vector<std::string> notes;
    const auto r = cost::load_measurements(path, format, &notes);
    for (const auto& n : notes) std::fprintf(stderr, "kvsim calibrate: %s\n", n.c_str());
    rows.insert(rows.end(), r.begin(), r.end());
    sources.push_back(path);
  }
  return rows;
}

// --dtypes: keeps the rows of the named dtypes (none named: every row), saying what it dropped.
std::vector<cost::Measurement> keep_dtypes(std::vector<cost::Measurement> rows,
                                           const std::vector<std::string>& names) {
  if (names.empty()) return rows;
  std::vector<model::Dtype> keep;
  for (const std::string& n : names) {
    const auto d = model::parse_dtype(n);
    if (!d) {
      throw flag_error("--dtypes", "expected dtypes (" + join(model::dtype_names(), ", ") +
                                       "), got '" + n + "'" +
                                       did_you_mean(n, model::dtype_names()));
    }
    keep.push_back(*d);
  }
  std::map<std::string, std::int64_t> dropped;
  std::vector<cost::Measurement> out;
  for (auto& r : rows) {
    if (std::find(keep.begin(), keep.end(), r.shape.dtype) != keep.end()) {
      out.push_back(std::move(r));
    } else {
      dropped[std::string(cost::op_class_name(r.shape.op)) + " " +
              std::string(model::dtype_name(r.shape.dtype))] += 1;
    }
  }
  for (const auto& [what, n] : dropped) {
    std::fprintf(stderr, "kvsim calibrate: --dtypes: left out %lld %s rows\n",
                 static_cast<long long>(n), what.c_str());
  }
  return out;
}

// --holdout: scores the fitted profile on the held-out rows and records the errors in its
// provenance (and as the report's validation when --validate gives no other rows).
void score_held_out(const CalibrateFlags& f, const std::vector<cost::Measurement>& held,
                    model::HardwareSpec& hw, report::CalibrationReportInput& in) {
  const auto stats = cost::validate_profile(hw, held);
  auto& prov = hw.cost.provenance;
  prov.held_out_fraction = f.holdout;
  prov.held_out_seed = f.holdout_seed;
  for (const auto& [op, s] : stats) prov.held_out[op] = {s.rows, s.median_ape, s.p90_ape};
  in.provenance = prov;
  if (in.fit) in.fit->profile.provenance = prov;
  if (f.validate.empty()) {
    in.validation = stats;
    in.validation_sources = {"held out: " + format_number(100 * f.holdout) +
                             "% of the rows (seed " + std::to_string(f.holdout_seed) + ")"};
  }
}

// Fits the profile relative to `hw` (whose cost profile becomes the fitted one), with the
// provenance the flags or the device give.
void fit(const CalibrateFlags& f, const std::vector<cost::Measurement>& rows, bool device_mode,
         const kernels::DeviceInfo& info, model::HardwareSpec& hw,
         report::CalibrationReportInput& in) {
  cost::FitOptions fo;
  fo.max_knots = f.max_knots;
  fo.keep_tables = !f.no_tables;
  fo.table_classes = f.tables_for;
  for (const std::string& c : f.tables_for) {
    if (!cost::parse_op_class(c)) {
      throw flag_error(
          "--tables-for",
          "expected op classes (" + join(cost::op_class_names(), ", ") + "), got '" + c + "'");
    }
  }
  if (f.no_tables && !f.tables_for.empty())
    throw flag_error("--tables-for", "expected no --no-tables with it (it keeps tables)");
  fo.share_memory_curve = f.share_memory_curve;
  model::HardwareSpec base = hw;
  auto& prov = base.cost.provenance;
  prov.kind = device_mode ? "calibrated" : "imported";
  prov.device = !f.device_name.empty() ? f.device_name : device_mode ? info.name : "unknown";
  prov.driver = !f.driver.empty() ? f.driver
                : device_mode ? "CUDA driver " + std::to_string(info.driver_version / 1000) + "." +
                                    std::to_string(info.driver_version % 1000 / 10)
                              : "";
  prov.date = f.date.empty() ? today_utc() : f.date;
  prov.kvsim_version = KVSIM_VERSION;
  prov.source = join(in.sources, "; ");
  // Classes the base had fitted stay measured; its held-out errors described another fit.
  prov.held_out.clear();
  prov.held_out_fraction = 0;
  prov.held_out_seed = 0;
  in.fit = cost::fit_profile(rows, base, fo);
  auto& fitted = in.fit->profile.provenance.fitted_op_classes;
  for (const auto& c : in.fit->classes) {
    if (std::find(fitted.begin(), fitted.end(), c.op) == fitted.end()) fitted.push_back(c.op);
  }
  in.provenance = in.fit->profile.provenance;
  hw.cost = in.fit->profile;
}

// Measurements, then the profile (each atomically); the report comes after.
void write_files(const CalibrateFlags& f, const std::vector<cost::Measurement>& rows,
                 const model::HardwareSpec& hw, report::CalibrationReportInput& in) {
  if (!in.measurements_path.empty())
    write_file_atomically(in.measurements_path, cost::measurements_csv(rows));
  if (!f.out.empty()) {
    if (!in.fit)
      throw flag_error("--out", "expected --from or --device: there is no fitted profile to write");
    write_file_atomically(f.out,
                          config::replace_cost_model_section(hardware_yaml_text(f.gpu), hw.cost));
    in.profile_path = f.out;
  }
}

// --from-run: fits the framework overheads instead of the kernels (cli/calibrate_run.h).
void run_from_runs(const CalibrateFlags& f) {
  if (!f.from.empty() || f.device >= 0 || !f.validate.empty() || f.holdout > 0) {
    throw flag_error("--from-run",
                     "expected --from-run alone: it fits the overheads, not the "
                     "kernels (drop --from, --device, --validate, --holdout)");
  }
  run_from_run(f.from_run, {f.gpu, f.model, f.out, f.date, f.format, f.report});
}

void run(CalibrateFlags& f) {
  if (!f.from_run.runs.empty()) {
    run_from_runs(f);
    return;
  }
  check_no_from_run_flags(f.from_run);
  const bool device_mode = f.device >= 0;
  check_flags(f, device_mode);
  const auto format = cost::parse_measurement_format(f.from_format);

  report::CalibrationReportInput in;
  std::vector<cost::Measurement> rows;
  kernels::DeviceInfo info;
  if (device_mode) {
    info = local_device(f);
    if (f.gpu.empty()) f.gpu = guess_gpu(info.name);
  }
  if (f.gpu.empty()) {
    throw flag_error("--gpu",
                     "expected --gpu BASE: the GPU whose datasheet roofs the fit is relative to");
  }
  model::HardwareSpec hw = config::load_hardware(f.gpu);
  in.gpu = hw.name;

  if (device_mode) {
    rows = measure_device(f, hw, info, in);
  } else {
    rows = keep_dtypes(load_all(f.from, format, in.sources), f.dtypes);
    if (!f.measurements_out.empty()) in.measurements_path = f.measurements_out;
  }
  for (const auto& r : rows) in.measurements[std::string(cost::op_class_name(r.shape.op))] += 1;

  const auto split =
      cost::split_holdout(rows, f.holdout, static_cast<std::uint64_t>(f.holdout_seed));
  if (f.holdout > 0 && (split.fit.empty() || split.held_out.empty())) {
    throw flag_error("--holdout", "holding out " + format_number(f.holdout) + " of " +
                                      std::to_string(rows.size()) + " rows leaves " +
                                      (split.fit.empty() ? "none to fit" : "none to score"));
  }
  if (!split.fit.empty()) {
    fit(f, split.fit, device_mode, info, hw, in);
    if (!split.held_out.empty()) score_held_out(f, split.held_out, hw, in);
  } else {
    in.provenance = hw.cost.provenance;
  }
  if (!f.validate.empty()) {
    in.validation = cost::validate_profile(hw, load_all(f.validate, format, in.validation_sources));
  }
  write_files(f, rows, hw, in);
  report::OutputOptions out;
  out.format = f.format;
  out.out_path = f.report;
  report::emit(out,
               {[&] { return report::dump(report::calibration_json(in)); },
                [&] { return report::calibration_table(in); }, nullptr},
               "calibrate");
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto f = std::make_shared<CalibrateFlags>();
  auto* c = app.add_subcommand(
      "calibrate", "Measure kernels on the local GPU, or fit a profile from a measurement CSV");
  c->add_option("--from", f->from,
                "Measurement CSV to fit (repeatable): kvsim format, Vidur's or aiconfigurator's "
                "CSVs");
  c->add_option("--from-format", f->from_format,
                "auto (by header), kvsim, vidur or aiconfigurator (its gemm, attention and "
                "custom all-reduce tables)");
  c->add_option("--gpu", f->gpu,
                "Base GPU (shipped name or hardware YAML) whose datasheet roofs the fit uses");
  c->add_option(
       "--out", f->out,
       "Write the calibrated profile: the base GPU's YAML with a fitted cost_model section")
      ->each([](const std::string& path) { check_output_path(path, "--out"); });
  c->add_option("--validate", f->validate,
                "Held-out measurement CSV to score the profile on (repeatable)");
  c->add_option("--device", f->device, "Measure on this CUDA device (needs --model)");
  c->add_option("--model", f->model,
                "Model whose kernel shapes --device measures, or that --from-run replays");
  c->add_option("--tp-sizes", f->tensor_parallel_sizes,
                "Tensor-parallel shards to measure (--device)")
      ->delimiter(',');
  c->add_flag("--quick", f->quick, "A short sweep (a few points per kernel family)");
  c->add_flag("--no-fp8", f->no_fp8, "Do not time fp8 GEMMs");
  c->add_option("--measurements-out", f->measurements_out,
                "Write the measurements as kvsim CSV (--device default: <out>.measurements.csv)")
      ->each([](const std::string& path) { check_output_path(path, "--measurements-out"); });
  c->add_flag("--no-tables", f->no_tables, "Keep no exact-shape tables, only the fitted curves");
  c->add_option("--tables-for", f->tables_for,
                "Keep exact-shape tables only for these op classes, e.g. moe (default: every "
                "class); the others keep only their fitted curves")
      ->delimiter(',');
  c->add_option("--max-knots", f->max_knots, "Knots per efficiency curve (default 6)");
  c->add_option("--holdout", f->holdout,
                "Hold this fraction of the rows out of the fit and score the profile on them; "
                "the errors go into the profile's provenance (default 0)");
  c->add_option("--holdout-seed", f->holdout_seed, "Seed of the --holdout split (default 1)");
  c->add_option("--dtypes", f->dtypes,
                "Fit only the --from rows of these dtypes, e.g. bf16,fp16 (default: every row; "
                "8- and 4-bit GEMMs get their own curves)")
      ->delimiter(',');
  c->add_flag("--share-memory-curve", f->share_memory_curve,
              "8- and 4-bit entries (gemm.fp8) keep their fitted compute curve but take "
              "the 16-bit entry's memory curve and launch latency (bytes stream at the memory's "
              "rate whatever their type); attention and fused-MoE entries keep their own");
  c->add_option("--date", f->date, "Provenance date (default: today, UTC)");
  c->add_option("--device-name", f->device_name,
                "Provenance device name (default: the measured GPU, else 'unknown')");
  c->add_option("--driver", f->driver, "Provenance driver (default: the CUDA driver of --device)");
  c->add_option("--format", f->format,
                "Output format: table|json (default: table on a terminal, else json)");
  c->add_option("--report", f->report, "Also write the JSON report to this file (atomically)");
  add_from_run_flags(c, f->from_run);
  c->callback([f] { run(*f); });
}

}  // namespace kvsim::cli
