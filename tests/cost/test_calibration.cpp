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

TEST_CASE("split_holdout: a fraction of the rows by file name, line and seed", "[cost]") {
  std::vector<Measurement> rows;
  for (int line = 2; line < 2002; ++line) {
    Measurement m;
    m.file = "/some/where/gemm.csv";
    m.line = line;
    rows.push_back(m);
    m.file = "attention.csv";
    rows.push_back(m);
  }
  const auto split = cost::split_holdout(rows, 0.1, 1);
  CHECK(split.fit.size() + split.held_out.size() == rows.size());  // no row lost or doubled
  // 4,000 rows: about 400 held out (binomial sd 19).
  CHECK(split.held_out.size() > 320);
  CHECK(split.held_out.size() < 480);
  // The folder does not matter, the base name, line and seed do.
  for (auto& m : rows) {
    if (m.file == "/some/where/gemm.csv") m.file = "elsewhere/gemm.csv";
  }
  const auto moved = cost::split_holdout(rows, 0.1, 1);
  REQUIRE(moved.held_out.size() == split.held_out.size());
  for (std::size_t i = 0; i < moved.held_out.size(); ++i)
    CHECK(moved.held_out[i].line == split.held_out[i].line);
  // Another seed holds out other rows: about 10% of the first seed's again, not all of them.
  const auto other = cost::split_holdout(rows, 0.1, 2);
  std::size_t shared = 0;
  for (const auto& a : other.held_out) {
    for (const auto& b : moved.held_out) shared += a.line == b.line && a.file == b.file;
  }
  CHECK(shared < moved.held_out.size() / 4);
  CHECK(cost::split_holdout(rows, 0, 1).held_out.empty());
  // Rows from one line (a Vidur operator row gives several) go together.
  std::vector<Measurement> same_line(5, rows.front());
  const auto together = cost::split_holdout(same_line, 0.5, 3);
  CHECK((together.fit.empty() || together.held_out.empty()));
}

TEST_CASE("non_decreasing pools each falling run of knots to its geometric mean", "[cost]") {
  model::EfficiencyCurve c;
  c.knots_x = {6, 7, 8, 9};
  c.knots_y = {0.1, 0.4, 0.2, 0.8};
  auto m = cost::non_decreasing(c);
  CHECK(m.knots_x == c.knots_x);
  // 0.4 then 0.2 fall: both become sqrt(0.4 x 0.2).
  CHECK(m.knots_y[0] == Approx(0.1));
  CHECK(m.knots_y[1] == Approx(std::sqrt(0.08)));
  CHECK(m.knots_y[2] == Approx(std::sqrt(0.08)));
  CHECK(m.knots_y[3] == Approx(0.8));
  // A curve that falls throughout (the shipped A100 fit's first three knots) becomes flat; a
  // pooled block that then falls below its left neighbour merges with it too.
  c.knots_y = {0.45, 0.115, 0.07, 0.9};
  m = cost::non_decreasing(c);
  const double flat = std::cbrt(0.45 * 0.115 * 0.07);
  CHECK(m.knots_y[0] == Approx(flat));
  CHECK(m.knots_y[2] == Approx(flat));
  CHECK(m.knots_y[3] == Approx(0.9));
  c.knots_y = {0.3, 0.5, 0.1};  // 0.5, 0.1 pool to 0.2236 < 0.3: all three pool
  m = cost::non_decreasing(c);
  CHECK(m.knots_y[0] == Approx(std::cbrt(0.3 * 0.5 * 0.1)));
  CHECK(m.knots_y[2] == Approx(std::cbrt(0.3 * 0.5 * 0.1)));
  // Already non-decreasing (bit for bit), or a constant curve without knots: unchanged.
  c.knots_y = {0.1, 0.1, 0.5};
  CHECK(cost::non_decreasing(c).knots_y == c.knots_y);
  model::EfficiencyCurve constant;
  constant.value = 0.7;
  CHECK(cost::non_decreasing(constant).value == 0.7);
}

