// cost/overhead_fit.cpp: non-negative least squares of the three step-overhead terms and the
// per-request front-end latency.
#include <vector>

#include <catch2/catch.hpp>

#include "cost/overhead_fit.h"

using kvsim::cost::fit_overheads;
using kvsim::cost::OverheadRow;
using kvsim::cost::OverheadTerms;

namespace {

// Rows features · truth = target for varied step, sequence and token counts; every other row a
// TTFT (one request through the front end), the rest TPOTs (none).
std::vector<OverheadRow> exact_rows(const OverheadTerms& truth) {
  std::vector<OverheadRow> rows;
  for (int i = 0; i < 20; ++i) {
    OverheadRow r;
    r.features = {1.0 + i % 3, 1.0 + (i * 7) % 11, 64.0 * ((i * 5) % 13), i % 2 == 0 ? 1.0 : 0.0};
    r.target = r.features[0] * truth[0] + r.features[1] * truth[1] + r.features[2] * truth[2] +
               r.features[3] * truth[3];
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("fit_overheads recovers exact terms", "[cost][overhead]") {
  const OverheadTerms truth = {2e-3, 40e-6, 3e-6, 9e-3};
  const auto fit = fit_overheads(exact_rows(truth), {0, 0, 0, 0});
  CHECK(fit.determined == std::array<bool, 4>{true, true, true, true});
  CHECK(fit.terms_s[0] == Approx(2e-3));
  CHECK(fit.terms_s[1] == Approx(40e-6));
  CHECK(fit.terms_s[2] == Approx(3e-6));
  CHECK(fit.terms_s[3] == Approx(9e-3));
  CHECK(fit.rms == Approx(0).margin(1e-12));
}

TEST_CASE("fit_overheads keeps terms non-negative", "[cost][overhead]") {
  // The unconstrained solution has a negative token term: NNLS puts it at 0.
  const auto fit = fit_overheads(exact_rows({2e-3, 40e-6, -3e-6, 1e-3}), {0, 0, 0, 0});
  CHECK(fit.terms_s[2] == 0);
  CHECK(fit.terms_s[0] >= 0);
  CHECK(fit.terms_s[1] >= 0);
  CHECK(fit.terms_s[3] >= 0);
}

TEST_CASE("fit_overheads: a term the rows cannot tell apart keeps its prior", "[cost][overhead]") {
  // One sequence per step and the same prompt in every row: the first three columns are
  // parallel; no row is a TTFT, so the front end's column is zero.
  std::vector<OverheadRow> rows;
  for (int i = 1; i <= 5; ++i) {
    OverheadRow r;
    r.features = {1.0 * i, 1.0 * i, 100.0 * i, 0.0};
    r.target = 0.003 * i;
    rows.push_back(r);
  }
  const auto fit = fit_overheads(rows, {1e-3, 5e-6, 7e-6, 4e-3});
  CHECK(fit.determined == std::array<bool, 4>{true, false, false, false});
  CHECK(fit.terms_s[1] == 5e-6);
  CHECK(fit.terms_s[2] == 7e-6);
  CHECK(fit.terms_s[3] == 4e-3);
  // The step term takes what the others leave: 3 ms − 5 µs − 100 × 7 µs.
  CHECK(fit.terms_s[0] == Approx(0.003 - 5e-6 - 700e-6));
  // No rows: nothing determined, the prior kept.
  const auto none = fit_overheads({}, {1e-3, 5e-6, 7e-6, 4e-3});
  CHECK(none.determined == std::array<bool, 4>{false, false, false, false});
  CHECK(none.terms_s == OverheadTerms{1e-3, 5e-6, 7e-6, 4e-3});
}

TEST_CASE("fit_overheads: a latency every row carries once is the step term's twin",
          "[cost][overhead]") {
  // Every row a TTFT of exactly one step: the front end's column equals the step's, so it is
  // undetermined and keeps its prior (the step term is fitted first).
  std::vector<OverheadRow> rows;
  for (int i = 1; i <= 4; ++i) {
    OverheadRow r;
    r.features = {1.0, 2.0 * i, 50.0 * i * i, 1.0};
    r.target = 0.010 + 2.0 * i * 30e-6 + 50.0 * i * i * 1e-6 + 0.002;
    rows.push_back(r);
  }
  const auto fit = fit_overheads(rows, {0, 0, 0, 2e-3});
  CHECK(fit.determined == std::array<bool, 4>{true, true, true, false});
  CHECK(fit.terms_s[3] == 2e-3);
  CHECK(fit.terms_s[0] == Approx(0.010));
  CHECK(fit.terms_s[1] == Approx(30e-6));
  CHECK(fit.terms_s[2] == Approx(1e-6));
}
