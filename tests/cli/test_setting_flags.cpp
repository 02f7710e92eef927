// The settings table's flags (cli/setting_flags.h) as a user meets them: --help, one meaning of a
// value in every command, errors located where the value came from.
#include <string>

#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;

namespace {

std::string golden(const std::string& name) {
  return kvsim::test::source_dir() + "/tests/golden/" + name;
}

// The --help line of `flag`.
std::string help_line(const std::string& help, const std::string& flag) {
  const std::size_t at = help.find("  " + flag + " ");
  if (at == std::string::npos) return "";
  return help.substr(at, help.find('\n', at) - at);
}

}  // namespace

TEST_CASE("Help shows each setting's type: INT, GIB, MS, and no value for a switch",
          "[cli][settings]") {
  const auto simulate = run_kvsim({"simulate", "--help"});
  REQUIRE(simulate.exit_code == 0);
  CHECK(help_line(simulate.out, "--tensor-parallel-size,--tp").find("INT=1") != std::string::npos);
  CHECK(help_line(simulate.out, "--swap-space").find("GIB") != std::string::npos);
  CHECK(help_line(simulate.out, "--slo-ttft").find("MS") != std::string::npos);
  const std::string prefix = help_line(simulate.out, "--enable-prefix-caching");
  REQUIRE_FALSE(prefix.empty());
  CHECK(prefix.find("GIB") == std::string::npos);
  CHECK(prefix.find("TEXT") == std::string::npos);
  CHECK(simulate.out.find("--block-size TEXT") == std::string::npos);
  const auto plan = run_kvsim({"plan", "--help"});
  REQUIRE(plan.exit_code == 0);
  CHECK(help_line(plan.out, "--block-size").find("INT[,...]") != std::string::npos);
  CHECK(help_line(plan.out, "--block-size").find("a grid axis") != std::string::npos);
  const auto kv = run_kvsim({"kv", "--help"});
  CHECK(help_line(kv.out, "--runtime-overhead-gib").find("GIB=2") != std::string::npos);
}

TEST_CASE("A zero --slo-ttft means no target in simulate and in plan alike", "[cli][settings]") {
  const std::string scenario = golden("two-requests/scenario.yaml");
  const auto simulate =
      run_kvsim({"simulate", "--config", scenario, "--slo-ttft", "0", "--format", "json"});
  INFO(simulate.err);
  CHECK(simulate.exit_code == 0);
  const auto bad = run_kvsim({"simulate", "--config", scenario, "--slo-ttft", "-1"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--slo-ttft: expected a non-negative number of milliseconds, got '-1'") !=
        std::string::npos);
  const auto plan_bad = run_kvsim({"plan", "--config", scenario, "--slo-ttft", "-1"});
  CHECK(plan_bad.exit_code == 2);
  CHECK(plan_bad.err == bad.err);
}

TEST_CASE("A value from a flag is blamed on the flag and one from a file on the file",
          "[cli][settings]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string scenario = kvsim::test::write_temp_file(
      dir, "tp.yaml",
      "model: llama-3-70b\ngpu: h100-sxm\ntensor_parallel_size: 3\n"
      "workload: {synthetic: {rate: 1, num_requests: 1, prompt_tokens: 10, output_tokens: 2}}\n");
  const auto from_file = run_kvsim({"simulate", "--config", scenario});
  CHECK(from_file.exit_code == 2);
  CHECK(from_file.err.find("tp.yaml:3:23: tensor_parallel_size: ") != std::string::npos);
  const auto from_flag = run_kvsim({"simulate", "--config", scenario, "--tp", "3"});
  CHECK(from_flag.exit_code == 2);
  CHECK(from_flag.err.find("kvsim: error: --tensor-parallel-size: ") == 0);
}
