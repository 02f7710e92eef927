#include <catch2/catch.hpp>

#include "common/error.h"
#include "plan/slo.h"

using namespace kvsim::plan;

namespace {

// Latencies whose q-th percentile is base × (1 + q / 100).
std::function<double(double)> linear(double base) {
  return [base](double q) { return base * (1.0 + q / 100.0); };
}

SloObservation observed(double ttft, double tpot, double e2e, double attainment = 1.0,
                        bool stable = true) {
  return {linear(ttft), linear(tpot), linear(e2e), attainment, stable};
}

}  // namespace

TEST_CASE("slo: names", "[plan][slo]") {
  CHECK(latency_slo_name("ttft", 99) == "ttft_p99");
  CHECK(latency_slo_name("tpot", 99.9) == "tpot_p99.9");
  CHECK(latency_slo_name("e2e", 50) == "e2e_p50");
}

TEST_CASE("slo: every active target must hold, inclusive", "[plan][slo]") {
  SloSpec slo;
  slo.ttft = {0.5, 99};   // p99 of linear(b) = 1.99 b
  slo.tpot = {0.05, 90};  // p90 = 1.9 b
  Verdict v = check_slos(slo, observed(0.25, 0.02, 100.0));
  CHECK(v.ok());
  CHECK(v.limiting.empty());
  v = check_slos(slo, observed(0.5 / 1.99, 0.05 / 1.9, 100.0));  // exactly at both targets
  CHECK(v.ok());
  v = check_slos(slo, observed(0.26, 0.02, 100.0));  // ttft p99 = 0.5174 > 0.5
  CHECK_FALSE(v.slo_met);
  CHECK(v.limiting == "ttft_p99");
  // Both broken: the larger relative violation names the limit (tpot 0.0570/0.05 = 1.14 vs
  // ttft 0.5174/0.5 = 1.035).
  v = check_slos(slo, observed(0.26, 0.03, 100.0));
  CHECK(v.limiting == "tpot_p90");
  // E2E is unconstrained here; an e2e target makes it count.
  slo.e2e = {10.0, 50};
  v = check_slos(slo, observed(0.1, 0.01, 8.0));  // e2e p50 = 12 > 10
  CHECK(v.limiting == "e2e_p50");
}

TEST_CASE("slo: attainment and stability", "[plan][slo]") {
  SloSpec slo;
  slo.attainment = 0.9;
  CHECK(check_slos(slo, observed(1, 1, 1, 0.95)).ok());
  CHECK(check_slos(slo, observed(1, 1, 1, 0.9)).ok());
  Verdict v = check_slos(slo, observed(1, 1, 1, 0.85));
  CHECK(v.limiting == "attainment");
  v = check_slos(slo, observed(1, 1, 1, 0.0));
  CHECK(v.limiting == "attainment");
  v = check_slos(slo, observed(1, 1, 1, 0.95, /*stable=*/false));
  CHECK(v.slo_met);
  CHECK_FALSE(v.ok());
  CHECK(v.limiting == "queue_unstable");
  // No SLO at all: only stability bounds the load.
  CHECK(check_slos(SloSpec{}, observed(100, 100, 100)).ok());
  CHECK_FALSE(check_slos(SloSpec{}, observed(1, 1, 1, 1.0, false)).ok());
}

TEST_CASE("slo: per-request targets", "[plan][slo]") {
  SloSpec slo;
  slo.ttft = {0.5, 99};
  slo.tpot = {0.05, 99};
  CHECK(request_meets(slo, 0.5, 0.05, 100));
  CHECK_FALSE(request_meets(slo, 0.51, 0.05, 100));
  CHECK_FALSE(request_meets(slo, 0.5, 0.051, 100));
  CHECK(request_meets(slo, 0.5, -1.0, 100));  // one output token: no TPOT
  slo.e2e = {10, 99};
  CHECK_FALSE(request_meets(slo, 0.1, 0.01, 10.5));
}

TEST_CASE("slo: validation names the flag", "[plan][slo]") {
  SloSpec slo;
  slo.ttft.target_s = -1;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-ttft"));
  slo = {};
  slo.tpot.percentile = 0;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-percentile"));
  slo = {};
  slo.attainment = 1.5;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-attainment"));
  CHECK_NOTHROW(validate_slo(SloSpec{}));
}
