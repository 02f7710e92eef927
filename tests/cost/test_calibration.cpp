#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/rng.h"
#include "cost/calibration.h"
#include "cost/cost_fixtures.h"
#include "cost/measurements.h"
#include "cost/tables.h"
#include "test_util.h"

using namespace kvsim;
using cost::KernelShape;
using cost::Measurement;
using cost::OpClass;

namespace {

// The "true" GPU behind the synthetic measurements.
model::OpClassProfile true_gemm() {
  model::OpClassProfile p;
  p.compute.knots_x = {8, 10, 12};
  p.compute.knots_y = {0.15, 0.55, 0.8};
  p.memory.value = 0.85;
  p.launch_latency_s = 5e-6;
  return p;
}

model::OpClassProfile true_allreduce() {
  model::OpClassProfile p;
  p.memory.knots_x = {4, 6, 8};
  p.memory.knots_y = {0.05, 0.4, 0.8};
  p.launch_latency_s = 10e-6;
  return p;
}

double true_time(const model::HardwareSpec& hw, const KernelShape& s) {
  const auto roof = cost::roof_for(hw, s.op, s.dtype, s.num_gpus);
  const auto prof = s.op == OpClass::kGemm ? true_gemm() : true_allreduce();
  return cost::roofline_time(prof, roof.peak_flops, roof.bandwidth, roof.extra_latency_s,
                             cost::kernel_work(s))
      .time_s;
}

std::vector<Measurement> synthetic(const model::HardwareSpec& hw, double noise,
                                   std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Measurement> rows;
  const std::pair<int, int> nk[] = {{2560, 8192}, {8192, 2048},  {14336, 8192}, {8192, 7168},
                                    {4096, 4096}, {12288, 4096}, {512, 512},    {1024, 1024}};
  for (const auto& [n, k] : nk) {
    for (int m = 1; m <= 8192; m *= 2) {
      Measurement r;
      r.shape.op = OpClass::kGemm;
      r.shape.dtype = model::Dtype::kFp16;
      r.shape.m = m, r.shape.n = n, r.shape.k = k, r.shape.batch = 1;
      r.time_s = true_time(hw, r.shape) * std::exp(noise * rng.normal());
      rows.push_back(r);
    }
  }
  for (int p : {2, 4, 8}) {
    for (double bytes = 2048; bytes <= 64.0 * 1024 * 1024; bytes *= 2) {
      Measurement r;
      r.shape.op = OpClass::kAllreduce;
      r.shape.dtype = model::Dtype::kFp16;
      r.shape.bytes = bytes;
      r.shape.num_gpus = p;
      r.time_s = true_time(hw, r.shape) * std::exp(noise * rng.normal());
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("The fit recovers known efficiencies from noisy synthetic measurements", "[cost]") {
  const auto hw = test::a100_sxm();
  const auto rows = synthetic(hw, 0.03, 42);  // 3% log-normal noise
  cost::FitOptions opt;
  opt.keep_tables = false;
  const auto fit = cost::fit_profile(rows, hw, opt);
  REQUIRE(fit.classes.size() == 2);
  CHECK(fit.num_tables == 0);
  const auto& g = fit.profile.op_classes.at("gemm");
  // Efficiencies are identifiable where their side of the roofline binds: compute above ~1e10
  // FLOPs for these shapes, memory above ~1e7 bytes, the all-reduce link above ~1e6 bytes.
  for (double x : {10.0, 11.0, 12.0}) {
    INFO("log10 FLOPs " << x);
    CHECK(g.compute.at(x) == Approx(true_gemm().compute.at(x)).epsilon(0.08));
  }
  CHECK(g.memory.at(7.5) == Approx(0.85).epsilon(0.05));
  CHECK(g.memory.at(8.3) == Approx(0.85).epsilon(0.05));
  CHECK(g.launch_latency_s == Approx(5e-6).margin(1.5e-6));
  const auto& ar = fit.profile.op_classes.at("allreduce");
  for (double x : {6.0, 7.0, 8.0}) {
    INFO("log10 bytes " << x);
    CHECK(ar.memory.at(x) == Approx(true_allreduce().memory.at(x)).epsilon(0.1));
  }
  CHECK(ar.launch_latency_s == Approx(10e-6).margin(3e-6));
  // Scored on fresh noise-free measurements, the fitted roofline is within a few percent.
  auto fitted_hw = hw;
  fitted_hw.cost = fit.profile;
  const auto clean = synthetic(hw, 0.0, 7);
  const auto v = cost::validate_profile(fitted_hw, clean);
  CHECK(v.at("gemm").rows == 8 * 14);
  CHECK(v.at("gemm").mape < 4.0);
  CHECK(v.at("allreduce").mape < 6.0);
  CHECK(v.at("gemm").table_rows == 0);
  // The datasheet profile (defaults) is far worse on the same rows.
  const auto v0 = cost::validate_profile(hw, clean);
  CHECK(v0.at("gemm").mape > 2 * v.at("gemm").mape);
}

TEST_CASE("The fit keeps exact-shape tables, the predictor interpolates them log-log", "[cost]") {
  const auto hw = test::a100_sxm();
  auto rows = synthetic(hw, 0.0, 1);
  rows.push_back(rows.front());  // a duplicate measurement is merged (median)
  const auto fit = cost::fit_profile(rows, hw, {});
  CHECK(fit.num_tables == 8 + 3);  // eight GEMM (n, k) families, three all-reduce GPU counts
  CHECK(fit.num_table_points == 8 * 14 + 3 * 16);
  auto fitted = hw;
  fitted.cost = fit.profile;
  const cost::Predictor pred(fitted, true);
  KernelShape s;
  s.op = OpClass::kGemm;
  s.dtype = model::Dtype::kFp16;
  s.n = 2560, s.k = 8192, s.batch = 1;
  s.m = 512;
  bool table = false;
  CHECK(pred.predict(s, &table) == Approx(true_time(hw, s)).epsilon(1e-5));
  CHECK(table);
  s.m = 3000;  // between 2048 and 4096: log-log interpolation
  const double t2048 =
      true_time(hw, KernelShape{OpClass::kGemm, model::Dtype::kFp16, 2048, 2560, 8192, 1});
  const double t4096 =
      true_time(hw, KernelShape{OpClass::kGemm, model::Dtype::kFp16, 4096, 2560, 8192, 1});
  const double f = std::log(3000.0 / 2048) / std::log(2.0);
  CHECK(pred.predict(s, &table) ==
        Approx(std::exp(std::log(t2048) + f * std::log(t4096 / t2048))).epsilon(1e-5));
  s.m = 20000;  // beyond the table: the fitted roofline
  pred.predict(s, &table);
  CHECK_FALSE(table);
}

TEST_CASE("Prepared tables interpolate in log x1 and log(1 + x2)", "[cost]") {
  model::MeasuredTable t;
  t.op = "attn_decode";
  t.dtype = "fp16";
  t.points = {{1, 0, 10e-6}, {4, 0, 40e-6}, {1, 99, 20e-6}, {4, 99, 80e-6}, {16, 99, 320e-6}};
  const cost::PreparedTable p(t);
  CHECK(p.num_points() == 5);
  CHECK(p.lookup(2, 0) == Approx(20e-6));
  CHECK(p.lookup(4, 99) == Approx(80e-6));
  CHECK(p.lookup(8, 99) == Approx(160e-6));
  // Halfway in log(1 + x2) between 0 and 99: log(1 + x2) = log(100) / 2 → x2 = 9.
  CHECK(p.lookup(1, 9) == Approx(std::sqrt(10e-6 * 20e-6)));
  CHECK(p.lookup(8, 9) < 0);  // line x2 = 0 does not reach x1 = 8
  CHECK(p.lookup(1, 100) < 0);
  CHECK(p.lookup(0.5, 0) < 0);
}

TEST_CASE("Measurement CSV: round trip and located errors", "[cost]") {
  const std::string dir = test::temp_dir();
  const std::string header =
      "op,dtype,m,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,bytes,num_gpus,time_us\n";
  const std::string good = test::write_temp_file(dir, "m.csv",
                                                 header +
                                                     "gemm,bf16,64,2560,8192,,,,,,,,,12.5\n"
                                                     "attn_decode,fp16,,,,32,,4096,16,2,128,,,140\n"
                                                     "attn_prefill,fp16,,,,1,512,0,16,2,128,,,90\n"
                                                     "allreduce,bf16,,,,,,,,,,1048576,4,30\n"
                                                     "memcpy,fp16,,,,,,,,,,1073741824,,700\n");
  const auto rows = cost::load_measurements(good, cost::MeasurementFormat::kAuto);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].shape.m == 64);
  CHECK(rows[0].time_s == Approx(12.5e-6));
  CHECK(rows[1].shape.op == OpClass::kAttnDecode);
  CHECK(rows[1].shape.kv_len == 4096);
  CHECK(rows[3].shape.num_gpus == 4);
  CHECK(rows[4].line == 6);
  const std::string again = test::write_temp_file(dir, "again.csv", cost::measurements_csv(rows));
  CHECK(cost::measurements_csv(cost::load_measurements(again, cost::MeasurementFormat::kKvsim)) ==
        cost::measurements_csv(rows));

  const auto bad = [&](const std::string& row) {
    const std::string path = test::write_temp_file(dir, "bad.csv", header + row);
    return test::error_of([&] { cost::load_measurements(path, cost::MeasurementFormat::kAuto); });
  };
  CHECK_THAT(bad("gemn,bf16,64,2560,8192,,,,,,,,,12.5\n"),
             Catch::Contains("bad.csv:2:1: op:") && Catch::Contains("did you mean 'gemm'"));
  CHECK_THAT(bad("gemm,bf16,,2560,8192,,,,,,,,,12.5\n"),
             Catch::Contains(":2:3: m: expected an integer"));
  CHECK_THAT(bad("gemm,bf16,64,2560,8192,,,,,,,,,0\n"),
             Catch::Contains("time_us: expected a positive time"));
  CHECK_THAT(bad("gemm,bf17,64,2560,8192,,,,,,,,,1\n"), Catch::Contains("dtype"));
  CHECK_THAT(bad("gemm,bf16,64\n"), Catch::Contains("bad.csv:2: expected 14 cells, got 3"));
  CHECK_THROWS_WITH(cost::parse_measurement_format("vidr"),
                    Catch::Contains("did you mean 'vidur'"));
}

TEST_CASE("Vidur importer maps operators to kernel shapes", "[cost]") {
  KVSIM_REQUIRE_SHARED(mlp, "profiles/vidur_a100/a100_Llama-2-70b-hf_mlp.csv");
  KVSIM_REQUIRE_SHARED(attn, "profiles/vidur_a100/a100_legacy_attention_n8192_q64_kv8_tp2.csv");
  KVSIM_REQUIRE_SHARED(ar, "profiles/vidur_a100/a100_dgx_all_reduce.csv");
  const auto m = cost::load_measurements(mlp, cost::MeasurementFormat::kVidur);
  // 1,044 rows × (4 GEMMs + 6 elementwise operators).
  CHECK(m.size() == 1044 * 10);
  // First row: 4,096 tokens at TP 1: QKV n = (64 + 2·8)·128 = 10240, k = 8192; 2.872 ms.
  CHECK(m[0].shape.op == OpClass::kGemm);
  CHECK(m[0].shape.m == 4096);
  CHECK(m[0].shape.n == 10240);
  CHECK(m[0].shape.k == 8192);
  CHECK(m[0].time_s == Approx(2.872e-3));
  const auto a = cost::load_measurements(attn, cost::MeasurementFormat::kAuto);
  std::int64_t prefill = 0, decode = 0;
  for (const auto& r : a) (r.shape.op == OpClass::kAttnPrefill ? prefill : decode) += 1;
  CHECK(prefill == 4418);
  CHECK(decode == 10240);
  CHECK(a[0].shape.q_heads == 32);
  CHECK(a[0].shape.kv_heads == 4);
  CHECK(a[0].shape.head_dim == 128);
  const auto r = cost::load_measurements(ar, cost::MeasurementFormat::kVidur);
  CHECK(r.size() == 2982);  // single-node rows only
  for (const auto& row : r) CHECK(row.shape.num_gpus >= 2);
}
