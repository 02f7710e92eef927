#pragma once
// Element types of weights, activations and the KV cache. Sizes are kept in bits so that
// sub-byte types (int4) stay exact; convert to bytes only for a whole tensor (rounding up).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::model {

// kFp4 is FP4 E2M1 (MXFP4 / NVFP4 elements); it comes last so that the older values keep theirs.
enum class Dtype : std::uint8_t { kFp32, kFp16, kBf16, kFp8, kInt8, kInt4, kFp4 };
inline constexpr int kNumDtypes = 7;

// 32, 16, 16, 8, 8, 4, 4.
int bits_per_element(Dtype dtype);
// "fp32", "fp16", "bf16", "fp8", "int8", "int4", "fp4".
std::string_view dtype_name(Dtype dtype);
// Accepts the names above and common aliases ("float16", "bfloat16", "half", "float32",
// "fp8_e4m3", "fp8_e5m2", "e2m1", ...), case-insensitive. nullopt for anything else.
std::optional<Dtype> parse_dtype(std::string_view name);
// The accepted canonical names, for error messages.
std::vector<std::string> dtype_names();

// Bytes of `num_elements` elements, rounded up to a whole byte.
std::uint64_t bytes_for_elements(std::uint64_t num_elements, Dtype dtype);

}  // namespace kvsim::model
