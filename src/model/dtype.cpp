#include "model/dtype.h"

#include "common/checked_math.h"
#include "common/enum_names.h"
#include "common/strings.h"

namespace kvsim::model {

int bits_per_element(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32:
      return 32;
    case Dtype::kFp16:
    case Dtype::kBf16:
      return 16;
    case Dtype::kFp8:
    case Dtype::kInt8:
      return 8;
    case Dtype::kInt4:
    case Dtype::kFp4:
      return 4;
  }
  return 0;
}

constexpr EnumNames<Dtype, 7> kDtypeNames{{{
    {Dtype::kFp32, "fp32"},
    {Dtype::kFp16, "fp16"},
    {Dtype::kBf16, "bf16"},
    {Dtype::kFp8, "fp8"},
    {Dtype::kInt8, "int8"},
    {Dtype::kInt4, "int4"},
    {Dtype::kFp4, "fp4"},
}}};

std::string_view dtype_name(Dtype dtype) {
  return kDtypeNames.name(dtype);
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  const std::string n = to_lower(trim(name));
  if (n == "fp32" || n == "float32" || n == "float") return Dtype::kFp32;
  if (n == "fp16" || n == "float16" || n == "half") return Dtype::kFp16;
  if (n == "bf16" || n == "bfloat16") return Dtype::kBf16;
  if (n == "fp8" || n == "fp8_e4m3" || n == "fp8_e5m2" || n == "float8_e4m3fn" ||
      n == "float8_e5m2" || n == "e4m3" || n == "e5m2") {
    return Dtype::kFp8;
  }
  if (n == "int8" || n == "i8") return Dtype::kInt8;
  if (n == "int4" || n == "i4") return Dtype::kInt4;
  if (n == "fp4" || n == "fp4_e2m1" || n == "float4_e2m1fn" || n == "e2m1") return Dtype::kFp4;
  return std::nullopt;
}

std::vector<std::string> dtype_names() {
  return kDtypeNames.names();
}

std::uint64_t bytes_for_elements(std::uint64_t num_elements, Dtype dtype) {
  // Whole bytes of 8 elements, then the rest rounded up, so that no intermediate overflows.
  const auto bits = static_cast<std::uint64_t>(bits_per_element(dtype));
  const std::uint64_t rest = (num_elements % 8 * bits + 7) / 8;
  return checked_add(checked_mul(num_elements / 8, bits, "a tensor's bytes"), rest,
                     "a tensor's bytes");
}

}  // namespace kvsim::model
