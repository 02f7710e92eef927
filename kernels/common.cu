#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/timing.cuh"

namespace kvsim::kernels {
namespace detail {
namespace {

__device__ float hash_unit(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  // [-1, 1] with |v| >= 1/64.
  float v = static_cast<float>(x >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f;
  if (fabsf(v) < 1.0f / 64) v = v < 0 ? -0.5f : 0.5f;
  return v;
}

template <class T>
__global__ void fill_kernel(T* data, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = T(hash_unit(i, seed));
  }
}

__global__ void fill_index_kernel(int* data, std::size_t n, int modulo, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float u = (hash_unit(i, seed) + 1.0f) * 0.5f;
    data[i] = min(static_cast<int>(u * modulo), modulo - 1);
  }
}

template <class T>
__global__ void convert_kernel(const float* in, T* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = T(in[i]);
  }
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535));
}

}  // namespace

void use_device(int device, const char* what) {
  if (device < 0 || device >= device_count()) {
    throw std::runtime_error(std::string(what) + ": no CUDA device " + std::to_string(device) +
                             " (" + device_summary() + ")");
  }
  KVSIM_CUDA_CHECK(cudaSetDevice(device));
}

std::size_t elem_bytes(ElemType type) {
  return type == ElemType::kFp8 ? 1 : 2;
}

void fill_random(void* data, std::size_t count, ElemType type, std::uint64_t seed) {
  if (count == 0) return;
  switch (type) {
    case ElemType::kFp16:
      fill_kernel<<<grid_for(count), 256>>>(static_cast<__half*>(data), count, seed);
      break;
    case ElemType::kBf16:
      fill_kernel<<<grid_for(count), 256>>>(static_cast<__nv_bfloat16*>(data), count, seed);
      break;
    case ElemType::kFp8:
      fill_kernel<<<grid_for(count), 256>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed);
      break;
  }
  KVSIM_CUDA_CHECK(cudaGetLastError());
}

void fill_random_indices(int* data, std::size_t count, int modulo, std::uint64_t seed) {
  if (count == 0) return;
  fill_index_kernel<<<grid_for(count), 256>>>(data, count, modulo, seed);
  KVSIM_CUDA_CHECK(cudaGetLastError());
}

int rotations_for(int device, std::size_t set_bytes) {
  int l2 = 0;
  KVSIM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  std::size_t free_bytes = 0, total = 0;
  KVSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t want = set_bytes == 0 ? 1 : (2 * static_cast<std::size_t>(l2)) / set_bytes + 1;
  const std::size_t cap = set_bytes == 0 ? 1 : std::max<std::size_t>(free_bytes / 4 / set_bytes, 1);
  return static_cast<int>(std::min<std::size_t>({want, cap, 64}));
}

DeviceBuffer upload_as(const float* host, std::size_t count, ElemType type) {
  DeviceBuffer staging(count * sizeof(float));
  KVSIM_CUDA_CHECK(cudaMemcpy(staging.get(), host, count * sizeof(float), cudaMemcpyHostToDevice));
  DeviceBuffer out(count * elem_bytes(type));
  if (count == 0) return out;
  switch (type) {
    case ElemType::kFp16:
      convert_kernel<<<grid_for(count), 256>>>(staging.get<float>(), out.get<__half>(), count);
      break;
    case ElemType::kBf16:
      convert_kernel<<<grid_for(count), 256>>>(staging.get<float>(), out.get<__nv_bfloat16>(),
                                               count);
      break;
    case ElemType::kFp8:
      convert_kernel<<<grid_for(count), 256>>>(staging.get<float>(), out.get<__nv_fp8_e4m3>(),
                                               count);
      break;
  }
  KVSIM_CUDA_CHECK(cudaGetLastError());
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  return out;
}

}  // namespace detail

DeviceInfo device_info(int device) {
  detail::use_device(device, "device_info");
  cudaDeviceProp prop{};
  KVSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  info.sm_major = prop.major;
  info.sm_minor = prop.minor;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.memory_bytes = prop.totalGlobalMem;
  info.device_count = device_count();
  return info;
}

}  // namespace kvsim::kernels
