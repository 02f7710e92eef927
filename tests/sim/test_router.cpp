#include <catch2/catch.hpp>

#include "sim/router.h"
#include "sim/sim_test_util.h"

using namespace kvsim;
using namespace kvsim::test;
using sim::ReplicaLoad;
using sim::Router;
using sim::RouterKind;

TEST_CASE("Round-robin takes replicas in turn", "[sim]") {
  Router router(RouterKind::kRoundRobin, 3, 1000);
  std::vector<ReplicaLoad> loads(3);
  trace::RequestSpec s;
  std::vector<std::uint32_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(router.route(s, loads));
  CHECK(got == std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2, 0});
}

TEST_CASE("Least outstanding and least KV usage pick the emptiest replica", "[sim]") {
  trace::RequestSpec s;
  std::vector<ReplicaLoad> loads = {{5, 0.2}, {2, 0.9}, {2, 0.1}, {7, 0.1}};
  Router lo(RouterKind::kLeastOutstanding, 4, 1000);
  CHECK(lo.route(s, loads) == 1);  // ties go to the lowest index
  Router kv(RouterKind::kLeastKvUsage, 4, 1000);
  CHECK(kv.route(s, loads) == 2);  // 0.1 twice: fewer outstanding wins
}

TEST_CASE("Prefix-aware routing follows the longest cached prefix", "[sim]") {
  Router router(RouterKind::kPrefixAware, 3, 100000);
  std::vector<ReplicaLoad> loads = {{0, 0}, {0, 0}, {0, 0}};
  trace::RequestSpec a;
  a.prefix_block_tokens = 512;
  a.prefix_hashes = {1, 2, 3};
  CHECK(router.route(a, loads) == 0);  // nothing cached anywhere: least outstanding
  loads[0].outstanding = 3;
  trace::RequestSpec b = a;
  b.prefix_hashes = {9, 8};
  CHECK(router.route(b, loads) == 1);  // no match: least outstanding
  loads[1].outstanding = 3;
  trace::RequestSpec c = a;
  c.prefix_hashes = {1, 2, 7};
  CHECK(router.route(c, loads) == 0);  // shares 2 blocks with a, despite the load
  CHECK(router.num_prefix_routed() == 1);
  // Far more loaded: the balance guard sends it elsewhere.
  loads[0].outstanding = 100;
  CHECK(router.route(c, loads) == 2);
}

TEST_CASE("Replicas share the load and finish every request", "[sim]") {
  FixedCostModel cost;
  cost.per_step_ns = kNsPerMs;
  for (auto kind : {RouterKind::kRoundRobin, RouterKind::kLeastOutstanding,
                    RouterKind::kLeastKvUsage, RouterKind::kPrefixAware}) {
    sim::SimOptions opts = small_options();
    opts.num_replicas = 4;
    opts.router = kind;
    const auto run = run_sim(opts, {}, cost, random_workload(3, 400, 2000, 100, 50));
    REQUIRE(run.result.metrics.completed == 400);
    REQUIRE(run.result.completed_per_replica.size() == 4);
    for (std::int64_t n : run.result.completed_per_replica) {
      INFO("router " << sim::router_name(kind));
      CHECK(n >= 60);  // roughly a quarter each
    }
  }
}
