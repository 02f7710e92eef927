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
  // The link between nodes (InfiniBand / RoCE / Ethernet), per GPU per direction: what a TP
  // all-reduce larger than gpus_per_node and a pipeline-stage transfer across nodes cross.
  // 0 = not given (pricing a cross-node collective then throws).
  double internode_bandwidth = 0;  // bytes/s
  double internode_latency_s = 0;  // per message / collective hop
  // CUDA compute capability (8.0 A100, 8.9 L40S/L4, 9.0 H100/H200, 10.0 B200): which kernels an
  // engine picks (model::vllm_expert_padding). 0 = not an NVIDIA GPU, or not given.
  double compute_capability = 0;

  double price_per_hour = 0;  // USD per GPU-hour for cost ranking; 0 = not given

  CostProfile cost;

  // Peak dense FLOP/s for `dtype`; when the GPU has no native support for it (fp8 on A100),
  // the next wider supported type's peak. nullopt only if no peak is known at all.
  std::optional<double> peak_flops_for(Dtype dtype) const;
};

// One of a GPU's links, as a collective or a point-to-point transfer sees it.
struct Link {
  double bandwidth = 0;  // bytes/s per GPU per direction
  double latency_s = 0;
  bool internode = false;
  const char* name = "interconnect";             // for messages: "interconnect" | "inter-node"
  const char* field = "interconnect_bandwidth";  // the hardware field it comes from
};
Link intranode_link(const HardwareSpec& hardware);
Link internode_link(const HardwareSpec& hardware);
// The link a ring all-reduce over `num_gpus` GPUs (placed on consecutive GPUs from a node's
// first) is bounded by: the inter-node link when the group is larger than gpus_per_node.
Link allreduce_link(const HardwareSpec& hardware, std::int64_t num_gpus);
// Link latencies one all-reduce over `num_gpus` GPUs pays, by the algorithm vLLM runs:
//   - 2, 4, 6 or 8 GPUs (the group sizes vLLM's custom all-reduce takes) in one node whose GPUs
//     share a peer fabric faster than PCIe (NVLink/NVSwitch, Infinity Fabric; a 72-GPU NVL72
//     domain is one node): vLLM's custom all-reduce, one shot (every GPU reads all peers' buffers
//     at once, two-shot for large messages: same bytes, a second pass hidden behind them) -> 1;
//   - otherwise (PCIe peers, a group that spans nodes, or any other size): NCCL's ring, a
//   reduce-scatter and an
//     all-gather of p - 1 steps each -> 2 (p - 1).
// 0 for one GPU.
double allreduce_hops(const HardwareSpec& hardware, std::int64_t num_gpus);
// The link between pipeline stage `stage` and `stage + 1` when each stage holds `tp` consecutive
// GPUs: inter-node when the two stages' GPUs are not all on one node.
Link stage_link(const HardwareSpec& hardware, std::int64_t tp, std::int64_t stage);

}  // namespace kvsim::model
