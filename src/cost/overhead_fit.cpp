#include "cost/overhead_fit.h"

#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Dense>

namespace kvsim::cost {
namespace {

// Which terms the rows determine (Gram-Schmidt over the unit-scaled columns, in term order).
std::array<bool, kNumOverheadTerms> determined_terms(const Eigen::MatrixXd& a) {
  std::array<bool, kNumOverheadTerms> out{};
  std::vector<Eigen::VectorXd> basis;
  for (int j = 0; j < kNumOverheadTerms; ++j) {
    const double norm = a.col(j).norm();
    if (!(norm > 0) || !std::isfinite(norm)) continue;
    Eigen::VectorXd r = a.col(j) / norm;
    for (const Eigen::VectorXd& q : basis) r -= q.dot(r) * q;
    const double left = r.norm();
    if (left < kOverheadIdentifiable) continue;
    out[static_cast<std::size_t>(j)] = true;
    basis.emplace_back(r / left);
  }
  return out;
}

}  // namespace

double overhead_rms(std::span<const OverheadRow> rows, const OverheadTerms& terms) {
  if (rows.empty()) return 0;
  double sum = 0;
  for (const OverheadRow& row : rows) {
    double e = -row.target;
    for (int j = 0; j < kNumOverheadTerms; ++j)
      e += row.features[static_cast<std::size_t>(j)] * terms[static_cast<std::size_t>(j)];
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(rows.size()));
}

OverheadFit fit_overheads(std::span<const OverheadRow> rows, const OverheadTerms& prior) {
  OverheadFit fit;
  fit.terms_s = prior;
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, kNumOverheadTerms);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const OverheadRow& row = rows[static_cast<std::size_t>(i)];
    for (int j = 0; j < kNumOverheadTerms; ++j) a(i, j) = row.features[static_cast<std::size_t>(j)];
    b(i) = row.target;
  }
  fit.determined = determined_terms(a);
  std::vector<int> free;
  for (int j = 0; j < kNumOverheadTerms; ++j) {
    if (fit.determined[static_cast<std::size_t>(j)]) {
      free.push_back(j);
    } else {
      b -= a.col(j) * prior[static_cast<std::size_t>(j)];
    }
  }
  // Exact NNLS: the best unconstrained solution, over every subset of the free terms, whose
  // values are all >= 0 (the terms left out are 0). The empty subset is always feasible.
  double best = b.squaredNorm();
  OverheadTerms best_terms = prior;
  for (int j : free) best_terms[static_cast<std::size_t>(j)] = 0;
  for (unsigned mask = 1; mask < (1U << free.size()); ++mask) {
    std::vector<int> cols;
    for (std::size_t k = 0; k < free.size(); ++k)
      if ((mask >> k) & 1U) cols.push_back(free[k]);
    Eigen::MatrixXd s(n, static_cast<Eigen::Index>(cols.size()));
    Eigen::VectorXd scale(static_cast<Eigen::Index>(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto c = static_cast<Eigen::Index>(k);
      scale(c) = a.col(cols[k]).norm();
      s.col(c) = a.col(cols[k]) / scale(c);
    }
    const Eigen::VectorXd x = s.colPivHouseholderQr().solve(b).cwiseQuotient(scale);
    if (!x.allFinite() || (x.array() < 0).any()) continue;
    Eigen::VectorXd fitted = Eigen::VectorXd::Zero(n);
    for (std::size_t k = 0; k < cols.size(); ++k)
      fitted += a.col(cols[k]) * x(static_cast<Eigen::Index>(k));
    const double err = (b - fitted).squaredNorm();
    if (err < best) {
      best = err;
      for (int j : free) best_terms[static_cast<std::size_t>(j)] = 0;
      for (std::size_t k = 0; k < cols.size(); ++k)
        best_terms[static_cast<std::size_t>(cols[k])] = x(static_cast<Eigen::Index>(k));
    }
  }
  fit.terms_s = best_terms;
  fit.rms = overhead_rms(rows, fit.terms_s);
  return fit;
}

}  // namespace kvsim::cost
