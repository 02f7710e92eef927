#pragma once
// The trivial kernel that proves the CUDA build path: y[i] = a * x[i] + y[i].
// Kernel headers stay C++17 (nvcc builds them): pointers and sizes, no std::span.

#include <cstddef>

namespace kvsim::kernels {

// CPU reference over n elements.
void saxpy_reference(float a, const float* x, float* y, std::size_t n);

// The same on CUDA device `device`; throws std::runtime_error when no device is usable.
void saxpy_device(int device, float a, const float* x, float* y, std::size_t n);

}  // namespace kvsim::kernels
