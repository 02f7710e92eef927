// model/hardware_spec.cpp: the peak FLOP/s for a dtype (falling back to wider types), the links
// collectives cross and the hops an all-reduce pays.
#include <catch2/catch.hpp>

#include "model/hardware_spec.h"

using namespace kvsim::model;

TEST_CASE("hardware spec: a dtype without its own peak uses the next wider one",
          "[model][hardware]") {
  HardwareSpec hw;
  hw.peak_flops = {{Dtype::kFp32, 60e12}, {Dtype::kBf16, 900e12}, {Dtype::kFp8, 1800e12}};
  CHECK(hw.peak_flops_for(Dtype::kFp32) == 60e12);
  CHECK(hw.peak_flops_for(Dtype::kBf16) == 900e12);
  CHECK(hw.peak_flops_for(Dtype::kFp16) == 900e12);  // fp16 → bf16
  CHECK(hw.peak_flops_for(Dtype::kFp8) == 1800e12);
  CHECK(hw.peak_flops_for(Dtype::kInt8) == 1800e12);  // int8 → fp8
  CHECK(hw.peak_flops_for(Dtype::kInt4) == 1800e12);  // int4 → int8 → fp8
  CHECK(hw.peak_flops_for(Dtype::kFp4) == 1800e12);   // fp4 → fp8

  hw.peak_flops = {{Dtype::kFp16, 300e12}, {Dtype::kInt8, 0}};  // a zero peak is no peak
  CHECK(hw.peak_flops_for(Dtype::kBf16) == 300e12);             // bf16 → fp16
  CHECK(hw.peak_flops_for(Dtype::kInt8) == 300e12);             // int8 (0) → fp8 → fp16
  CHECK_FALSE(hw.peak_flops_for(Dtype::kFp32));                 // nothing as wide: none

  hw.peak_flops = {{Dtype::kFp32, 20e12}};
  CHECK(hw.peak_flops_for(Dtype::kFp16) == 20e12);
  CHECK_FALSE(hw.peak_flops_for(Dtype::kInt4));  // int4 falls back at most to fp16
}

TEST_CASE("hardware spec: an all-reduce pays one hop in an NVLink node, a ring's 2 (p - 1) else",
          "[model][hardware]") {
  HardwareSpec nvlink;
  nvlink.interconnect_bandwidth = 450e9;
  nvlink.pcie_bandwidth = 64e9;
  nvlink.gpus_per_node = 8;
  CHECK(allreduce_hops(nvlink, 1) == 0);
  CHECK(allreduce_hops(nvlink, 2) == 1);
  CHECK(allreduce_hops(nvlink, 8) == 1);    // vLLM's one-shot custom all-reduce
  CHECK(allreduce_hops(nvlink, 16) == 30);  // spans two nodes: NCCL ring, 2 × 15 steps
  CHECK(allreduce_hops(nvlink, 3) == 4);    // custom all-reduce takes 2, 4, 6 or 8 GPUs
  HardwareSpec nvl72 = nvlink;              // one 72-GPU NVLink domain (GB200 NVL72)
  nvl72.gpus_per_node = 72;
  CHECK(allreduce_hops(nvl72, 8) == 1);
  CHECK(allreduce_hops(nvl72, 16) == 30);  // one domain, but more than 8 GPUs: NCCL ring

  HardwareSpec pcie;  // peers no faster than PCIe (L40S, L4): NCCL ring inside the node too
  pcie.interconnect_bandwidth = 32e9;
  pcie.pcie_bandwidth = 32e9;
  pcie.gpus_per_node = 8;
  CHECK(allreduce_hops(pcie, 2) == 2);
  CHECK(allreduce_hops(pcie, 4) == 6);
}