TEST_CASE(
    "A fitted prefill-attention memory curve never falls with size, so an MHA model is not "
    "priced off its far end",
    "[cost]") {
  // Read against bytes, Vidur's short GQA prefills look memory-bound with an efficiency that
  // falls as they grow (their work is quadratic in the prompt, their bytes linear). Such a curve,
  // met by an MHA model's 2.2 x larger KV bytes per token, priced OPT-13B's 2,048-token prefill
  // attention at 4 x what the same measurements imply.
  KVSIM_REQUIRE_SHARED(path, "profiles/vidur_a100/a100_legacy_attention_n8192_q64_kv8_tp2.csv");
  const auto hw = test::a100_sxm();
  cost::FitOptions opt;
  opt.keep_tables = false;
  const auto fit =
      cost::fit_profile(cost::load_measurements(path, cost::MeasurementFormat::kVidur), hw, opt);
  const auto& curve = fit.profile.op_classes.at("attn_prefill").memory;
  REQUIRE(curve.knots_y.size() >= 2);
  for (std::size_t i = 1; i < curve.knots_y.size(); ++i) {
    INFO("knot " << i);
    CHECK(curve.knots_y[i] >= curve.knots_y[i - 1]);
  }
  auto fitted_hw = hw;
  fitted_hw.cost = fit.profile;
  const cost::Predictor predictor(fitted_hw, false);
  const auto prompt = [](std::int64_t q_heads, std::int64_t kv_heads) {
    KernelShape s;
    s.op = OpClass::kAttnPrefill;
    s.dtype = model::Dtype::kFp16;
    s.batch = 1, s.q_len = 2048, s.kv_len = 0;  // one whole 2,048-token prompt
    s.q_heads = q_heads, s.kv_heads = kv_heads, s.head_dim = 128;
    return s;
  };
  // Vidur measured 0.681 ms with 32 query and 4 KV heads (TP 2 of 64/8). The kernel's work goes
  // with the query heads, so 40 MHA heads (OPT-13B, TP 1) take about 40/32 of that. One pair of
  // curves also fits Vidur's chunks over cached prefixes, which run faster per FLOP, so whole
  // prompts come out up to ~45% fast; the falling curve had the MHA one 4.2 x slow.
  const double gqa = 0.681e-3, mha = gqa * 40.0 / 32.0;
  CHECK(predictor.predict(prompt(32, 4)) == Approx(gqa).epsilon(0.5));
  CHECK(predictor.predict(prompt(40, 40)) == Approx(mha).epsilon(0.5));
}

TEST_CASE(
    "A shared memory curve: an fp8 GEMM entry keeps its compute curve and takes the "
    "16-bit memory curve",
    "[cost]") {
  const auto hw = test::h100_sxm();
  // fp8 GEMMs: half the fp16 compute share of their (twice as high) peak, and a slower memory
  // side (0.5 of the bandwidth against fp16's 0.85) that the shared fit must not keep.
  model::OpClassProfile fp8_truth = true_gemm();
  for (double& y : fp8_truth.compute.knots_y) y *= 0.5;
  fp8_truth.memory.value = 0.5;
  fp8_truth.launch_latency_s = 12e-6;
  std::vector<Measurement> rows;
  for (const auto& [n, k] : {std::pair{8192, 8192}, std::pair{28672, 8192}, std::pair{8192, 2048},
                             std::pair{4096, 4096}}) {
    for (int m = 1; m <= 16384; m *= 2) {
      for (const model::Dtype dt : {model::Dtype::kFp16, model::Dtype::kFp8}) {
        Measurement r;
        r.shape.op = OpClass::kGemm;
        r.shape.dtype = dt;
        r.shape.m = m, r.shape.n = n, r.shape.k = k, r.shape.batch = 1;
        const auto roof = cost::roof_for(hw, r.shape.op, dt, 1);
        r.time_s =
            cost::roofline_time(dt == model::Dtype::kFp8 ? fp8_truth : true_gemm(), roof.peak_flops,
                                roof.bandwidth, roof.extra_latency_s, cost::kernel_work(r.shape))
                .time_s;
        rows.push_back(r);
      }
    }
  }
  cost::FitOptions opt;
  opt.keep_tables = false;
  const auto own = cost::fit_profile(rows, hw, opt);
  opt.share_memory_curve = true;
  const auto shared = cost::fit_profile(rows, hw, opt);
  const auto& g = shared.profile.op_classes.at("gemm");
  const auto& f8 = shared.profile.op_classes.at("gemm.fp8");
  const auto& own_f8 = own.profile.op_classes.at("gemm.fp8");
  // Its own fit finds fp8's slower memory side; the shared one is the 16-bit curve exactly.
  CHECK(own_f8.memory.at(8.0) == Approx(0.5).epsilon(0.05));
  CHECK(f8.memory.knots_x == g.memory.knots_x);
  CHECK(f8.memory.knots_y == g.memory.knots_y);
  CHECK(f8.launch_latency_s == g.launch_latency_s);
  CHECK(f8.memory.at(8.0) == Approx(0.85).epsilon(0.05));
  // The compute curve is fp8's own in both: half the 16-bit share where compute binds.
  for (double x : {12.0, 12.5}) {
    INFO("log10 FLOPs " << x);
    CHECK(f8.compute.at(x) == own_f8.compute.at(x));
    CHECK(f8.compute.at(x) == Approx(0.5 * g.compute.at(x)).epsilon(0.1));
  }
  // The class's reported error is the shared profile's on its rows, not the own fit's.
  REQUIRE(shared.classes.size() == 2);
  CHECK(shared.classes[1].op == "gemm.fp8");
  CHECK(shared.classes[1].roofline_mape > own.classes[1].roofline_mape);
}

