// report/html.cpp: the data side of the HTML pages (no browser): the cost-vs-capacity front.
#include <catch2/catch.hpp>

#include "report/html.h"

using namespace kvsim::report;

TEST_CASE("html: the cost-vs-capacity Pareto front", "[report][html]") {
  // cost of one deployment = replicas × GPUs per replica × price.
  const auto d = [](double price, int gpus, double rate) {
    return Json{{"replicas", 1},
                {"gpus_per_replica", gpus},
                {"gpu_price_per_hour", price},
                {"max_rate_rps", rate}};
  };
  Json plan = {{"deployments", Json::array({d(2.0, 1, 5.0),       // 0: $2, 5
                                            d(2.0, 2, 9.0),       // 1: $4, 9
                                            d(1.0, 2, 4.0),       // 2: $2, 4 (dominated by 0)
                                            d(3.0, 2, 8.0),       // 3: $6, 8 (dominated by 1)
                                            d(1.0, 1, 0.0),       // 4: no capacity
                                            d(4.0, 2, 20.0)})}};  // 5: $8, 20
  CHECK(cost_capacity_front(plan) == std::vector<std::size_t>{0, 1, 5});
}
