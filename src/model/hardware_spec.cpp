#include "model/hardware_spec.h"

#include <algorithm>

namespace kvsim::model {

std::optional<double> HardwareSpec::peak_flops_for(Dtype dtype) const {
  // Wider fallbacks, in order: int4 → int8 → fp8, fp4 → fp8 → fp16/bf16 → fp32.
  static const Dtype kFallback[][4] = {
      /* kFp32 */ {Dtype::kFp32, Dtype::kFp32, Dtype::kFp32, Dtype::kFp32},
      /* kFp16 */ {Dtype::kFp16, Dtype::kBf16, Dtype::kFp32, Dtype::kFp32},
      /* kBf16 */ {Dtype::kBf16, Dtype::kFp16, Dtype::kFp32, Dtype::kFp32},
      /* kFp8  */ {Dtype::kFp8, Dtype::kFp16, Dtype::kBf16, Dtype::kFp32},
      /* kInt8 */ {Dtype::kInt8, Dtype::kFp8, Dtype::kFp16, Dtype::kFp32},
      /* kInt4 */ {Dtype::kInt4, Dtype::kInt8, Dtype::kFp8, Dtype::kFp16},
      /* kFp4  */ {Dtype::kFp4, Dtype::kFp8, Dtype::kFp16, Dtype::kBf16},
  };
  for (Dtype candidate : kFallback[static_cast<int>(dtype)]) {
    const auto it = peak_flops.find(candidate);
    if (it != peak_flops.end() && it->second > 0) return it->second;
  }
  return std::nullopt;
}

Link intranode_link(const HardwareSpec& hardware) {
  return Link{hardware.interconnect_bandwidth, hardware.interconnect_latency_s, false,
              "interconnect", "interconnect_bandwidth"};
}

Link internode_link(const HardwareSpec& hardware) {
  return Link{hardware.internode_bandwidth, hardware.internode_latency_s, true, "inter-node",
              "internode_bandwidth"};
}

Link allreduce_link(const HardwareSpec& hardware, std::int64_t num_gpus) {
  return num_gpus > hardware.gpus_per_node ? internode_link(hardware) : intranode_link(hardware);
}

double allreduce_hops(const HardwareSpec& hardware, std::int64_t num_gpus) {
  if (num_gpus <= 1) return 0.0;
  const bool one_node = !allreduce_link(hardware, num_gpus).internode;
  const bool peer_fabric = hardware.interconnect_bandwidth > hardware.pcie_bandwidth;
  // vLLM's custom all-reduce runs for 2, 4, 6 or 8 GPUs only; NCCL takes any other group.
  const bool custom_size = num_gpus <= 8 && num_gpus % 2 == 0;
  if (one_node && peer_fabric && custom_size) return 1.0;
  return 2.0 * static_cast<double>(num_gpus - 1);
}

Link stage_link(const HardwareSpec& hardware, std::int64_t tp, std::int64_t stage) {
  const std::int64_t first = stage * tp;           // first GPU of `stage`
  const std::int64_t last = (stage + 2) * tp - 1;  // last GPU of `stage + 1`
  const std::int64_t per_node = std::max<std::int64_t>(hardware.gpus_per_node, 1);
  return first / per_node == last / per_node ? intranode_link(hardware) : internode_link(hardware);
}

}  // namespace kvsim::model
