#include <catch2/catch.hpp>

#include "model/vllm_release.h"

using namespace kvsim::model;

TEST_CASE("vLLM releases parse from what pip and the logs print", "[model][vllm]") {
  CHECK(parse_vllm_release("0.10.1") == VllmRelease{10, 1});
  CHECK(parse_vllm_release("0.10.1.1") == VllmRelease{10, 1});  // a packaging fix
  CHECK(parse_vllm_release("v0.14.1") == VllmRelease{14, 1});
  CHECK(parse_vllm_release("0.11") == VllmRelease{11, 0});
  CHECK(parse_vllm_release("0.11")->text() == "0.11.0");
  for (const char* bad :
       {"", "0", "1.0.0", "0.x", "0.10.", ".10", "0.10.1.1.1", "0.-1", "0.10 ", "latest"}) {
    INFO(bad);
    CHECK_FALSE(parse_vllm_release(bad).has_value());
  }
}

TEST_CASE("kvsim models the V1 memory profiles of vLLM 0.10 to 0.14", "[model][vllm]") {
  CHECK(vllm_release_problem(kDefaultVllmRelease).empty());
  CHECK(vllm_release_problem(VllmRelease{14, 3}).empty());
  CHECK(vllm_release_problem(VllmRelease{9, 2}) ==
        "kvsim models the V1 memory profile of vLLM 0.10 to 0.14, not 0.9.2");
  CHECK_FALSE(vllm_release_problem(VllmRelease{15, 0}).empty());
  CHECK(nearest_modelled_vllm_release(VllmRelease{9, 2}) == VllmRelease{10, 0});
  CHECK(nearest_modelled_vllm_release(VllmRelease{19, 0}) == VllmRelease{14, 0});
  CHECK(nearest_modelled_vllm_release(VllmRelease{12, 3}) == VllmRelease{12, 3});
  // 0.10 samples with FlashInfer's kernel; from 0.11 the profile's sampler sorts.
  CHECK_FALSE(vllm_sampler_sorts(VllmRelease{10, 1}));
  CHECK(vllm_sampler_sorts(VllmRelease{11, 0}));
  CHECK(vllm_sampler_sorts(VllmRelease{14, 1}));
}

TEST_CASE("vllm serve schedules asynchronously by default from 0.14, one stage only",
          "[model][vllm]") {
  CHECK_FALSE(vllm_async_scheduling_default(VllmRelease{10, 1}, 1));
  CHECK_FALSE(vllm_async_scheduling_default(VllmRelease{13, 0}, 1));
  CHECK(vllm_async_scheduling_default(VllmRelease{14, 0}, 1));
  CHECK(vllm_async_scheduling_default(VllmRelease{14, 1}, 1));
  // Pipeline parallelism was left out of the default.
  CHECK_FALSE(vllm_async_scheduling_default(VllmRelease{14, 1}, 2));
}
