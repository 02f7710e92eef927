#include "config/hardware_yaml.h"

#include "common/strings.h"
#include "config/cost_profile_yaml.h"
#include "config/yaml_reader.h"
#include "config/yaml_typos.h"

namespace kvsim::config {
namespace {

constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;

std::map<std::string, std::string> read_sources(MapReader& r) {
  std::map<std::string, std::string> sources;
  if (auto s = r.optional_map("sources")) {
    for (const std::string& key : s->keys()) sources[key] = s->get_string(key);
    s->finish();
  }
  return sources;
}

model::HardwareSpec parse(const YAML::Node& root, const std::string& file) {
  MapReader r(root, file);
  check_required_typos(r, {"name", "memory_bytes", "memory_bandwidth_gb_s", "peak_tflops",
                           "interconnect_bandwidth_gb_s", "pcie_bandwidth_gb_s"});
  model::HardwareSpec hw;
  hw.name = r.get_name("name");
  hw.display_name = r.optional_string("display_name").value_or("");
  hw.vendor = r.optional_choice("vendor", {"nvidia", "amd", "intel", "other"}).value_or("");
  hw.source = r.optional_string("source").value_or("");
  hw.memory_bytes = static_cast<Bytes>(r.get_positive_int("memory_bytes"));
  if (auto cuda =
          r.optional_int("cuda_memory_bytes", 1, static_cast<std::int64_t>(hw.memory_bytes))) {
    hw.cuda_memory_bytes = static_cast<Bytes>(*cuda);
  }
  hw.memory_bandwidth = r.get_double("memory_bandwidth_gb_s", 1e-9) * kGiga;
  if (!(hw.memory_bandwidth > 0)) {
    throw r.error("memory_bandwidth_gb_s", "expected a positive number (GB/s)");
  }
  MapReader peaks = r.get_map("peak_tflops");
  for (const std::string& key : peaks.keys()) {
    const auto dtype = model::parse_dtype(key);
    if (!dtype || std::string(model::dtype_name(*dtype)) != key) {
      throw peaks.error(key, "unknown dtype '" + key + "', expected one of " +
                                 join(model::dtype_names(), "|") +
                                 did_you_mean(key, model::dtype_names()));
    }
    const double tflops = peaks.get_double(key, 0);
    if (!(tflops > 0)) throw peaks.error(key, "expected a positive number (TFLOP/s), got 0");
    hw.peak_flops[*dtype] = tflops * kTera;
  }
  peaks.finish();
  if (hw.peak_flops.empty()) {
    throw r.error("peak_tflops", "expected at least one dtype (" + join(model::dtype_names(), "|") +
                                     ") with its dense peak, got none");
  }
  hw.interconnect_bandwidth = r.get_double("interconnect_bandwidth_gb_s", 0) * kGiga;
  hw.interconnect_latency_s = r.optional_double("interconnect_latency_us", 0).value_or(0) * 1e-6;
  hw.pcie_bandwidth = r.get_double("pcie_bandwidth_gb_s", 1e-9) * kGiga;
  hw.gpus_per_node = r.optional_int("gpus_per_node", 1, 1024).value_or(8);
  hw.internode_bandwidth = r.optional_double("internode_bandwidth_gb_s", 0).value_or(0) * kGiga;
  hw.internode_latency_s = r.optional_double("internode_latency_us", 0).value_or(0) * 1e-6;
  hw.compute_capability = r.optional_double("compute_capability", 1, 99).value_or(0);
  hw.price_per_hour = r.optional_double("price_per_hour", 0).value_or(0);
  const auto sources = read_sources(r);
  if (hw.source.empty()) {
    const auto it = sources.find("datasheet");
    if (it != sources.end()) hw.source = it->second;
  }
  if (auto cost = r.optional_map("cost_model")) hw.cost = parse_cost_profile(*cost);
  r.finish();
  return hw;
}

}  // namespace

model::HardwareSpec load_hardware_yaml_file(const std::string& path) {
  return parse(load_yaml_file(path), path);
}

model::HardwareSpec parse_hardware_yaml(std::string_view text, const std::string& display_path) {
  return parse(load_yaml_text(text, display_path), display_path);
}

std::map<std::string, std::string> hardware_yaml_sources(std::string_view text,
                                                         const std::string& display_path) {
  const YAML::Node root = load_yaml_text(text, display_path);
  MapReader r(root, display_path);
  return read_sources(r);
}

}  // namespace kvsim::config
