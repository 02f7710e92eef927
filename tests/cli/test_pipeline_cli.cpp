// --pipeline-parallel-size / --pp and the inter-node link as a user runs them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::check_one_error;
using kvsim::test::run_kvsim;
using Json = nlohmann::json;

namespace {

std::vector<std::string> llama70(std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "simulate", "--model",         "llama-3-70b", "--gpu",    "a100-40gb", "--tp",
      "4",        "--max-model-len", "4096",        "--rate",   "4",         "--prompt-len",
      "300",      "--output-len",    "100",         "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("kvsim simulate --pp 2 over two nodes reports the stages and the links", "[cli][pp]") {
  const auto r = run_kvsim(llama70({"--pp", "2", "--gpus-per-node", "4", "--num-requests", "40"}));
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  const Json& s = doc["inputs"]["serving"];
  CHECK(s["pipeline_parallel_size"] == 2);
  CHECK(s["pipeline_engine"] == "batch_queue");  // vLLM V1, the default engine
  CHECK(s["gpus_per_replica"] == 8);
  CHECK(s["links"]["tensor_parallel_allreduce"]["kind"] == "interconnect");
  CHECK(s["links"]["pipeline_stage_transfers"][0]["kind"] == "internode");
  CHECK(s["links"]["pipeline_stage_transfers"][0]["bandwidth_bytes_per_s"] == 25e9);
  CHECK(doc["summary"]["requests_completed"] == 40);

  // TCP instead of InfiniBand, one request alone: only the stage transfers change. Per GPU
  // 2 × 8192 × 2 B / 4 ranks = 8,192 B a token. Prefill of 300 tokens runs the CUDA graph of
  // 304 (vllm-v1 pads it): 50 us + 2,490,368 B at 0.75 GB/s = 3,370,491 ns against 5 us +
  // 99,615 ns; each of 99 decodes 60,923 ns against 5,328 ns. E2E grows by 3,265,876 +
  // 99 × 55,595 = 8,769,781 ns.
  const auto lone = [](std::vector<std::string> link) {
    std::vector<std::string> a = {"--pp", "2", "--gpus-per-node", "4", "--num-requests", "1"};
    a.insert(a.end(), link.begin(), link.end());
    const auto r = run_kvsim(llama70(a));
    REQUIRE(r.exit_code == 0);
    return Json::parse(r.out);
  };
  const Json ib = lone({});
  const Json tcp = lone({"--internode-bandwidth-gb-s", "0.75", "--internode-latency-us", "50"});
  CHECK(tcp["inputs"]["serving"]["links"]["pipeline_stage_transfers"][0]["bandwidth_bytes_per_s"] ==
        0.75e9);
  CHECK(tcp["summary"]["e2e_s"]["mean"].get<double>() -
            ib["summary"]["e2e_s"]["mean"].get<double>() ==
        Approx(8769781e-9).epsilon(1e-6));

  // vLLM V0 runs virtual engines.
  const auto v0 = run_kvsim(llama70({"--pp", "2", "--gpus-per-node", "4", "--num-requests", "2",
                                     "--engine", "v0", "--scheduler", "chunked-prefill"}));
  REQUIRE(v0.exit_code == 0);
  CHECK(Json::parse(v0.out)["inputs"]["serving"]["pipeline_engine"] == "virtual_engines");

  // PP 1 reports no parallel links (reports of single-node runs are unchanged).
  const auto one = run_kvsim(llama70({"--num-requests", "2"}));
  REQUIRE(one.exit_code == 0);
  CHECK_FALSE(Json::parse(one.out)["inputs"]["serving"].contains("pipeline_parallel_size"));
  CHECK_FALSE(Json::parse(one.out)["inputs"]["serving"].contains("pipeline_engine"));
}

TEST_CASE("Pipeline and multi-node errors are located and loud", "[cli][pp]") {
  check_one_error(run_kvsim(llama70({"--pp", "81", "--num-requests", "2"})),
                  {"--pipeline-parallel-size", "at most one stage per decoder layer (80 layers"});
  check_one_error(run_kvsim(llama70({"--pp", "0", "--num-requests", "2"})),
                  {"--pipeline-parallel-size"});
  // TP 16 on 8-GPU nodes of a GPU with no inter-node link given.
  check_one_error(run_kvsim({"simulate", "--model", "llama-3-70b", "--gpu", "l40s", "--tp", "16",
                             "--rate", "1", "--num-requests", "2", "--prompt-len", "100",
                             "--output-len", "10", "--format", "json"}),
                  {"internode_bandwidth", "across 8-GPU nodes"});
}
