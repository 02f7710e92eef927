#include "model/hardware_spec.h"

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

}  // namespace kvsim::model
