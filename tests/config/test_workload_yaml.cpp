#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/workload_yaml.h"
#include "test_util.h"

using namespace kvsim;
using kvsim::config::load_yaml_text;
using kvsim::config::MapReader;
using kvsim::config::parse_workload;
using kvsim::trace::ArrivalProcess;
using kvsim::trace::LengthKind;
using kvsim::trace::WorkloadOptions;

namespace {

WorkloadOptions parse(const std::string& yaml) {
  const auto root = load_yaml_text(yaml, "scen/s.yaml");
  MapReader top(root, "scen/s.yaml");
  MapReader section = top.get_map("workload");
  return parse_workload(section, "scen");
}

std::string error_of(const std::string& yaml) {
  return kvsim::test::error_of([&] { parse(yaml); });
}

}  // namespace

TEST_CASE("workload: a trace path resolves relative to the scenario's folder",
          "[config][workload]") {
  const auto w = parse(
      "workload:\n  trace: ../traces/a.csv\n  rate_scale: 2.5\n  max_requests: 100\n"
      "  time_window: {start_s: 10, end_s: 70.5}\n  max_model_len: 4096\n");
  CHECK(w.source == WorkloadOptions::Source::kTrace);
  CHECK(w.trace.path == "traces/a.csv");
  CHECK(w.trace.format == trace::TraceFormat::kAuto);
  CHECK(w.transforms.rate_scale == 2.5);
  CHECK(w.transforms.max_requests == 100);
  CHECK(w.transforms.window_start_ns == 10 * kNsPerSecond);
  CHECK(w.transforms.window_end_ns == 70'500'000'000);
  CHECK(w.transforms.max_model_len == 4096);
  const auto abs = parse(
      "workload:\n  trace: {path: /data/m.jsonl, format: mooncake, skip_bad_rows: "
      "true, prefix_block_tokens: 16}\n");
  CHECK(abs.trace.path == "/data/m.jsonl");
  CHECK(abs.trace.format == trace::TraceFormat::kMooncake);
  CHECK(abs.trace.skip_bad_rows);
  CHECK(abs.trace.prefix_block_tokens == 16);
}

TEST_CASE("workload: a synthetic generator with every kind of length", "[config][workload]") {
  const auto w = parse(
      "workload:\n"
      "  synthetic:\n"
      "    arrival: gamma\n"
      "    rate: 4\n"
      "    cv: 3\n"
      "    num_requests: 2000\n"
      "    prompt_tokens: lognormal:161.31:120:1:2048\n"
      "    output_tokens: {dist: zipf, exponent: 1.1, min: 1, max: 1024}\n"
      "    shared_prefix: {fraction: 0.5, num_prompts: 4, prompt_tokens: 1024}\n"
      "    seed: 7\n");
  REQUIRE(w.source == WorkloadOptions::Source::kSynthetic);
  const auto& s = w.synthetic;
  CHECK(s.arrival == ArrivalProcess::kGamma);
  CHECK(s.rate_rps == 4.0);
  CHECK(s.cv == 3.0);
  CHECK(s.num_requests == 2000);
  CHECK(trace::to_spec(s.prompt) == "lognormal:161.31:120:1:2048");
  CHECK(trace::to_spec(s.output) == "zipf:1.1:1:1024");
  CHECK(s.shared_prefix.fraction == 0.5);
  CHECK(s.shared_prefix.num_prompts == 4);
  CHECK(s.shared_prefix.prompt_tokens == 1024);
  CHECK(s.shared_prefix.block_tokens == 512);
  CHECK(s.seed == 7);
  const auto fixed = parse(
      "workload:\n  synthetic: {rate: 1, duration_s: 60, prompt_tokens: 512, "
      "output_tokens: {dist: fixed, value: 128}}\n");
  CHECK(fixed.synthetic.prompt.value == 512);
  CHECK(fixed.synthetic.prompt_pool == 0);
  const auto pooled = parse(
      "workload:\n  synthetic: {prompt_pool: 100, num_requests: 10, prompt_tokens: 512, "
      "output_tokens: 8}\n  max_concurrency: 4\n");
  CHECK(pooled.synthetic.prompt_pool == 100);
  CHECK(fixed.synthetic.output.value == 128);
  const auto mix = parse("workload:\n  synthetic: {lengths_from: t.csv, arrival: replay}\n");
  CHECK(mix.synthetic.lengths_from.path == "scen/t.csv");
}

TEST_CASE("workload: bad values are located at their key", "[config][workload]") {
  CHECK(error_of("workload:\n  rate_scale: 1\n") ==
        "scen/s.yaml:2:3: workload.trace: expected exactly one of 'trace' (a file to replay) or "
        "'synthetic' (a generator)");
  CHECK(error_of("workload:\n  trace: a.csv\n  synthetic: {rate: 1}\n").find("exactly one of") !=
        std::string::npos);
  CHECK(
      error_of("workload:\n  trace: a.csv\n  rate_scael: 2\n") ==
      "scen/s.yaml:3:3: workload.rate_scael: unknown key 'rate_scael', did you mean 'rate_scale'?");
  CHECK(error_of("workload:\n  synthetic:\n    rate: 0\n    num_requests: 5\n    prompt_tokens: 5\n"
                 "    output_tokens: 5\n")
            .rfind("scen/s.yaml:3:11: workload.synthetic.rate: expected a positive request rate",
                   0) == 0);
  CHECK(error_of("workload:\n  synthetic:\n    rate: 1\n    num_requests: 5\n"
                 "    prompt_tokens: unifrom:1:5\n    output_tokens: 5\n")
            .rfind("scen/s.yaml:5:20: workload.synthetic.prompt_tokens: expected a length "
                   "distribution",
                   0) == 0);
  CHECK(error_of("workload:\n  synthetic:\n    rate: 1\n    num_requests: 5\n    prompt_tokens: 5\n"
                 "    output_tokens: 5\n    shared_prefix: {fraction: 0.5, prompt_tokens: 100}\n")
            .find("workload.synthetic.shared_prefix.prompt_tokens: expected a system prompt of at "
                  "least one prefix block") != std::string::npos);
  CHECK(error_of("workload:\n  trace: {path: a.csv, format: mooncak}\n")
            .find("did you mean 'mooncake'?") != std::string::npos);
  CHECK(error_of("workload:\n  trace: a.csv\n  time_window: {start_s: 5, end_s: 5}\n")
            .find("expected start_s < end_s") != std::string::npos);
}

TEST_CASE("workload: max_concurrency makes a closed loop", "[config][workload]") {
  const auto w = parse(
      "workload:\n  synthetic: {num_requests: 8, prompt_tokens: 8192, output_tokens: 1024}\n"
      "  max_concurrency: 16\n");
  CHECK(w.max_concurrency == 16);
  CHECK(w.synthetic.rate_rps == 0.0);
  CHECK(error_of("workload:\n  trace: a.csv\n  max_concurrency: -2\n")
            .rfind("scen/s.yaml:3:20: workload.max_concurrency:", 0) == 0);
}

TEST_CASE("workload: serial_sessions holds a session's requests for the one before",
          "[config][workload]") {
  CHECK(parse("workload:\n  trace: a.csv\n  serial_sessions: true\n").serial_sessions);
  CHECK_FALSE(parse("workload:\n  trace: a.csv\n").serial_sessions);
  CHECK(error_of("workload:\n  trace: a.csv\n  serial_sessions: often\n")
            .rfind("scen/s.yaml:3:20: workload.serial_sessions:", 0) == 0);
}
