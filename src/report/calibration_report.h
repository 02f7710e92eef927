#pragma once
// `kvsim calibrate` output ("kvsim.calibration/v1"): the profile written, the fitted
// efficiencies per op class, validation errors (percent) per op class, and, for --device runs,
// the measured kernels with their achieved rates.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "model/hardware_spec.h"
#include "report/json.h"

namespace kvsim::report {

// One timed kernel for the device table: achieved rate and its fraction of a reference (the
// measured copy bandwidth for bandwidth-bound kernels, the best GEMM rate for compute-bound ones).
struct KernelRow {
  std::string kernel;  // op class
  std::string shape;   // e.g. "m=4096 n=2560 k=8192 bf16"
  double time_s = 0;
  double rate = 0;      // FLOP/s or bytes/s
  std::string unit;     // "TFLOP/s" or "TB/s"
  double fraction = 0;  // of the reference rate
};

struct CalibrationReportInput {
  std::string profile_path;  // empty when no profile was written (--validate only)
  std::string gpu;           // base hardware name
  model::CostProvenance provenance;
  std::vector<std::string> sources;                  // measurement files (or "device N")
  std::map<std::string, std::int64_t> measurements;  // rows per op class
  std::optional<cost::FitResult> fit;
  std::map<std::string, cost::ValidationStats> validation;
  std::vector<std::string> validation_sources;
  std::vector<KernelRow> kernels;  // --device only
  std::string measurements_path;   // CSV written, if any
};

Json calibration_json(const CalibrationReportInput& in);
std::string calibration_table(const CalibrationReportInput& in);

// The table rows for measured kernels: achieved rate and fraction of the best copy bandwidth
// (memory-bound rows) or of the best GEMM rate of the same dtype (compute-bound rows).
std::vector<KernelRow> kernel_rows(const std::vector<cost::Measurement>& rows,
                                   const model::HardwareSpec& hardware);

}  // namespace kvsim::report
