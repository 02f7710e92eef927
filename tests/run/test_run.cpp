// run/run.cpp: one run of a resolved scenario with typed results.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"
#include "config/settings.h"
#include "run/resolve.h"
#include "run/run.h"
#include "test_util.h"

using kvsim::Error;
using kvsim::config::Scenario;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

}  // namespace

TEST_CASE("run::run returns the simulation with its reader stats and KV analysis", "[run]") {
  const Scenario s = kvsim::config::load_scenario(golden("two-requests/scenario.yaml"));
  const kvsim::run::ResolvedScenario r = kvsim::run::resolve_scenario(s);
  const kvsim::run::RunResult out = kvsim::run::run(r, nullptr);
  CHECK(out.result.metrics.completed == 2);
  CHECK(out.reader_stats.rows_read == 2);
  CHECK(out.replica_capacity_bytes > 0);
  CHECK(out.kv.bytes_per_token > 0);
}