// Decode attention over an fp8 cache is another kernel (aiconfigurator's tables time both): its
// entry keeps its own memory curve even when GEMM entries share the 16-bit one.
TEST_CASE("fp8-cache attention rows fit attn_decode.fp8 with their own memory curve", "[cost]") {
  const auto hw = test::h100_sxm();
  model::OpClassProfile bf16_truth, fp8_truth;
  bf16_truth.compute.value = fp8_truth.compute.value = 0.5;
  bf16_truth.memory.value = 0.85;
  fp8_truth.memory.value = 0.55;  // H200's FlashAttention 3: ~1.3x faster for half the bytes
  bf16_truth.launch_latency_s = fp8_truth.launch_latency_s = 5e-6;
  std::vector<Measurement> rows;
  for (int batch = 8; batch <= 256; batch *= 2) {
    for (int ctx = 1023; ctx <= 32767; ctx = 2 * ctx + 1) {
      for (const model::Dtype dt : {model::Dtype::kBf16, model::Dtype::kFp8}) {
        Measurement r;
        r.shape.op = OpClass::kAttnDecode;
        r.shape.dtype = dt;
        r.shape.batch = batch, r.shape.kv_len = ctx;
        r.shape.q_heads = 16, r.shape.kv_heads = 2, r.shape.head_dim = 128;
        const auto roof = cost::roof_for(hw, r.shape.op, dt, 1);
        CHECK(roof.peak_flops == hw.peak_flops_for(model::Dtype::kBf16));  // one attention roof
        r.time_s =
            cost::roofline_time(dt == model::Dtype::kFp8 ? fp8_truth : bf16_truth, roof.peak_flops,
                                roof.bandwidth, roof.extra_latency_s, cost::kernel_work(r.shape))
                .time_s;
        rows.push_back(r);
      }
    }
  }
  cost::FitOptions opt;
  opt.keep_tables = false;
  opt.share_memory_curve = true;
  const auto fit = cost::fit_profile(rows, hw, opt);
  const auto& plain = fit.profile.op_classes.at("attn_decode");
  const auto& f8 = fit.profile.op_classes.at("attn_decode.fp8");
  for (double x : {8.0, 9.0}) {
    INFO("log10 bytes " << x);
    CHECK(plain.memory.at(x) == Approx(0.85).epsilon(0.05));
    CHECK(f8.memory.at(x) == Approx(0.55).epsilon(0.05));
  }
  // Scored per entry: the fp8-cache rows apart from the 16-bit ones.
  model::HardwareSpec fitted = hw;
  fitted.cost = fit.profile;
  const auto v = cost::validate_profile(fitted, rows);
  REQUIRE(v.size() == 2);
  CHECK(v.at("attn_decode").rows == static_cast<std::int64_t>(rows.size() / 2));
  CHECK(v.at("attn_decode.fp8").rows == static_cast<std::int64_t>(rows.size() / 2));
}

