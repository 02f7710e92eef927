#include "kernels/saxpy.h"

namespace kvsim::kernels {

void saxpy_reference(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

}  // namespace kvsim::kernels
