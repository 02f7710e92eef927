#include <catch2/catch.hpp>

#include "config/inference_perf_config.h"
#include "test_util.h"

using kvsim::test::error_of;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
namespace config = kvsim::config;

TEST_CASE("inference-perf config: load type, client cap and shared-prefix prompts",
          "[config][replay]") {
  const std::string dir = temp_dir();
  // As inference-perf dumps it into its results folder: every field, most of them not kvsim's.
  const std::string dumped = write_temp_file(dir, "config.yaml", R"(api:
  type: completion
  streaming: true
data:
  type: shared_prefix
  path: null
  shared_prefix:
    num_unique_system_prompts: 23
    num_users_per_system_prompt: 1
    system_prompt_len: 100
    question_len: 934
    output_len: 1448
    enable_multi_turn_chat: true
load:
  type: poisson
  interval: 1.0
  stages:
  - rate: 1.0
    duration: 600
  num_workers: 8
  worker_max_concurrency: 100
server:
  type: vllm
  model_name: Qwen/Qwen2.5-7B-Instruct
)");
  const config::InferencePerfClient c = config::read_inference_perf_config(dumped);
  CHECK(c.load_type == "poisson");
  REQUIRE(c.max_outstanding);
  CHECK(*c.max_outstanding == 800);
  CHECK(c.prompt_groups == 23);
  CHECK(c.prompts_per_group == 1);
  CHECK(c.system_prompt_tokens == 100);
  CHECK_FALSE(c.system_prompt_len_is_mean);
  CHECK(c.multi_turn);

  // A hand-written config: inference-perf's defaults where it is silent, its field aliases, a
  // length distribution's mean; num_workers absent (the client machine's CPU count): no cap.
  const std::string written = write_temp_file(dir, "written.yml", R"(data:
  type: shared_prefix
  shared_prefix:
    num_groups: 4
    system_prompt_len: {type: normal, mean: 255.6, std_dev: 20, min: 200, max: 300}
load:
  worker_max_concurrency: 10
)");
  const config::InferencePerfClient w = config::read_inference_perf_config(written);
  CHECK(w.load_type == "constant");
  CHECK_FALSE(w.max_outstanding);
  CHECK(w.prompt_groups == 4);
  CHECK(w.prompts_per_group == 10);
  CHECK(w.system_prompt_tokens == 256);
  CHECK(w.system_prompt_len_is_mean);
  CHECK_FALSE(w.multi_turn);

  // Other data: no prompt sharing known.
  const std::string other =
      write_temp_file(dir, "other.yaml", "data:\n  type: shareGPT\nload:\n  type: constant\n");
  CHECK(config::read_inference_perf_config(other).prompt_groups == 0);
  // A JSON config (BLIS's profile.yaml is one line of JSON) reads the same way.
  const std::string json = write_temp_file(
      dir, "profile.yaml",
      R"({"load": {"type": "constant", "num_workers": 2, "worker_max_concurrency": 3}})");
  CHECK(*config::read_inference_perf_config(json).max_outstanding == 6);
}

TEST_CASE("inference-perf config: bad values are located", "[config][replay]") {
  const std::string dir = temp_dir();
  const std::string bad = write_temp_file(
      dir, "config.yaml", "load:\n  num_workers: -2\n  worker_max_concurrency: 10\n");
  CHECK(error_of([&] { config::read_inference_perf_config(bad); })
            .find("config.yaml:2:16: load.num_workers: expected an integer in [1, 1000000], got "
                  "'-2'") != std::string::npos);
  const std::string list = write_temp_file(dir, "list.yaml", "- 1\n- 2\n");
  CHECK(error_of([&] { config::read_inference_perf_config(list); }) ==
        list + ":1:1: expected an inference-perf configuration (a map)");
}
