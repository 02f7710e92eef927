#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/rng.h"
#include "plan/load_search.h"

using namespace kvsim::plan;

namespace {

// Holds up to `capacity`; above it the TPOT SLO breaks first, and far above it TTFT too.
Evaluator threshold(double capacity, std::vector<double>* calls = nullptr) {
  return [capacity, calls](double rate) {
    if (calls) calls->push_back(rate);
    Verdict v;
    v.slo_met = rate <= capacity;
    v.stable = rate <= capacity * 1.5;
    if (!v.ok()) v.limiting = rate <= capacity * 1.5 ? "tpot_p99" : "ttft_p99";
    return v;
  };
}

std::vector<double> rates(const SearchResult& r) {
  std::vector<double> out;
  for (const auto& p : r.probes) out.push_back(p.rate_rps);
  return out;
}

}  // namespace

TEST_CASE("load search: brackets by doubling, then bisects to the tolerance", "[plan][search]") {
  SearchOptions o;  // start 1, growth 2, tolerance 2%
  std::vector<double> calls;
  const SearchResult r = search_max_rate(threshold(7.3, &calls), o);
  CHECK(rates(r) == std::vector<double>{1, 2, 4, 8, 6, 7, 7.5, 7.25, 7.375});
  CHECK(calls == rates(r));  // one evaluation per probe, in order
  CHECK(r.status == SearchStatus::kFound);
  CHECK(r.converged);
  CHECK(r.max_rate_rps == 7.25);
  CHECK(r.fail_rate_rps() == 7.375);
  CHECK(r.probes[static_cast<std::size_t>(r.best)].rate_rps == 7.25);
  CHECK(r.limiting_slo() == "tpot_p99");
}

TEST_CASE("load search: shrinks from a start above capacity", "[plan][search]") {
  SearchOptions o;
  o.start_rate_rps = 100;
  const SearchResult r = search_max_rate(threshold(3.0), o);
  CHECK(rates(r) == std::vector<double>{100, 50, 25, 12.5, 6.25, 3.125, 1.5625, 2.34375, 2.734375,
                                        2.9296875, 3.02734375, 2.978515625});
  CHECK(r.max_rate_rps == 2.978515625);
  CHECK(r.fail_rate_rps() == 3.02734375);
  CHECK(r.limiting_slo() == "tpot_p99");
}

TEST_CASE("load search: property over many capacities, starts and tolerances", "[plan][search]") {
  kvsim::Rng rng(42);
  for (int trial = 0; trial < 500; ++trial) {
    const double capacity = std::exp(rng.uniform01() * 12.0 - 4.0);  // 0.018 .. 2981 rps
    SearchOptions o;
    o.start_rate_rps = std::exp(rng.uniform01() * 10.0 - 3.0);
    o.growth = 1.5 + rng.uniform01() * 3.0;
    o.rel_tolerance = 0.005 + rng.uniform01() * 0.1;
    const SearchResult r = search_max_rate(threshold(capacity), o);
    REQUIRE(r.status == SearchStatus::kFound);
    CHECK(r.converged);
    // Honest: the reported rate holds, the rate just above it fails, within the tolerance.
    CHECK(r.max_rate_rps <= capacity);
    CHECK(r.fail_rate_rps() > capacity);
    CHECK(r.fail_rate_rps() - r.max_rate_rps <= o.rel_tolerance * r.max_rate_rps);
    CHECK(r.probes[static_cast<std::size_t>(r.best)].verdict.ok());
    CHECK_FALSE(r.probes[static_cast<std::size_t>(r.above)].verdict.ok());
    // Bracketing takes about log_growth(ratio) probes, bisection log2(growth / tolerance).
    const double bracket = std::abs(std::log(capacity / o.start_rate_rps)) / std::log(o.growth);
    const double bisect = std::log2(o.growth / o.rel_tolerance);
    CHECK(static_cast<double>(r.probes.size()) <= bracket + bisect + 3);
  }
}

TEST_CASE("load search: nothing feasible, capped, probe budget", "[plan][search]") {
  SearchOptions o;
  o.min_rate_rps = 0.1;
  o.max_rate_rps = 50;
  SearchResult r = search_max_rate(threshold(0.05), o);
  CHECK(r.status == SearchStatus::kNoneFeasible);
  CHECK(r.max_rate_rps == 0);
  CHECK(r.best == -1);
  CHECK(rates(r) == std::vector<double>{1, 0.5, 0.25, 0.125, 0.1});
  CHECK(r.fail_rate_rps() == 0.1);
  CHECK(r.limiting_slo() == "ttft_p99");  // at 2× capacity the queue is unstable too

  r = search_max_rate(threshold(1000), o);
  CHECK(r.status == SearchStatus::kCapped);
  CHECK(r.max_rate_rps == 50);
  CHECK(rates(r) == std::vector<double>{1, 2, 4, 8, 16, 32, 50});
  CHECK(r.limiting_slo().empty());
  CHECK(r.above == -1);

  o.max_probes = 6;
  o.max_rate_rps = 1e5;
  r = search_max_rate(threshold(7.3), o);
  CHECK(r.probes.size() == 6);
  CHECK_FALSE(r.converged);
  CHECK(r.max_rate_rps == 7);
}

TEST_CASE("load search: an unstable queue without a named SLO reads queue_unstable",
          "[plan][search]") {
  const SearchResult r = search_max_rate(
      [](double rate) {
        Verdict v;
        v.slo_met = true;
        v.stable = rate < 5;
        return v;
      },
      {});
  CHECK(r.limiting_slo() == "queue_unstable");
  CHECK(r.max_rate_rps < 5);
}

TEST_CASE("load search: options are validated", "[plan][search]") {
  auto bad = [](auto mutate) {
    SearchOptions o;
    mutate(o);
    return o;
  };
  CHECK_THROWS_AS(validate_search_options(bad([](SearchOptions& o) { o.growth = 1.0; })),
                  kvsim::Error);
  CHECK_THROWS_AS(validate_search_options(bad([](SearchOptions& o) { o.rel_tolerance = 0; })),
                  kvsim::Error);
  CHECK_THROWS_AS(validate_search_options(bad([](SearchOptions& o) { o.min_rate_rps = -1; })),
                  kvsim::Error);
  CHECK_THROWS_AS(
      validate_search_options(bad([](SearchOptions& o) { o.max_rate_rps = o.min_rate_rps / 2; })),
      kvsim::Error);
  CHECK_THROWS_AS(validate_search_options(bad([](SearchOptions& o) { o.max_probes = 1; })),
                  kvsim::Error);
  CHECK_NOTHROW(validate_search_options(SearchOptions{}));
}
