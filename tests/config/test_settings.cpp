// The settings table (config/settings.h): one row per setting, one range check, located errors.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"
#include "config/settings.h"

using kvsim::Error;
using kvsim::ErrorLocation;
using kvsim::config::find_setting_by_flag;
using kvsim::config::find_setting_by_path;
using kvsim::config::parse_scenario_text;
using kvsim::config::Scenario;
using kvsim::config::Setting;
using kvsim::config::settings;
using kvsim::config::SettingType;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_scenario_text(yaml, "s.yaml", "/base");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string flag_error_of(const std::string& flag, const std::string& text) {
  Scenario s;
  try {
    const Setting& setting = *find_setting_by_flag(flag);
    kvsim::config::apply_setting(setting, text, ErrorLocation{"", 0, 0, flag}, s);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("A range is checked once: the same words from YAML and from a flag, each located",
          "[config][settings]") {
  CHECK(error_of("model: m\nserving:\n  max_num_batched_tokens: -1\n") ==
        "s.yaml:3:27: serving.max_num_batched_tokens: expected a non-negative integer, got '-1'");
  CHECK(flag_error_of("--max-num-batched-tokens", "-1") ==
        "--max-num-batched-tokens: expected a non-negative integer, got '-1'");
  CHECK(error_of("model: m\ntensor_parallel_size: 0\n") ==
        "s.yaml:2:23: tensor_parallel_size: expected an integer in [1, 4096], got '0'");
  CHECK(flag_error_of("--tp", "0") == "--tp: expected an integer in [1, 4096], got '0'");
  CHECK(error_of("model: m\nserving:\n  swap_space_gib: lots\n") ==
        "s.yaml:3:19: serving.swap_space_gib: expected a number of GiB in [0, 1000000], got "
        "'lots'");
  CHECK(flag_error_of("--swap-space", "lots") ==
        "--swap-space: expected a number of GiB in [0, 1000000], got 'lots'");
  CHECK(flag_error_of("--router", "least-kvv") ==
        "--router: expected one of round-robin|least-outstanding|least-kv|prefix-aware, got "
        "'least-kvv', did you mean 'least-kv'?");
  CHECK(error_of("model: m\nserving:\n  enable_prefix_caching: maybe\n") ==
        "s.yaml:3:26: serving.enable_prefix_caching: expected true or false, got 'maybe'");
}

TEST_CASE("A zero SLO target means no target, from YAML and from a flag alike",
          "[config][settings]") {
  const Scenario from_yaml = parse_scenario_text("model: m\nslo: {ttft_ms: 0}\n", "s.yaml", "/");
  CHECK(from_yaml.sim.slo.ttft_ns == 0);
  Scenario from_flag;
  from_flag.sim.slo.ttft_ns = 5;
  kvsim::config::apply_setting(*find_setting_by_flag("--slo-ttft"), "0", {"", 0, 0, "--slo-ttft"},
                               from_flag);
  CHECK(from_flag.sim.slo.ttft_ns == 0);
  kvsim::config::apply_setting(*find_setting_by_flag("--slo-ttft"), "2.5", {"", 0, 0, "--slo-ttft"},
                               from_flag);
  CHECK(from_flag.sim.slo.ttft_ns == 2'500'000);
}

TEST_CASE("relabel moves a flag-named error to where the value came from", "[config][settings]") {
  const Scenario s = parse_scenario_text("model: m\ntensor_parallel_size: 3\n", "s.yaml", "/");
  const Error e({"", 0, 0, "--tensor-parallel-size"}, "expected a divisor of 64");
  CHECK(std::string(kvsim::config::relabel(e, s).what()) ==
        "s.yaml:2:23: tensor_parallel_size: expected a divisor of 64");
  // A value that came from the flag keeps the flag.
  Scenario f;
  kvsim::config::apply_setting(*find_setting_by_flag("--tensor-parallel-size"), "3",
                               {"", 0, 0, "--tensor-parallel-size"}, f);
  CHECK(std::string(kvsim::config::relabel(e, f).what()) ==
        "--tensor-parallel-size: expected a divisor of 64");
  // Not a setting: unchanged.
  const Error other({"", 0, 0, "--batch"}, "x");
  CHECK(std::string(kvsim::config::relabel(other, s).what()) == "--batch: x");
}
