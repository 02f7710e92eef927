// report/calibration_report.cpp: the measured-kernel rows of `kvsim calibrate --device`: the roof
// that binds each kernel, its achieved rate and its fraction of the best measured one.
#include <vector>

#include <catch2/catch.hpp>

#include "cost/cost_fixtures.h"
#include "cost/measurements.h"
#include "report/calibration_report.h"

using namespace kvsim;
using cost::Measurement;
using cost::OpClass;

namespace {

Measurement gemm(std::int64_t m, double time_s) {
  Measurement r;
  r.shape.op = OpClass::kGemm;
  r.shape.dtype = model::Dtype::kBf16;
  r.shape.m = m;
  r.shape.n = 4096;
  r.shape.k = 4096;
  r.shape.batch = 1;
  r.time_s = time_s;
  return r;
}

Measurement bytes_op(OpClass op, double bytes, double time_s, int gpus = 1) {
  Measurement r;
  r.shape.op = op;
  r.shape.dtype = model::Dtype::kBf16;
  r.shape.bytes = bytes;
  r.shape.num_gpus = gpus;
  r.time_s = time_s;
  return r;
}

}  // namespace

TEST_CASE("calibration report: rates and fractions of the best copy and the best GEMM",
          "[report][calibration]") {
  const std::vector<Measurement> rows = {
      gemm(4096, 200e-6),                            // compute-bound, the best GEMM
      gemm(4096, 400e-6),                            // half as fast
      gemm(1, 50e-6),                                // one row: bound by reading weights
      bytes_op(OpClass::kMemcpy, 1e9, 1e-3),         // the best copy
      bytes_op(OpClass::kMemcpy, 1e9, 2e-3),         // half as fast
      bytes_op(OpClass::kAllreduce, 1e8, 1e-3, 4)};  // a link, not HBM: no fraction
  const auto out = report::kernel_rows(rows, test::h100_sxm());
  REQUIRE(out.size() == rows.size());
  const double flops = 2.0 * 4096 * 4096 * 4096;
  CHECK(out[0].kernel == "gemm");
  CHECK(out[0].unit == "TFLOP/s");
  CHECK(out[0].rate == Approx(flops / 200e-6));
  CHECK(out[0].fraction == Approx(1.0));
  CHECK(out[0].time_s == 200e-6);
  CHECK(out[1].fraction == Approx(0.5));
  CHECK(out[2].unit == "TB/s");
  const double copy = cost::kernel_work(rows[3].shape).bytes / 1e-3;
  CHECK(out[3].kernel == "memcpy");
  CHECK(out[3].unit == "TB/s");
  CHECK(out[3].fraction == Approx(1.0));
  CHECK(out[4].fraction == Approx(0.5));
  CHECK(out[2].fraction == Approx(cost::kernel_work(rows[2].shape).bytes / 50e-6 / copy));
  CHECK(out[5].kernel == "allreduce");
  CHECK(out[5].fraction == 0);
  CHECK(out[0].shape != out[2].shape);  // the shape is spelled out per row
}

TEST_CASE("calibration report: without a copy or GEMM measured, fractions are 0",
          "[report][calibration]") {
  const auto out = report::kernel_rows({gemm(1, 50e-6)}, test::h100_sxm());
  REQUIRE(out.size() == 1);
  CHECK(out[0].unit == "TB/s");
  CHECK(out[0].fraction == 0);
  CHECK(report::kernel_rows({}, test::h100_sxm()).empty());
}
