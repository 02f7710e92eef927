#pragma once
// One GPU as plain data: capacity, datasheet rooflines, links, price, and the fitted cost-model
// profile. Filled by config/ from configs/hardware/*.yaml; validated there.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/units.h"
#include "model/cost_profile.h"
#include "model/dtype.h"

namespace kvsim::model {

struct HardwareSpec {
  std::string name;          // catalog name, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // "nvidia", "amd"
  std::string source;        // datasheet URL(s) for the numbers below

  Bytes memory_bytes = 0;  // HBM capacity per GPU
  // The total cudaMemGetInfo reports (vLLM's total_gpu_memory), below memory_bytes by what the
  // driver keeps; 0 = not measured (model::cuda_total_memory_bytes estimates it).
  Bytes cuda_memory_bytes = 0;
  double memory_bandwidth = 0;         // bytes/s, HBM peak
  std::map<Dtype, double> peak_flops;  // dense FLOP/s per dtype (no sparsity)

  double interconnect_bandwidth = 0;  // bytes/s per GPU per direction (NVLink / Infinity Fabric)
  double interconnect_latency_s = 0;  // per collective hop
  double pcie_bandwidth = 0;          // bytes/s host↔device per direction (swap)
  std::int64_t gpus_per_node = 8;     // largest tensor-parallel group on one fast interconnect
  // CUDA compute capability (8.0 A100, 8.9 L40S/L4, 9.0 H100/H200, 10.0 B200): which kernels an
  // engine picks (model::vllm_expert_padding). 0 = not an NVIDIA GPU, or not given.
  double compute_capability = 0;

  double price_per_hour = 0;  // USD per GPU-hour for cost ranking; 0 = not given

  CostProfile cost;

  // Peak dense FLOP/s for `dtype`; when the GPU has no native support for it (fp8 on A100),
  // the next wider supported type's peak. nullopt only if no peak is known at all.
  std::optional<double> peak_flops_for(Dtype dtype) const;
};

}  // namespace kvsim::model
