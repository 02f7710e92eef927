// model/dtype.cpp: element widths in bits, names and aliases, and whole-tensor bytes.
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "model/dtype.h"

using namespace kvsim::model;

TEST_CASE("dtype: bits per element", "[model][dtype]") {
  CHECK(bits_per_element(Dtype::kFp32) == 32);
  CHECK(bits_per_element(Dtype::kFp16) == 16);
  CHECK(bits_per_element(Dtype::kBf16) == 16);
  CHECK(bits_per_element(Dtype::kFp8) == 8);
  CHECK(bits_per_element(Dtype::kInt8) == 8);
  CHECK(bits_per_element(Dtype::kInt4) == 4);
  CHECK(bits_per_element(Dtype::kFp4) == 4);
}

TEST_CASE("dtype: canonical names round-trip; aliases are case-insensitive and trimmed",
          "[model][dtype]") {
  CHECK(dtype_names() ==
        std::vector<std::string>{"fp32", "fp16", "bf16", "fp8", "int8", "int4", "fp4"});
  for (const auto& n : dtype_names()) CHECK(dtype_name(*parse_dtype(n)) == n);
  CHECK(parse_dtype("float32") == Dtype::kFp32);
  CHECK(parse_dtype("Float") == Dtype::kFp32);
  CHECK(parse_dtype("half") == Dtype::kFp16);
  CHECK(parse_dtype(" BFloat16 ") == Dtype::kBf16);
  CHECK(parse_dtype("float8_e4m3fn") == Dtype::kFp8);
  CHECK(parse_dtype("e5m2") == Dtype::kFp8);
  CHECK(parse_dtype("i8") == Dtype::kInt8);
  CHECK(parse_dtype("I4") == Dtype::kInt4);
  CHECK(parse_dtype("float4_e2m1fn") == Dtype::kFp4);  // MXFP4 / NVFP4 elements
  CHECK_FALSE(parse_dtype("fp6"));
  CHECK_FALSE(parse_dtype(""));
  CHECK_FALSE(parse_dtype("bf 16"));
}

TEST_CASE("dtype: tensor bytes round up to a whole byte, exactly near 2^64", "[model][dtype]") {
  CHECK(bytes_for_elements(0, Dtype::kInt4) == 0);
  CHECK(bytes_for_elements(1, Dtype::kInt4) == 1);
  CHECK(bytes_for_elements(3, Dtype::kInt4) == 2);
  CHECK(bytes_for_elements(16, Dtype::kInt4) == 8);
  CHECK(bytes_for_elements(7, Dtype::kBf16) == 14);
  CHECK(bytes_for_elements(1'000'000, Dtype::kFp32) == 4'000'000);
  // 2^63 int8 elements are 2^63 bytes; 2^62 fp32 elements would be 2^64 bytes: an error.
  CHECK(bytes_for_elements(std::uint64_t{1} << 63, Dtype::kInt8) == std::uint64_t{1} << 63);
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  CHECK(bytes_for_elements(max, Dtype::kInt4) == max / 2 + 1);  // no intermediate overflow
  CHECK_THROWS_AS(bytes_for_elements(std::uint64_t{1} << 62, Dtype::kFp32), kvsim::Error);
}
