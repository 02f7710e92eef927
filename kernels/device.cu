#include <cuda_runtime.h>

#include "kernels/cuda_check.h"
#include "kernels/device.h"

namespace kvsim::kernels {

bool cuda_compiled() {
  return true;
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls are not confused by it
    return 0;
  }
  return n;
}

std::string device_summary() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
  }
  if (n == 0) return "no CUDA device present";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    return "CUDA device 0: properties unavailable";
  return std::string(prop.name) + " (" + std::to_string(n) + " device" + (n > 1 ? "s" : "") + ")";
}

}  // namespace kvsim::kernels
