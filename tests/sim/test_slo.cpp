#include <catch2/catch.hpp>

#include "common/error.h"
#include "sim/metrics.h"
#include "sim/slo.h"

using namespace kvsim::sim;

namespace {

constexpr kvsim::TimeNs kMs = 1'000'000;

// Latencies (in ms) whose q-th percentile is base × (1 + q / 100).
SloObservation observed(double ttft_ms, double tpot_ms, double e2e_ms, double attainment = 1.0) {
  SloObservation o;
  o.latency_ns = [=](SloMetric metric, double q) {
    const double base = metric == SloMetric::kTtft   ? ttft_ms
                        : metric == SloMetric::kTpot ? tpot_ms
                                                     : e2e_ms;
    return base * 1e6 * (1.0 + q / 100.0);
  };
  o.attainment = attainment;
  return o;
}

}  // namespace

TEST_CASE("slo: names", "[sim][slo]") {
  CHECK(latency_slo_name("ttft", 99) == "ttft_p99");
  CHECK(latency_slo_name("tpot", 99.9) == "tpot_p99.9");
  CHECK(latency_slo_name("e2e", 50) == "e2e_p50");
  SloOptions slo;
  slo.percentile = 95;
  slo.tpot_percentile = 90;
  const auto t = latency_targets(slo);
  CHECK(t[0].name() == "ttft_p95");
  CHECK(t[1].name() == "tpot_p90");
  CHECK(t[2].name() == "e2e_p95");
}

TEST_CASE("slo: every active target must hold, inclusive", "[sim][slo]") {
  SloOptions slo;
  slo.ttft_ns = 500 * kMs;  // p99 of the observation = 1.99 base
  slo.tpot_ns = 50 * kMs;
  slo.tpot_percentile = 90;  // p90 = 1.9 base
  SloVerdict v = check_slos(slo, observed(250, 20, 1e5));
  CHECK(v.met);
  CHECK(v.limiting.empty());
  v = check_slos(slo, observed(260, 20, 1e5));  // ttft p99 = 517.4 ms > 500
  CHECK_FALSE(v.met);
  CHECK(v.limiting == "ttft_p99");
  // Both broken: the larger relative violation names the limit (tpot 57.0/50 = 1.14 vs
  // ttft 517.4/500 = 1.035).
  v = check_slos(slo, observed(260, 30, 1e5));
  CHECK(v.limiting == "tpot_p90");
  // E2E is unconstrained here; an e2e target makes it count.
  slo.e2e_ns = 10'000 * kMs;
  slo.e2e_percentile = 50;
  v = check_slos(slo, observed(100, 10, 8000));  // e2e p50 = 12 s > 10 s
  CHECK(v.limiting == "e2e_p50");
}

TEST_CASE("slo: the verdict on a run's histograms is exact at the target", "[sim][slo]") {
  Metrics m{SloOptions{}};
  for (kvsim::TimeNs t : {1, 2, 3, 4}) m.ttft.add(t * kMs);
  SloOptions slo;
  slo.percentile = 50;    // nearest rank: the 2nd of 4
  slo.ttft_ns = 2 * kMs;  // exactly at it: holds
  CHECK(check_slos(slo, observe(m)).met);
  slo.ttft_ns = 2 * kMs - 1;  // one nanosecond less: broken
  CHECK(check_slos(slo, observe(m)).limiting == "ttft_p50");
}

TEST_CASE("slo: attainment", "[sim][slo]") {
  SloOptions slo;
  slo.attainment = 0.9;
  CHECK(check_slos(slo, observed(1, 1, 1, 0.95)).met);
  CHECK(check_slos(slo, observed(1, 1, 1, 0.9)).met);
  CHECK(check_slos(slo, observed(1, 1, 1, 0.85)).limiting == "attainment");
  CHECK(check_slos(slo, observed(1, 1, 1, 0.0)).limiting == "attainment");
  // No SLO at all: always met.
  CHECK(check_slos(SloOptions{}, observed(100, 100, 100, 0.0)).met);
  Metrics m{SloOptions{}};
  CHECK(slo_attainment(m) == 0.0);
  m.arrived = 4;
  m.slo_good = 3;
  CHECK(slo_attainment(m) == 0.75);
}

TEST_CASE("slo: per-request targets", "[sim][slo]") {
  SloOptions slo;
  slo.ttft_ns = 500 * kMs;
  slo.tpot_ns = 50 * kMs;
  // TTFT 500 ms, 3 output tokens: TPOT (e2e − ttft) / 2.
  CHECK(request_meets(slo, 500 * kMs, 600 * kMs, 3));
  CHECK_FALSE(request_meets(slo, 500 * kMs + 1, 600 * kMs, 3));
  CHECK(request_meets(slo, 400 * kMs, 500 * kMs, 3));            // TPOT exactly 50 ms
  CHECK_FALSE(request_meets(slo, 400 * kMs, 500 * kMs + 1, 3));  // 50 ms + 0.5 ns
  CHECK(request_meets(slo, 400 * kMs, 10'000 * kMs, 1));         // one output token: no TPOT
  slo.e2e_ns = 10'000 * kMs;
  CHECK_FALSE(request_meets(slo, 100 * kMs, 10'500 * kMs, 1));
}

TEST_CASE("slo: validation names the flag", "[sim][slo]") {
  SloOptions slo;
  slo.ttft_ns = -1;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-ttft"));
  slo = {};
  slo.tpot_percentile = 0;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-percentile"));
  slo = {};
  slo.percentile = 100.5;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-percentile"));
  slo = {};
  slo.attainment = 1.5;
  CHECK_THROWS_WITH(validate_slo(slo), Catch::Contains("--slo-attainment"));
  CHECK_NOTHROW(validate_slo(SloOptions{}));
}
