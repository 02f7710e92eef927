// The data side of the HTML pages (no browser): the cost-vs-capacity front and page safety.
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

TEST_CASE("html: the page is self-contained and its data cannot close the script",
          "[report][html]") {
  const std::string page =
      html_page("a <b> & \"c\"", "plan", Json{{"label", "</script><script>alert(1)"}});
  CHECK(page.find("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>") != std::string::npos);
  CHECK(page.find("</script><script>alert") == std::string::npos);
  CHECK(page.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
  for (const char* fetch : {"src=", "href=\"http", "url(", "@import", "fetch(", "XMLHttpRequest"}) {
    CHECK(page.find(fetch) == std::string::npos);
  }
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
}
