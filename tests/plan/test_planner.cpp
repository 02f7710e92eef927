#include <catch2/catch.hpp>

#include "common/error.h"
#include "plan/planner.h"

using namespace kvsim::plan;

namespace {

kvsim::trace::WorkloadOptions constant_workload(double rate, std::int64_t n) {
  kvsim::trace::WorkloadOptions w;
  w.source = kvsim::trace::WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = kvsim::trace::ArrivalProcess::kConstant;
  w.synthetic.rate_rps = rate;
  w.synthetic.num_requests = n;
  w.synthetic.prompt.kind = kvsim::trace::LengthKind::kFixed;
  w.synthetic.prompt.value = 100;
  w.synthetic.output.kind = kvsim::trace::LengthKind::kFixed;
  w.synthetic.output.value = 10;
  return w;
}

}  // namespace

TEST_CASE("planner: a workload's base rate is (n - 1) / arrival span", "[plan][planner]") {
  // Request i arrives at i / 4 s: 101 requests span 25 s.
  WorkloadShape s = measure_workload(constant_workload(4.0, 101));
  CHECK(s.num_requests == 101);
  CHECK(s.rate_rps == Approx(4.0).epsilon(1e-12));
  // The workload's own rate scale is part of it.
  auto w = constant_workload(4.0, 101);
  w.transforms.rate_scale = 2.5;
  CHECK(measure_workload(w).rate_rps == Approx(10.0).epsilon(1e-12));
  CHECK_THROWS_WITH(measure_workload(constant_workload(4.0, 1)),
                    Catch::Contains("at least two requests"));
}
