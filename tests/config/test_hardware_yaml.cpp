// config/hardware_yaml.cpp: GPU YAML, shipped and hand-written.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/catalog_data.h"
#include "config/hardware_yaml.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::model;

using kvsim::test::error_of;

TEST_CASE("every shipped hardware YAML cites a source for every number", "[config][hardware]") {
  const std::vector<std::string> numbers{"memory_bytes",
                                         "memory_bandwidth_gb_s",
                                         "peak_tflops",
                                         "interconnect_bandwidth_gb_s",
                                         "interconnect_latency_us",
                                         "pcie_bandwidth_gb_s",
                                         "gpus_per_node",
                                         "price_per_hour"};
  int files = 0;
  for (const auto& f : config::embedded_catalog_files()) {
    const std::string path = f.path;
    if (path.rfind("configs/hardware/", 0) != 0) continue;
    ++files;
    INFO(path);
    const auto sources = config::hardware_yaml_sources(std::string_view(f.data, f.size), path);
    for (const auto& key : numbers) {
      INFO(key);
      CHECK(sources.count(key) == 1);
      if (sources.count(key)) CHECK(sources.at(key).size() > 10);
    }
  }
  CHECK(files == 11);
}

TEST_CASE("hardware YAML errors are located and say what was expected", "[config][hardware]") {
  const std::string good = R"(name: g
memory_bytes: 1000
memory_bandwidth_gb_s: 100
peak_tflops: {bf16: 10}
interconnect_bandwidth_gb_s: 10
pcie_bandwidth_gb_s: 10
)";
  CHECK(config::parse_hardware_yaml(good, "g.yaml").peak_flops.at(Dtype::kBf16) == Approx(10e12));
  const auto bad = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return error_of([&] { config::parse_hardware_yaml(text, "g.yaml"); });
  };
  CHECK(bad("memory_bytes: 1000", "memory_bytes: -5") ==
        "g.yaml:2:15: memory_bytes: expected a positive integer, got '-5'");
  CHECK(bad("{bf16: 10}", "{bf18: 10}") ==
        "g.yaml:4:21: peak_tflops.bf18: unknown dtype 'bf18', expected one of "
        "fp32|fp16|bf16|fp8|int8|int4|fp4, did you mean 'bf16'?");
  CHECK(bad("pcie_bandwidth_gb_s: 10", "pcie_bandwith_gb_s: 10") ==
        "g.yaml:6:21: pcie_bandwith_gb_s: unknown key 'pcie_bandwith_gb_s', did you mean "
        "'pcie_bandwidth_gb_s'?");
  CHECK(bad("name: g\n", "name: g\ncost_model: {provenance: {kind: guessed}}\n")
            .rfind("g.yaml:2:33: cost_model.provenance.kind: expected one of "
                   "datasheet|calibrated|imported",
                   0) == 0);
}
