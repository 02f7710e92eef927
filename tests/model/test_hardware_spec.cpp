// model/hardware_spec.cpp: the peak FLOP/s for a dtype, falling back to wider types.
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
