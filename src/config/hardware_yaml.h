#pragma once
// kvsim hardware YAML (configs/hardware/*.yaml) → model::HardwareSpec.
//
//   name: h100-sxm                     # required; lower-case catalog name
//   display_name: NVIDIA H100 SXM5 80GB
//   vendor: nvidia                     # nvidia | amd
//   memory_bytes: 85520809984          # required, > 0: total device memory as the driver reports
//   memory_bandwidth_gb_s: 3350        # required, > 0: HBM peak, 1e9 bytes/s
//   peak_tflops:                       # required, dense (no sparsity), 1e12 FLOP/s per dtype;
//     fp32: 66.9                       #   at least one of fp32|fp16|bf16|fp8|int8|int4|fp4
//     bf16: 989.4
//   interconnect_bandwidth_gb_s: 450   # required, >= 0: per GPU per direction (NVLink, ...)
//   interconnect_latency_us: 2.0       # optional, >= 0
//   pcie_bandwidth_gb_s: 64            # required, > 0: host<->device per direction
//   gpus_per_node: 8                   # optional, default 8
//   internode_bandwidth_gb_s: 25       # optional, >= 0: link between nodes, per GPU per
//                                      #   direction (8 x 200 Gb/s HDR IB = 25 GB/s per GPU)
//   internode_latency_us: 5            # optional, >= 0
//   compute_capability: 9.0            # optional (NVIDIA): picks the kernels an engine uses
//   price_per_hour: 2.99               # optional, USD per GPU-hour, >= 0
//   sources:                           # optional map: field -> citation (shipped files cite
//     memory_bytes: "..."              #   every number; a test checks it)
//   cost_model: {...}                  # optional; config::parse_cost_profile reads it
//
// Unknown keys are errors with a suggestion; every error names file, line, column and field.

#include <map>
#include <string>
#include <string_view>

#include "model/hardware_spec.h"

namespace kvsim::config {

model::HardwareSpec load_hardware_yaml_file(const std::string& path);
model::HardwareSpec parse_hardware_yaml(std::string_view text, const std::string& display_path);

// The `sources:` map of a hardware YAML (field → citation); empty when absent.
std::map<std::string, std::string> hardware_yaml_sources(std::string_view text,
                                                         const std::string& display_path);

}  // namespace kvsim::config
