#include <vector>

#include <catch2/catch.hpp>

#include "kernels/device.h"
#include "kernels/saxpy.h"

using kvsim::kernels::saxpy_reference;

TEST_CASE("saxpy reference computes a*x + y", "[kernels]") {
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {10, 20, 30, 40};
  saxpy_reference(2.0f, x.data(), y.data(), x.size());
  CHECK(y == std::vector<float>{12, 24, 36, 48});
}

// Runs only where a CUDA device exists; elsewhere it says why it skipped.
TEST_CASE("saxpy on the GPU matches the CPU reference", "[kernels][gpu]") {
  if (kvsim::kernels::device_count() == 0) {
    WARN("skipped: " << kvsim::kernels::device_summary());
    return;
  }
  std::vector<float> x(1 << 20), y(1 << 20);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i % 97) * 0.5f;
    y[i] = static_cast<float>(i % 13);
  }
  std::vector<float> expected = y;
  saxpy_reference(3.0f, x.data(), expected.data(), x.size());
  kvsim::kernels::saxpy_device(0, 3.0f, x.data(), y.data(), x.size());
  CHECK(y == expected);
}
