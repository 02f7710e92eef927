#include "cost/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include <Eigen/Dense>

#include "common/error.h"
#include "cost/tables.h"

namespace kvsim::cost {
namespace {

constexpr double kMinEta = 1e-3;

struct FitRow {
  double flops = 0, bytes = 0, time = 0;
  double peak = 0, bandwidth = 0, extra = 0;
  bool compute = false;  // current side of the max
};

// Passes of the reweighted fit (the first is plain least squares), and the residual (in log
// efficiency, ~1%) below which a row's weight stops growing.
constexpr int kRobustPasses = 8;
constexpr double kRobustFloor = 0.01;

double clamp_eta(double eta) {
  return std::clamp(eta, kMinEta, 1.0);
}
double lg(double x) {
  return std::log10(std::max(x, 1.0));
}

// Robust piecewise-linear fit of log(ys) (efficiencies) against xs, so that the error is
// relative in time; knots are stored as efficiencies. Falls back to a constant (geometric mean)
// when the data cannot support knots.
model::EfficiencyCurve fit_curve(const std::vector<double>& xs, const std::vector<double>& ys,
                                 int max_knots) {
  model::EfficiencyCurve curve;
  const std::size_t n = xs.size();
  const double xmin = *std::min_element(xs.begin(), xs.end());
  const double xmax = *std::max_element(xs.begin(), xs.end());
  const int knots = std::min<int>(max_knots, static_cast<int>(n / 3));
  if (knots < 2 || xmax - xmin < 0.05) {
    double sum = 0;
    for (double y : ys) sum += std::log(y);
    curve.value = clamp_eta(std::exp(sum / static_cast<double>(n)));
    return curve;
  }
  const double step = (xmax - xmin) / (knots - 1);
  // Each row's two knots and its weight on them.
  std::vector<int> seg(n);
  std::vector<double> frac(n), z(n), weight(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = std::clamp((xs[i] - xmin) / step, 0.0, static_cast<double>(knots - 1));
    seg[i] = std::min(static_cast<int>(u), knots - 2);
    frac[i] = u - seg[i];
    z[i] = std::log(ys[i]);
  }
  Eigen::VectorXd beta;
  // Iteratively reweighted least squares towards the least absolute deviation: the curve follows
  // the median efficiency at each size, so that a minority of pathological shapes (tile
  // quantization, tiny n or k) does not drag every other prediction down.
  for (int pass = 0; pass < kRobustPasses; ++pass) {
    Eigen::MatrixXd ata = Eigen::MatrixXd::Zero(knots, knots);
    Eigen::VectorXd atb = Eigen::VectorXd::Zero(knots);
    for (std::size_t i = 0; i < n; ++i) {
      const int j = seg[i];
      const double a0 = 1.0 - frac[i], a1 = frac[i], w = weight[i];
      ata(j, j) += w * a0 * a0;
      ata(j, j + 1) += w * a0 * a1;
      ata(j + 1, j) += w * a0 * a1;
      ata(j + 1, j + 1) += w * a1 * a1;
      atb(j) += w * a0 * z[i];
      atb(j + 1) += w * a1 * z[i];
    }
    // Second-difference smoothness penalty, scaled to the data's weight, plus a tiny ridge so
    // that knots without rows take their neighbours' values.
    const double scale = ata.trace() / knots;
    const double lambda = 1e-3 * scale;
    for (int j = 1; j + 1 < knots; ++j) {
      const int idx[3] = {j - 1, j, j + 1};
      const double c[3] = {1.0, -2.0, 1.0};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) ata(idx[a], idx[b]) += lambda * c[a] * c[b];
    }
    ata.diagonal().array() += 1e-9 * scale;
    beta = ata.ldlt().solve(atb);
    if (!beta.allFinite()) break;
    for (std::size_t i = 0; i < n; ++i) {
      const double fit = (1.0 - frac[i]) * beta(seg[i]) + frac[i] * beta(seg[i] + 1);
      weight[i] = 1.0 / std::max(std::abs(z[i] - fit), kRobustFloor);
    }
  }
  for (int j = 0; j < knots; ++j) {
    curve.knots_x.push_back(xmin + step * j);
    curve.knots_y.push_back(clamp_eta(std::isfinite(beta(j)) ? std::exp(beta(j)) : 1.0));
  }
  return curve;
}

double predict(const model::OpClassProfile& p, const FitRow& r) {
  return roofline_time(p, r.peak, r.bandwidth, r.extra, Work{r.flops, r.bytes}).time_s;
}

// Mean absolute percentage error of the profile's roofline on the rows.
double roofline_mape(const model::OpClassProfile& p, const std::vector<FitRow>& rows) {
  double ape = 0;
  for (const auto& r : rows) ape += std::abs(predict(p, r) - r.time) / r.time;
  return 100.0 * ape / static_cast<double>(rows.size());
}

struct ClassFitState {
  model::OpClassProfile profile;
  double loss = std::numeric_limits<double>::infinity();
};

// Fits both curves for a given launch latency. Returns the fitted profile and its loss: the sum of
// absolute log errors, as robust as the curves' fit. monotone_memory keeps the memory curve from
// falling with size (see fit_class).
ClassFitState fit_with_latency(std::vector<FitRow>& rows, bool compute_roof, double latency,
                               const model::OpClassProfile& prior, int max_knots,
                               bool monotone_memory) {
  model::OpClassProfile p = prior;
  p.launch_latency_s = latency;
  for (auto& r : rows) {
    r.compute = compute_roof && r.flops > 0 &&
                r.flops / r.peak > (r.bytes > 0 ? r.bytes / r.bandwidth : 0.0);
  }
  for (int iter = 0; iter < 8; ++iter) {
    std::vector<double> cx, cy, mx, my;
    for (const auto& r : rows) {
      const double eff = r.time - latency - r.extra;
      if (r.compute) {
        cx.push_back(lg(r.flops));
        cy.push_back(eff > 0 ? clamp_eta(r.flops / (r.peak * eff)) : 1.0);
      } else {
        mx.push_back(lg(r.bytes));
        my.push_back(eff > 0 ? clamp_eta(r.bytes / (r.bandwidth * eff)) : 1.0);
      }
    }
    if (!cx.empty()) p.compute = fit_curve(cx, cy, max_knots);
    if (!mx.empty()) p.memory = fit_curve(mx, my, max_knots);
    if (monotone_memory) p.memory = non_decreasing(std::move(p.memory));
    bool changed = false;
    for (auto& r : rows) {
      const KernelTime kt = roofline_time(p, r.peak, r.bandwidth, r.extra, {r.flops, r.bytes});
      const bool c = compute_roof && kt.compute_bound();
      changed |= c != r.compute;
      r.compute = c;
    }
    if (!changed) break;
  }
  ClassFitState s;
  s.profile = p;
  s.loss = 0;
  for (const auto& r : rows) {
    s.loss += std::abs(std::log(predict(p, r) / r.time));
  }
  return s;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The rows of op class `op` that belong to the profile entry `key` (entry_key: nullopt for
// 16-bit rows), each with the roofs of its entry (roof_dtype) and GPU count.
std::vector<FitRow> class_rows(const std::vector<Measurement>& rows,
                               const model::HardwareSpec& hardware, OpClass op,
                               const std::optional<std::string>& key) {
  std::vector<FitRow> fr;
  for (const auto& m : rows) {
    if (m.shape.op != op || entry_key(m.shape) != key) continue;
    Roof roof;
    try {
      roof = roof_for(hardware, op, roof_dtype(m.shape.dtype, m.shape.activation_bits),
                      m.shape.num_gpus);
    } catch (const Error& e) {
      throw Error(ErrorLocation{m.file, m.line, 0, std::string(op_class_name(op))}, e.what());
    }
    const Work w = kernel_work(m.shape);
    fr.push_back(FitRow{w.flops, w.bytes, m.time_s, roof.peak_flops, roof.bandwidth,
                        roof.extra_latency_s, false});
  }
  return fr;
}

// Fits one op class (marking each row compute- or memory-bound): the launch latency (a coarse grid
// below the fastest row, then a finer one around the best), then the profile and its statistics at
// that latency.
ClassFit fit_class(std::vector<FitRow>& fr, OpClass op, const model::OpClassProfile& prior,
                   int max_knots) {
  const std::string name(op_class_name(op));
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& r : fr) fastest = std::min(fastest, r.time - r.extra);
  fastest = std::max(fastest, 0.0);
  // Coarse grid of launch latencies below the fastest row, then a finer one around the best.
  std::vector<double> grid = {0.0};
  for (double f : {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95})
    grid.push_back(f * fastest);
  ClassFitState best;
  double best_latency = 0;
  const bool compute_roof = has_compute_roof(op);
  // Fused prefill attention does work quadratic in the prompt over bytes linear in it, so its
  // short prompts fall below the peak-FLOP ridge and read as memory-bound at an efficiency that
  // falls as they grow: a curve that, extrapolated to an MHA model's larger KV bytes, priced
  // OPT-13B's prefill attention on an A100 at 4 x what Vidur's measurements of the same kernel
  // imply. A kernel streams bytes no less efficiently when it streams more of them, so that
  // curve is kept non-decreasing (the rows it cannot explain go to the compute side).
  const bool monotone_memory = op == OpClass::kAttnPrefill;
  for (double l : grid) {
    ClassFitState s = fit_with_latency(fr, compute_roof, l, prior, max_knots, monotone_memory);
    if (s.loss < best.loss) best = s, best_latency = l;
  }
  for (int i = -4; i <= 4; ++i) {
    const double l = best_latency + i * 0.0125 * fastest;
    if (i == 0 || l < 0 || l >= fastest) continue;
    ClassFitState s = fit_with_latency(fr, compute_roof, l, prior, max_knots, monotone_memory);
    if (s.loss < best.loss) best = s, best_latency = l;
  }
  // Final assignment and statistics with the chosen latency.
  best = fit_with_latency(fr, compute_roof, best_latency, prior, max_knots, monotone_memory);
  ClassFit cf;
  cf.op = name;
  cf.rows = static_cast<std::int64_t>(fr.size());
  cf.profile = best.profile;
  cf.launch_latency_s = best_latency;
  for (const auto& r : fr) (r.compute ? cf.compute_bound_rows : cf.memory_bound_rows) += 1;
  cf.roofline_mape = roofline_mape(best.profile, fr);
  return cf;
}

// The measured tables: one per kernel family with at least min_table_points points, each point
// the median of its repeats.
void add_tables(const std::vector<Measurement>& rows, const FitOptions& options,
                FitResult& result) {
  // family key → (x2, x1) → times
  std::map<std::string, std::pair<model::MeasuredTable,
                                  std::map<std::pair<double, double>, std::vector<double>>>>
      families;
  for (const auto& m : rows) {
    const auto c = table_coordinates(m.shape);
    if (!c || !(c->x1 > 0) || c->x2 < 0) continue;
    const std::string op(op_class_name(m.shape.op));
    if (!options.table_classes.empty() &&
        std::find(options.table_classes.begin(), options.table_classes.end(), op) ==
            options.table_classes.end()) {
      continue;
    }
    const std::string dtype(model::dtype_name(m.shape.dtype));
    auto& fam = families[table_key(op, dtype, c->shape)];
    if (fam.first.op.empty()) {
      fam.first.op = op;
      fam.first.dtype = dtype;
      fam.first.shape = c->shape;
    }
    fam.second[{c->x2, c->x1}].push_back(m.time_s);
  }
  result.profile.tables.clear();
  for (auto& [key, fam] : families) {
    if (static_cast<int>(fam.second.size()) < options.min_table_points) continue;
    model::MeasuredTable t = fam.first;
    for (const auto& [xy, times] : fam.second) {
      t.points.push_back({xy.second, xy.first, median_of(times)});
    }
    result.num_table_points += static_cast<std::int64_t>(t.points.size());
    result.profile.tables.push_back(std::move(t));
  }
  result.num_tables = static_cast<std::int64_t>(result.profile.tables.size());
}

}  // namespace

model::EfficiencyCurve non_decreasing(model::EfficiencyCurve curve) {
  std::vector<double> level, width;  // pooled blocks: mean log efficiency, knots in the block
  for (double y : curve.knots_y) {
    level.push_back(std::log(y));
    width.push_back(1);
    while (level.size() > 1 && level[level.size() - 2] > level.back()) {
      const double w = width[width.size() - 2] + width.back();
      const double v =
          (level[level.size() - 2] * width[width.size() - 2] + level.back() * width.back()) / w;
      level.pop_back(), width.pop_back();
      level.back() = v, width.back() = w;
    }
  }
  std::size_t k = 0;
  for (std::size_t b = 0; b < level.size(); ++b) {
    if (width[b] == 1) {  // not pooled: kept exactly
      ++k;
      continue;
    }
    for (int i = 0; i < static_cast<int>(width[b]); ++i) curve.knots_y[k++] = std::exp(level[b]);
  }
  return curve;
}

FitResult fit_profile(const std::vector<Measurement>& rows, const model::HardwareSpec& hardware,
                      const FitOptions& options) {
  if (rows.empty()) throw Error("expected at least one measurement to fit, got none");
  FitResult result;
  result.profile = hardware.cost;
  for (int ci = 0; ci < kNumOpClasses; ++ci) {
    const auto op = static_cast<OpClass>(ci);
    // One fit per profile entry: 16-bit rows fit "<class>", each other dtype "<class>.<dtype>".
    // Kernels with wider activations than weights fit "<class>.<dtype>.a<bits>".
    std::map<std::optional<std::string>, model::Dtype> entries;
    for (const auto& m : rows) {
      if (m.shape.op == op) entries.emplace(entry_key(m.shape), m.shape.dtype);
    }
    for (const auto& [key, dtype] : entries) {
      std::vector<FitRow> fr = class_rows(rows, hardware, op, key);
      ClassFit cf =
          fit_class(fr, op, op_class_profile(hardware.cost, op, dtype), options.max_knots);
      // The 16-bit entry (key nullopt) sorts first: fitted by now when these rows have one.
      // (Not the fused-MoE kernels: each weight type runs its own kernel, floor included; nor
      // attention, whose entries are per cache type: an fp8 cache's kernel streams its own bytes
      // at its own rate.)
      const bool own_kernel = op == OpClass::kMoe || is_attention(op);
      if (options.share_memory_curve && key && entries.contains(std::nullopt) && !own_kernel) {
        const model::OpClassProfile& plain = result.profile.op_classes.at(cf.op);
        cf.profile.memory = plain.memory;
        cf.profile.launch_latency_s = cf.launch_latency_s = plain.launch_latency_s;
        cf.roofline_mape = roofline_mape(cf.profile, fr);
      }
      cf.op = key.value_or(cf.op);
      result.profile.op_classes[cf.op] = cf.profile;
      result.classes.push_back(cf);
    }
  }
  if (options.keep_tables) {
    add_tables(rows, options, result);
  } else {
    result.profile.tables.clear();
  }
  return result;
}

constexpr std::array<int, 3> kActivationBits = {0, 8, 16};

struct Predictor::Impl {
  const model::HardwareSpec& hardware;
  TableIndex tables;
  // By activation width (0, 8, 16 bits: kActivationBits), op class, then dtype (the profile's
  // per-dtype entries, cost/ops.h).
  std::array<std::array<std::array<ResolvedEntry, model::kNumDtypes>, kNumOpClasses>, 3> classes;
  // Kernels over fp8 weights with block scales (KernelShape::block_scales), by op class.
  std::array<ResolvedEntry, kNumOpClasses> block;
};

Predictor::Predictor(const model::HardwareSpec& hardware, bool use_tables) {
  auto impl = std::make_unique<Impl>(Impl{hardware, {}, {}});
  if (use_tables) impl->tables = TableIndex(hardware.cost.tables);
  for (std::size_t w = 0; w < kActivationBits.size(); ++w) {
    for (int i = 0; i < kNumOpClasses; ++i) {
      for (int d = 0; d < model::kNumDtypes; ++d) {
        impl->classes[w][static_cast<std::size_t>(i)][static_cast<std::size_t>(d)] =
            resolve_entry(hardware.cost, static_cast<OpClass>(i), static_cast<model::Dtype>(d),
                          kActivationBits[w]);
      }
    }
  }
  for (int i = 0; i < kNumOpClasses; ++i) {
    impl->block[static_cast<std::size_t>(i)] =
        resolve_entry(hardware.cost, static_cast<OpClass>(i), model::Dtype::kFp8, 0, true);
  }
  impl_ = std::move(impl);
}

Predictor::~Predictor() = default;

double Predictor::predict(const KernelShape& shape, bool* from_table) const {
  if (from_table) *from_table = false;
  if (!impl_->tables.empty()) {
    if (const auto c = table_coordinates(shape)) {
      const PreparedTable* t = impl_->tables.find(
          table_key(op_class_name(shape.op), model::dtype_name(shape.dtype), c->shape));
      if (t) {
        const double v = t->lookup(c->x1, c->x2);
        if (v > 0) {
          if (from_table) *from_table = true;
          return v;
        }
      }
    }
  }
  const std::size_t w = static_cast<std::size_t>(
      std::find(kActivationBits.begin(), kActivationBits.end(), shape.activation_bits) -
      kActivationBits.begin());
  if (w == kActivationBits.size()) {
    throw Error("expected activation_bits 0, 8 or 16, got " +
                std::to_string(shape.activation_bits));
  }
  const ResolvedEntry& entry = block_key(shape.op, shape.dtype, shape.block_scales)
                                   ? impl_->block[static_cast<std::size_t>(shape.op)]
                                   : impl_->classes[w][static_cast<std::size_t>(shape.op)]
                                                   [static_cast<std::size_t>(shape.dtype)];
  const Roof roof = roof_for(impl_->hardware, shape.op, entry.roof_dtype, shape.num_gpus);
  return roofline_time(entry.profile, roof.peak_flops, roof.bandwidth, roof.extra_latency_s,
                       kernel_work(shape))
      .time_s;
}

HoldoutSplit split_holdout(const std::vector<Measurement>& rows, double fraction,
                           std::uint64_t seed) {
  HoldoutSplit out;
  for (const auto& m : rows) {
    const std::string key = std::filesystem::path(m.file).filename().string() + ":" +
                            std::to_string(m.line) + ":" + std::to_string(seed);
    std::uint64_t h = 14695981039346656037ULL;  // FNV-1a, 64-bit
    for (const unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
    // splitmix64's finalizer: FNV-1a leaves the high bits of keys that differ in their last
    // bytes (the seed) correlated.
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
    (u < fraction ? out.held_out : out.fit).push_back(m);
  }
  return out;
}

std::map<std::string, ValidationStats> validate_profile(const model::HardwareSpec& hardware,
                                                        const std::vector<Measurement>& rows) {
  const Predictor predictor(hardware, true);
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, ValidationStats> out;
  for (const auto& m : rows) {
    bool table = false;
    double pred = 0;
    try {
      pred = predictor.predict(m.shape, &table);
    } catch (const Error& e) {
      throw Error(ErrorLocation{m.file, m.line, 0, std::string(op_class_name(m.shape.op))},
                  e.what());
    }
    // Per profile entry: an fp8 GEMM's error under "gemm.fp8", not mixed into "gemm".
    const std::string op = entry_key(m.shape).value_or(std::string(op_class_name(m.shape.op)));
    errors[op].push_back(100.0 * std::abs(pred - m.time_s) / m.time_s);
    if (table) out[op].table_rows += 1;
  }
  for (auto& [op, e] : errors) {
    ValidationStats& s = out[op];
    s.rows = static_cast<std::int64_t>(e.size());
    double sum = 0;
    for (double x : e) sum += x;
    s.mape = sum / static_cast<double>(e.size());
    std::sort(e.begin(), e.end());
    s.median_ape = median_of(e);
    const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(e.size())));
    s.p90_ape = e[std::max<std::size_t>(rank, 1) - 1];
  }
  return out;
}

}  // namespace kvsim::cost
