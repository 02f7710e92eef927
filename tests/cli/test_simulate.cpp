// `kvsim simulate` and `kvsim compare` run as a user would: flags, scenario files, outputs and
// bad input.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::ordered_json;
using kvsim::test::slurp;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

// A small synthetic workload on the tiny golden model: fast, and every knob is explicit.
std::vector<std::string> tiny_synthetic(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "simulate",      "--config",       golden("two-requests/scenario.yaml"),
      "--arrival",     "poisson",        "--rate",
      "300",           "--num-requests", "300",
      "--prompt-len",  "uniform:10:400", "--output-len",
      "uniform:1:200", "--format",       "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("simulate: the same inputs and seed give byte-identical JSON", "[sim][cli]") {
  const auto a = run_kvsim(tiny_synthetic({"--seed", "7"}));
  const auto b = run_kvsim(tiny_synthetic({"--seed", "7"}));
  const auto c = run_kvsim(tiny_synthetic({"--seed", "8"}));
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  REQUIRE(c.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
  CHECK(a.err.empty());  // no progress line when stderr is not a terminal
  const Json j = Json::parse(a.out);
  CHECK(j["schema"] == "kvsim.report/v1");
  CHECK(j["inputs"]["seed"] == 7);
  CHECK(j["inputs"]["workload"]["synthetic"]["seed"] == 7);
  CHECK(j["summary"]["requests_completed"].get<int>() +
            j["summary"]["requests_rejected"].get<int>() ==
        300);
}

TEST_CASE("simulate: the KV budget follows --runtime-overhead-gib and --activation-reserve-gib",
          "[sim][cli]") {
  const std::string scenario = golden("two-requests/scenario.yaml");
  const auto base = run_kvsim({"simulate", "--config", scenario, "--format", "json"});
  const auto less = run_kvsim({"simulate", "--config", scenario, "--runtime-overhead-gib", "1",
                               "--activation-reserve-gib", "0", "--format", "json"});
  REQUIRE(base.exit_code == 0);
  INFO(less.err);
  REQUIRE(less.exit_code == 0);
  const Json b = Json::parse(base.out)["kv"];
  const Json l = Json::parse(less.out)["kv"];
  CHECK(b["budget"]["runtime_overhead_bytes"] == 2147483648ULL);
  CHECK(l["budget"]["runtime_overhead_bytes"] == 1073741824ULL);
  CHECK(l["budget"]["activation_reserve_bytes"] == 0);
  // Every byte taken from the overhead and the reserve goes to the KV cache.
  CHECK(l["kv_budget_bytes"].get<std::uint64_t>() - b["kv_budget_bytes"].get<std::uint64_t>() ==
        1073741824ULL + b["budget"]["activation_reserve_bytes"].get<std::uint64_t>());
}

TEST_CASE("simulate: --out, CSV, --timeline and --requests write complete files", "[sim][cli]") {
  const std::string dir = kvsim::test::temp_dir();
  const auto run = run_kvsim({"simulate", "--config", golden("two-requests/scenario.yaml"),
                              "--format", "csv", "--out", dir + "/report.json", "--timeline",
                              dir + "/timeline.csv", "--requests", dir + "/requests.csv"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  // The row carries its inputs first (model, gpu, ...), then the summary.
  CHECK(run.out.rfind("model,gpu,", 0) == 0);
  CHECK(run.out.find(",seed,requests_completed,") != std::string::npos);
  const Json j = Json::parse(slurp(dir + "/report.json"));
  CHECK(j["summary"]["requests_completed"] == 2);
  CHECK(j["timeline"].size() == 6);
  CHECK(slurp(dir + "/timeline.csv")
            .rfind("t_s,running,waiting,used_bytes,reserved_bytes,free_bytes,token_state_bytes,"
                   "internal_fragmentation_bytes,external_fragmentation_bytes\n",
                   0) == 0);
  CHECK(slurp(dir + "/requests.csv") == slurp(golden("two-requests/expected-requests.csv")));
}

TEST_CASE("simulate: bad input is one clear error and exit 2", "[sim][cli]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string model = golden("tiny-model.yaml");
  const std::string gpu = golden("two-requests/gpu.yaml");
  const std::string trace = golden("two-requests/trace.csv");
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // in stderr
  };
  const std::string listed = kvsim::test::write_temp_file(
      dir, "list.yaml",
      "model: " + model + "\ngpu: " + gpu + "\nserving:\n  scheduler: [vllm, static]\n");
  const std::vector<Case> cases = {
      {{"simulate", "--config", listed},
       "list.yaml:4:14: serving.scheduler: lists make a sweep: use kvsim plan"},
      {{"simulate", "--config", dir + "/absent.yaml"}, "absent.yaml"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--scheduler", "vlm"},
       "--scheduler: expected one of vllm|chunked-prefill|static|vllm-v1, got 'vlm', did you "
       "mean 'vllm'?"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--max-num-seqs", "x"},
       "--max-num-seqs: expected a positive integer, got 'x'"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--slo-percentile", "120"},
       "--slo-percentile: expected a percentile in (0, 100]"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--scheduler", "vllm",
        "--max-num-batched-tokens", "100", "--max-model-len", "512"},
       "--max-num-batched-tokens: the vllm scheduler computes a whole prompt in one step"},
      {{"simulate", "--model", model, "--trace", trace}, "--gpu"},
      {{"simulate", "--model", model, "--gpu", gpu}, "workload"},
      {{"simulate", "--model", "llama-3.1-405b", "--gpu", "l4", "--trace", trace},
       "llama-3.1-405b does not fit l4 at tensor parallel size 1"},
      {{"simulate", "--model", model, "--gpu", golden("preemption/gpu.yaml"), "--trace", trace,
        "--gpu-memory-utilization", "1", "--engine", "v0"},
       "--max-model-len: the KV cache of one replica"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--format", "yaml"},
       "--format: expected table|json|csv"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--kv-offload-gib", "-1"},
       "--kv-offload-gib: expected a number of GiB in [0, 1000000], got '-1'"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--kv-offload-gib", "8",
        "--scheduler", "vllm", "--enable-prefix-caching"},
       "--kv-offload-gib: a request that loads offloaded blocks resumes its prefill"},
      {{"simulate", "--model", model, "--gpu", gpu, "--trace", trace, "--kv-offload-gib", "8",
        "--allocator", "contiguous-oracle"},
       "--kv-offload-gib: a CPU offload tier needs --allocator paged"},
      {{"compare", "--model", model, "--gpu", gpu, "--trace", trace}, "expected a list to compare"},
      {{"compare", "--model", model, "--gpu", gpu, "--trace", trace, "--allocator", "paged,pagd"},
       "got 'pagd', did you mean 'paged'?"},
  };
  for (const Case& c : cases) {
    const auto run = run_kvsim(c.args);
    INFO(c.args[1] << " ... → " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(c.expected) != std::string::npos);
    CHECK(run.err.rfind("kvsim: error: ", 0) == 0);
    CHECK(run.out.empty());
  }
}

