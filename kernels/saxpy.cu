#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/cuda_check.h"
#include "kernels/device.h"
#include "kernels/saxpy.h"

namespace kvsim::kernels {
namespace {

__global__ void saxpy_kernel(float a, const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

}  // namespace

void saxpy_device(int device, float a, const float* x, float* y, size_t n) {
  if (device_count() <= device) throw std::runtime_error("saxpy_device: " + device_summary());
  KVSIM_CUDA_CHECK(cudaSetDevice(device));
  float* dx = nullptr;
  float* dy = nullptr;
  KVSIM_CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  KVSIM_CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  KVSIM_CUDA_CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
  KVSIM_CUDA_CHECK(cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice));
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  if (n > 0) saxpy_kernel<<<blocks, threads>>>(a, dx, dy, n);
  KVSIM_CUDA_CHECK(cudaGetLastError());
  KVSIM_CUDA_CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace kvsim::kernels