// Fused-MoE rows (a layer's routed experts in one kernel, as aiconfigurator times them) fit a
// moe class of their own, whose launch latency takes in the routing and combine kernels' floor.
TEST_CASE("Fused-MoE rows fit their own class and a table per layer shape", "[cost]") {
  const auto hw = test::a100_sxm();
  model::OpClassProfile truth;
  truth.compute.value = 0.3;
  truth.memory.value = 0.35;
  truth.launch_latency_s = 40e-6;
  std::vector<Measurement> rows;
  Rng rng(3);
  for (const auto& [n, k] : {std::pair{384, 2048}, std::pair{768, 2048}, std::pair{704, 4096}}) {
    for (int tokens = 1; tokens <= 16384; tokens *= 2) {
      Measurement r;
      r.shape.op = OpClass::kMoe;
      r.shape.dtype = model::Dtype::kBf16;
      r.shape.m = tokens, r.shape.n = n, r.shape.k = k, r.shape.experts = 128, r.shape.top_k = 8;
      const auto roof = cost::roof_for(hw, OpClass::kMoe, r.shape.dtype, 1);
      r.time_s =
          cost::roofline_time(truth, roof.peak_flops, roof.bandwidth, 0, cost::kernel_work(r.shape))
              .time_s *
          std::exp(0.02 * rng.normal());
      rows.push_back(r);
    }
  }
  cost::FitOptions curves_only;
  curves_only.keep_tables = false;
  const auto curves = cost::fit_profile(rows, hw, curves_only);
  REQUIRE(curves.classes.size() == 1);
  CHECK(curves.classes[0].op == "moe");
  // The fitted curves (no tables) reproduce the kernel's times, floor included.
  auto curved = hw;
  curved.cost = curves.profile;
  const auto v = cost::validate_profile(curved, rows);
  CHECK(v.at("moe").rows == 3 * 15);
  CHECK(v.at("moe").mape < 5.0);
  CHECK(cost::validate_profile(hw, rows).at("moe").mape > 4 * v.at("moe").mape);  // datasheet
  const auto fit = cost::fit_profile(rows, hw, {});
  CHECK(fit.num_tables == 3);
  auto fitted = hw;
  fitted.cost = fit.profile;
  const cost::Predictor pred(fitted, true);
  bool table = false;
  KernelShape s = rows[3].shape;
  CHECK(pred.predict(s, &table) == Approx(rows[3].time_s).epsilon(1e-9));
  CHECK(table);
}

TEST_CASE("MXFP4 x BF16 rows fit moe.fp4.a16 at the bf16 peak; tables only for the classes asked",
          "[cost]") {
  auto hw = test::a100_sxm();
  hw.peak_flops[model::Dtype::kFp4] = 8 * *hw.peak_flops_for(model::Dtype::kBf16);
  model::OpClassProfile truth;  // against the bf16 peak: the kernel multiplies in bf16
  truth.compute.value = 0.3;
  truth.memory.value = 0.5;
  truth.launch_latency_s = 30e-6;
  auto rows = synthetic(hw, 0.0, 1);
  const std::size_t gemm_and_allreduce = rows.size();
  for (const int n : {360, 720, 1440}) {
    for (int tokens = 1; tokens <= 8192; tokens *= 2) {
      Measurement r;
      r.shape.op = OpClass::kMoe;
      r.shape.dtype = model::Dtype::kFp4;
      r.shape.activation_bits = 16;
      r.shape.m = tokens, r.shape.n = n, r.shape.k = 2880, r.shape.experts = 128;
      r.shape.top_k = 4;
      const auto roof = cost::roof_for(hw, OpClass::kMoe, model::Dtype::kBf16, 1);
      r.time_s =
          cost::roofline_time(truth, roof.peak_flops, roof.bandwidth, 0, cost::kernel_work(r.shape))
              .time_s;
      rows.push_back(r);
    }
  }
  cost::FitOptions opt;
  opt.table_classes = {"moe"};
  const auto fit = cost::fit_profile(rows, hw, opt);
  // Three MoE layer shapes tabled; the GEMM and all-reduce rows only fitted.
  CHECK(fit.num_tables == 3);
  for (const auto& t : fit.profile.tables) CHECK(t.op == "moe");
  REQUIRE(fit.profile.op_classes.count("moe.fp4.a16") == 1);
  CHECK(fit.profile.op_classes.count("moe.fp4") == 0);
  // Curves alone (the tables dropped) reproduce the kernel: efficiencies against the bf16 peak.
  auto curved = hw;
  curved.cost = fit.profile;
  curved.cost.tables.clear();
  const std::vector<Measurement> moe(rows.begin() + static_cast<std::ptrdiff_t>(gemm_and_allreduce),
                                     rows.end());
  const auto v = cost::validate_profile(curved, moe);
  REQUIRE(v.count("moe.fp4.a16") == 1);
  CHECK(v.at("moe.fp4.a16").rows == 3 * 14);
  CHECK(v.at("moe.fp4.a16").mape < 2.0);
}
