#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
using Json = nlohmann::ordered_json;

namespace {

// A small deployment family that saturates quickly (16 sequences per replica), so that a few
// hundred requests reach a steady state and the test stays fast.
std::string scenario(const std::string& gpu, const std::string& replicas = "1") {
  return "model: llama-3-8b\n"
         "gpu: " +
         gpu +
         "\n"
         "tensor_parallel_size: 1\n"
         "serving: {max_num_seqs: 16, replicas: " +
         replicas +
         "}\n"
         "cost_model: roofline\n"
         "slo: {ttft_ms: 1000, tpot_ms: 40, percentile: 95}\n"
         "seed: 3\n"
         "workload:\n"
         "  synthetic:\n"
         "    arrival: poisson\n"
         "    rate: 4\n"
         "    num_requests: 400\n"
         "    prompt_tokens: \"uniform:50:1500\"\n"
         "    output_tokens: \"uniform:10:300\"\n";
}

Json parse(const std::string& text) {
  return Json::parse(text);
}

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// Re-simulates one deployment with `kvsim simulate` at `rate_scale` × the workload's own rate.
Json simulate(const std::string& config, double rate_scale) {
  const auto r = run_kvsim(
      {"simulate", "--config", config, "--rate-scale", exact(rate_scale), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  return parse(r.out);
}

bool holds(const Json& report) {
  const Json& s = report["summary"];
  return s["slo"]["met"].get<bool>() && s["saturation"]["verdict"] == "stable" &&
         s["requests_unfinished"] == 0;
}

}  // namespace

TEST_CASE("kvsim plan: each reported max rate holds when re-simulated and breaks just above it",
          "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("[h100-sxm, a100-80gb]"));
  const double tolerance = 0.03;
  const auto r = run_kvsim({"plan", "--config", sweep, "--search-tolerance", exact(tolerance),
                            "--format", "json", "--jobs", "2"});
  REQUIRE(r.exit_code == 0);
  const Json plan = parse(r.out);
  REQUIRE(plan["deployments"].size() == 2);
  for (const auto& d : plan["deployments"]) {
    CAPTURE(d["label"]);
    REQUIRE(d["status"] == "found");
    const double max_rate = d["max_rate_rps"];
    const double base = d["base_rate_rps"];
    CHECK(d["fail_rate_rps"].get<double>() <= max_rate * (1 + tolerance));
    const std::string gpu = d["axes"]["gpu"];
    const auto single = write_temp_file(dir, gpu + ".yaml", scenario(gpu));
    // At the max rate: the SLOs hold, and `simulate` measures exactly what `plan` reported.
    const Json at = simulate(single, max_rate / base);
    CHECK(holds(at));
    CHECK(at["summary"]["ttft_s"] == d["metrics"]["ttft_s"]);
    CHECK(at["summary"]["tpot_s"] == d["metrics"]["tpot_s"]);
    CHECK(at["summary"]["throughput_rps"] == d["metrics"]["throughput_rps"]);
    // Above it by the tolerance and a 1% margin: they break.
    const Json above = simulate(single, max_rate * (1 + tolerance) * 1.01 / base);
    CHECK_FALSE(holds(above));
  }
}

TEST_CASE("kvsim plan: more replicas sustain proportionally more load", "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("h100-sxm", "[1, 2, 4]"));
  auto max_rates = [&](const std::string& arrival) {
    const auto r = run_kvsim({"plan", "--config", sweep, "--arrival", arrival, "--num-requests",
                              "1200", "--format", "json"});
    REQUIRE(r.exit_code == 0);
    const Json plan = parse(r.out);
    REQUIRE(plan["deployments"].size() == 3);
    std::vector<double> rates;
    for (const auto& d : plan["deployments"]) rates.push_back(d["max_rate_rps"]);
    return rates;
  };
  // Evenly spaced arrivals: round-robin gives each replica the same stream at 1/N of the rate,
  // so N replicas sustain N times the load (within the search tolerance and edge effects).
  auto rates = max_rates("constant");
  CAPTURE(rates);
  CHECK(rates[1] / rates[0] == Approx(2.0).epsilon(0.08));
  CHECK(rates[2] / rates[0] == Approx(4.0).epsilon(0.08));
  // Poisson arrivals: round-robin also smooths each replica's arrivals (every N-th of a Poisson
  // stream is Erlang-N, CV 1/sqrt(N)), so the gain is at least proportional, and not far above.
  rates = max_rates("poisson");
  CAPTURE(rates);
  CHECK(rates[1] / rates[0] >= 2.0 * 0.98);
  CHECK(rates[1] / rates[0] <= 2.0 * 1.25);
  CHECK(rates[2] / rates[0] >= 4.0 * 0.98);
  CHECK(rates[2] / rates[0] <= 4.0 * 1.25);
}

TEST_CASE("kvsim plan: every deployment sized for a target holds it when simulated at it",
          "[cli][plan]") {
  // Replicas pool load, so 2 or 4 replicas sustain more than 2 or 4 times one; dividing their
  // max rate by the replica count overstates a single replica. A target just above what one
  // replica sustains must never be sized as one replica, whichever point it is sized from.
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("h100-sxm", "[1, 2, 4]"));
  const std::vector<std::string> common = {"plan", "--config", sweep, "--num-requests",
                                           "800",  "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_kvsim(args);
    REQUIRE(r.exit_code == 0);
    return parse(r.out);
  };
  const Json untargeted = with({});
  const double one_replica = untargeted["deployments"][0]["max_rate_rps"];
  const double base = untargeted["deployments"][0]["base_rate_rps"];
  const double four_replicas = untargeted["deployments"][2]["max_rate_rps"];
  // Between what one replica sustains (plus the search tolerance) and a quarter of what four do:
  // the 4-replica point's linear estimate is one replica, which cannot hold it.
  const double target = 0.5 * (one_replica + four_replicas / 4);
  REQUIRE(target > 1.03 * one_replica);
  REQUIRE(four_replicas / 4 > target);
  const Json plan = with({"--target-rate", exact(target)});
  REQUIRE(plan["deployments"].size() == 3);
  REQUIRE(plan["best"].is_object());
  for (const auto& d : plan["deployments"]) {
    CAPTURE(d["label"], d["max_rate_rps"], d["sizing"]);
    const std::int64_t n = d["replicas_needed"];
    REQUIRE(n >= 2);
    CHECK(d["sizing"]["verified"] == true);
    CHECK(d["sizing"]["replicas_needed"] == n);
    const auto r =
        run_kvsim({"simulate", "--config", write_temp_file(dir, "one.yaml", scenario("h100-sxm")),
                   "--num-requests", "800", "--replicas", std::to_string(n), "--rate-scale",
                   exact(target / base), "--format", "json"});
    REQUIRE(r.exit_code == 0);
    CHECK(holds(parse(r.out)));
  }
}

TEST_CASE("kvsim plan: threads, resume and process count never change the bytes", "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("[h100-sxm, a100-80gb, l40s]"));
  const std::vector<std::string> base = {"plan",         "--config",      sweep,
                                         "--block-size", "16,32",         "--format",
                                         "json",         "--target-rate", "20"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_kvsim(args);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  const std::string serial = run({"--jobs", "1"});
  CHECK(parse(serial)["deployments"].size() == 6);
  CHECK(run({"--jobs", "4"}) == serial);

  // Resume: a complete results file replays every deployment without simulating.
  const std::string results = dir + "/results.jsonl";
  CHECK(run({"--jobs", "2", "--resume", results}) == serial);
  const std::string full = kvsim::read_file(results);
  std::vector<std::string> lines;
  {
    std::istringstream in(full);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  REQUIRE(lines.size() == 6);
  auto r = run_kvsim([&] {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--resume", results});
    return args;
  }());
  CHECK(r.out == serial);
  CHECK(r.err.find("6 resumed") != std::string::npos);
  // An interruption: two whole lines and a torn third. The rerun keeps them, runs the other four
  // once each, and writes the same plan.
  kvsim::write_file_atomically(
      results, lines[0] + "\n" + lines[1] + "\n" + lines[2].substr(0, lines[2].size() / 2));
  r = run_kvsim([&] {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--resume", results, "--jobs", "3"});
    return args;
  }());
  CHECK(r.out == serial);
  CHECK(r.err.find("2 resumed") != std::string::npos);
  std::istringstream after(kvsim::read_file(results));
  int count = 0;
  for (std::string line; std::getline(after, line);) ++count;
  CHECK(count == 6);
}

TEST_CASE("kvsim plan: deployments that do not fit are reported, ranked last", "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto r = run_kvsim({"plan",
                            "--model",
                            "llama-3-70b",
                            "--gpu",
                            "a100-40gb,h200-sxm",
                            "--tensor-parallel-size",
                            "1,4",
                            "--arrival",
                            "poisson",
                            "--rate",
                            "1",
                            "--num-requests",
                            "150",
                            "--prompt-len",
                            "200",
                            "--output-len",
                            "50",
                            "--slo-ttft",
                            "2000",
                            "--search-tolerance",
                            "0.1",
                            "--format",
                            "json"});
  REQUIRE(r.exit_code == 0);
  const Json plan = parse(r.out);
  REQUIRE(plan["deployments"].size() == 4);
  // 70B of BF16 weights: too big for one A100-40GB or one H200 (vLLM V1's memory profile, the
  // default); on 4 × A100-40GB they fit with room for 8,192-token sequences, as vLLM serves it.
  for (int i : {0, 2}) {
    CAPTURE(i);
    CHECK(plan["deployments"][i]["status"] == "does_not_fit");
    CHECK(plan["deployments"][i]["replicas_needed"] == 0);
    CHECK(plan["deployments"][i]["metrics"].is_null());
  }
  CHECK(plan["deployments"][0]["error"].get<std::string>().find("does not fit a100-40gb") !=
        std::string::npos);
  CHECK(plan["deployments"][1]["status"] == "found");
  CHECK(plan["deployments"][3]["status"] == "found");
  // Cost per req/s: 4 x H200 ($18.16/h, ~74 req/s) just ahead of 4 x A100-40GB ($5.16/h, ~18 on
  // the A100 curves fitted to Vidur's timings); the H200s alone are on the tok/s/GPU vs tok/s/user
  // front.
  CHECK(plan["ranking"]["by_cost"][0] == 3);
  CHECK(plan["ranking"]["by_cost"][1] == 1);
  CHECK(plan["best"]["index"] == 3);
  CHECK(plan["pareto_front"] == Json::array({3}));
  const auto table = run_kvsim({"plan", "--model", "llama-3-70b", "--gpu", "a100-40gb", "--arrival",
                                "poisson", "--rate", "1", "--num-requests", "50", "--prompt-len",
                                "200", "--output-len", "50", "--format", "table"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("does not fit") != std::string::npos);
  CHECK(table.out.find("Best: no deployment meets the SLOs") != std::string::npos);
}

TEST_CASE("kvsim plan: table and CSV", "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("[h100-sxm, a100-80gb]"));
  auto r = run_kvsim({"plan", "--config", sweep, "--target-rate", "10", "--format", "table",
                      "--search-tolerance", "0.1"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("kvsim plan: 2 deployments, sized for 10.00 req/s") == 0);
  // The A100 needs more replicas but costs less per hour in total.
  CHECK(r.out.find("Best: gpu=a100-80gb") != std::string::npos);
  CHECK(r.out.find("TTFT p95") != std::string::npos);
  r = run_kvsim({"plan", "--config", sweep, "--target-rate", "10", "--format", "csv",
                 "--search-tolerance", "0.1"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("index,rank_by_cost,gpu,label,status,max_rate_rps,", 0) == 0);
  int rows = 0;
  for (char c : r.out) rows += c == '\n';
  CHECK(rows == 3);
}

TEST_CASE("kvsim plan: bad input names the flag or the file position", "[cli][plan]") {
  const std::string dir = temp_dir();
  const std::vector<std::string> workload = {"--arrival",      "poisson", "--rate",       "1",
                                             "--num-requests", "20",      "--prompt-len", "100",
                                             "--output-len",   "10"};
  auto plan = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "plan");
    args.insert(args.end(), workload.begin(), workload.end());
    return run_kvsim(args);
  };
  auto r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxm", "--tensor-parallel-size", "1,x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--tensor-parallel-size") != std::string::npos);
  r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxm,,a100-80gb"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpu: expected a comma-separated list without empty items") !=
        std::string::npos);
  r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxmm"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("h100-sxm") != std::string::npos);  // did you mean
  r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxm", "--slo-percentile", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--slo-percentile") != std::string::npos);
  r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxm", "--search-growth", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--search-growth") != std::string::npos);
  r = plan({"--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpu-price", "h100-sxm"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpu-price") != std::string::npos);

  const auto bad = write_temp_file(
      dir, "bad.yaml", "model: llama-3-8b\ngpu: [h100-sxm]\nplan:\n  target_rate: [1, 2]\n");
  r = plan({"--config", bad});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad + ":4:16: plan.target_rate: the plan section takes single values") !=
        std::string::npos);
  const auto empty = write_temp_file(dir, "empty.yaml", "model: llama-3-8b\ngpu: []\n");
  r = plan({"--config", empty});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(empty + ":2:6: gpu: an empty list makes an empty grid") != std::string::npos);
  const auto typo = write_temp_file(dir, "typo.yaml",
                                    "model: llama-3-8b\ngpu: h100-sxm\nplan: {target_rat: 3}\n");
  r = plan({"--config", typo});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'target_rate'") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("kvsim plan: the runtime overhead is a grid axis that changes the KV budget",
          "[cli][plan]") {
  // Llama-3-8B's 16 GB of weights on one L4 (21.7 GB usable): 2 GiB of overhead leaves a KV
  // cache, 12 GiB leaves none.
  const auto r = run_kvsim({"plan",       "--model",
                            "llama-3-8b", "--gpu",
                            "l4",         "--runtime-overhead-gib",
                            "2,12",       "--arrival",
                            "poisson",    "--rate",
                            "1",          "--num-requests",
                            "100",        "--prompt-len",
                            "200",        "--output-len",
                            "50",         "--slo-ttft",
                            "2000",       "--search-tolerance",
                            "0.1",        "--format",
                            "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json plan = parse(r.out);
  REQUIRE(plan["deployments"].size() == 2);
  const Json& a = plan["deployments"][0];
  const Json& b = plan["deployments"][1];
  CHECK(a["inputs"]["serving"]["runtime_overhead_bytes"] == 2147483648ULL);
  CHECK(b["inputs"]["serving"]["runtime_overhead_bytes"] == 12884901888ULL);
  CHECK(a["status"] == "found");
  CHECK(b["status"] == "does_not_fit");
}

TEST_CASE("kvsim plan: --gpu-price is repeatable", "[cli][plan]") {
  const std::string dir = temp_dir();
  const auto sweep = write_temp_file(dir, "sweep.yaml", scenario("[h100-sxm, a100-80gb]"));
  const auto r = run_kvsim({"plan", "--config", sweep, "--target-rate", "10", "--format", "json",
                            "--search-tolerance", "0.1", "--gpu-price", "h100-sxm=1.5",
                            "--gpu-price", "a100-80gb=0.5", "--no-progress"});
  REQUIRE(r.exit_code == 0);
  const Json j = parse(r.out);
  REQUIRE(j["deployments"].size() == 2);
  CHECK(j["deployments"][0]["gpu_price_per_hour"] == 1.5);
  CHECK(j["deployments"][1]["gpu_price_per_hour"] == 0.5);
}
