#include <vector>

#include "kernels/timing.cuh"

namespace kvsim::kernels {
namespace {

// 16-byte vector copy, grid-stride; the tail (bytes % 16) byte by byte.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n16,
                            const unsigned char* __restrict__ src_tail,
                            unsigned char* __restrict__ dst_tail, std::size_t tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n16;
       i += stride) {
    dst[i] = src[i];
  }
  if (blockIdx.x == 0 && threadIdx.x < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

void launch_copy(const void* src, void* dst, std::size_t bytes, int sms, cudaStream_t stream) {
  const std::size_t n16 = bytes / 16;
  const std::size_t tail = bytes % 16;
  const unsigned blocks = static_cast<unsigned>(std::max<std::size_t>(
      1, std::min<std::size_t>((n16 + 255) / 256, static_cast<std::size_t>(sms) * 8)));
  copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst),
                                          n16, static_cast<const unsigned char*>(src) + n16 * 16,
                                          static_cast<unsigned char*>(dst) + n16 * 16, tail);
}

int sm_count(int device) {
  int sms = 0;
  KVSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

void copy_device(int device, const void* src, void* dst, std::size_t bytes) {
  detail::use_device(device, "copy_device");
  detail::DeviceBuffer s(bytes + 16), d(bytes + 16);
  KVSIM_CUDA_CHECK(cudaMemcpy(s.get(), src, bytes, cudaMemcpyHostToDevice));
  launch_copy(s.get(), d.get(), bytes, sm_count(device), nullptr);
  KVSIM_CUDA_CHECK(cudaGetLastError());
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  KVSIM_CUDA_CHECK(cudaMemcpy(dst, d.get(), bytes, cudaMemcpyDeviceToHost));
}

Timing time_copy(int device, std::size_t bytes, const TimingOptions& options) {
  detail::use_device(device, "time_copy");
  const int rotations = detail::rotations_for(device, 2 * bytes);
  std::vector<detail::DeviceBuffer> src, dst;
  for (int r = 0; r < rotations; ++r) {
    src.emplace_back(bytes);
    dst.emplace_back(bytes);
    detail::fill_random(src.back().get(), bytes / 2, ElemType::kFp16, 100 + r);
  }
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const int sms = sm_count(device);
  return detail::time_launches(options, rotations, nullptr, [&](int r) {
    launch_copy(src[r].get(), dst[r].get(), bytes, sms, nullptr);
  });
}

}  // namespace kvsim::kernels
