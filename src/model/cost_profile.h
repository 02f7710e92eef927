#pragma once
// The fitted part of a hardware profile: how far below its datasheet roofline each class of
// kernel runs, and where those numbers come from. Plain data; cost/ evaluates it and fits it,
// config/ reads and writes it (the `cost_model:` section of a hardware YAML).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvsim::model {

// A piecewise-linear function of x (e.g. log10 of an op's FLOPs or bytes), clamped at both ends.
// Empty knots: the constant `value` everywhere.
struct EfficiencyCurve {
  double value = 1.0;      // used when knots_x is empty
  std::vector<double> knots_x;  // strictly increasing
  std::vector<double> knots_y;  // same size as knots_x, each in (0, 1]

  double at(double x) const;
};

// One op class (gemm, attn_prefill, attn_decode, allreduce, memcpy, elementwise).
struct OpClassProfile {
  EfficiencyCurve compute;    // η_c: achieved / peak FLOP/s, against log10(FLOPs)
  EfficiencyCurve memory;     // η_m: achieved / peak bytes/s, against log10(bytes)
  double launch_latency_s = 0;  // added once per kernel
};

struct CostProvenance {
  std::string kind = "datasheet";  // "datasheet" | "calibrated" | "imported"
  std::string device;              // GPU name the numbers were measured on
  std::string driver;
  std::string date;                // ISO 8601
  std::string kvsim_version;
  std::string source;              // measurement file or datasheet reference
};

struct CostProfile {
  CostProvenance provenance;
  std::map<std::string, OpClassProfile> op_classes;  // keyed by op class name
  double step_overhead_s = 0;  // CPU time per engine step (scheduling, sampling)
};

}  // namespace kvsim::model