TEST_CASE("simulate: --kv-offload-gib adds a CPU tier, reported per tier", "[sim][cli]") {
  // 40 system prompts of 256 tokens (16-token prefix blocks) overflow the tiny GPU cache.
  const std::vector<std::string> shared = {"--shared-prefix-fraction",
                                           "1",
                                           "--shared-prefix-prompts",
                                           "40",
                                           "--shared-prefix-tokens",
                                           "256",
                                           "--prefix-block-tokens",
                                           "16",
                                           "--scheduler",
                                           "vllm-v1",
                                           "--enable-prefix-caching"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), shared.begin(), shared.end());
    return run_kvsim(tiny_synthetic(extra));
  };
  const auto off = with({});
  const auto on = with({"--kv-offload-gib", "8"});
  INFO(on.err);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  const Json a = Json::parse(off.out);
  const Json b = Json::parse(on.out);
  // Off: the report is as before (no offload field anywhere).
  CHECK_FALSE(a["inputs"]["serving"].contains("kv_offload_bytes"));
  CHECK_FALSE(a["memory"].contains("prefix_cache"));
  CHECK(b["inputs"]["serving"]["kv_offload_bytes"] == 8 * (1LL << 30));
  CHECK(b["inputs"]["serving"]["kv_offload_bandwidth_gb_s"].is_null());  // the GPU's PCIe
  const Json& pc = b["memory"]["prefix_cache"];
  CHECK(pc["gpu_hit_rate"] == b["memory"]["prefix_cache_hit_rate"]);
  CHECK(pc["cpu_hit_tokens"].get<std::int64_t>() > 0);
  CHECK(pc["cpu_hit_rate"].get<double>() > 0.0);
  CHECK(pc["cpu_loaded_bytes"].get<std::int64_t>() > 0);
  CHECK(pc["cpu_load_time_s"].get<double>() > 0.0);
  CHECK(pc["cpu_tier_blocks"].get<std::int64_t>() > 0);
  for (const char* key :
       {"query_tokens", "gpu_hit_tokens", "cpu_loads", "cpu_stored_blocks", "cpu_stored_bytes",
        "cpu_dropped_blocks", "cpu_tier_used_fraction_at_end"}) {
    CHECK(pc.contains(key));
  }
  // The loaded prefixes are not recomputed: fewer prefill tokens, lower mean TTFT.
  CHECK(b["summary"]["ttft_s"]["mean"].get<double>() <
        a["summary"]["ttft_s"]["mean"].get<double>());
  std::vector<std::string> args = shared;
  args.insert(args.end(), {"--kv-offload-gib", "8"});
  args = tiny_synthetic(args);
  *std::find(args.begin(), args.end(), "json") = "table";
  const auto table = run_kvsim(args);
  CHECK(table.out.find("CPU offload tier hit rate") != std::string::npos);
  const auto bw = with({"--kv-offload-gib", "8", "--kv-offload-bandwidth-gb-s", "12.5"});
  REQUIRE(bw.exit_code == 0);
  CHECK(Json::parse(bw.out)["inputs"]["serving"]["kv_offload_bandwidth_gb_s"] == 12.5);
}
