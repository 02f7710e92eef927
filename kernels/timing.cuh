#pragma once
// Shared helpers of the .cu files (device side only): device checks, input filling, L2-aware
// rotation counts, and event timing.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/device.h"
#include "kernels/kernels.h"

namespace kvsim::kernels::detail {

// Selects `device`, or throws std::runtime_error("<what>: <why no device>").
void use_device(int device, const char* what);

// Fills `count` elements at `data` (device memory) with pseudo-random values in [-1, 1] whose
// magnitude is at least 1/64 (never zero). `type` is the element type.
void fill_random(void* data, std::size_t count, ElemType type, std::uint64_t seed);
// The same for int indices: values in [0, modulo).
void fill_random_indices(int* data, std::size_t count, int modulo, std::uint64_t seed);

// Copies of a `set_bytes` input set to rotate through so that they span at least twice the L2
// cache: between 1 and 64 copies, and never more than a quarter of free memory.
int rotations_for(int device, std::size_t set_bytes);

// Element size in bytes.
std::size_t elem_bytes(ElemType type);

// The median and minimum of non-empty timings, in seconds.
inline Timing summarize_times(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  Timing t;
  t.repetitions = static_cast<int>(times.size());
  t.min_s = times.front();
  t.median_s = times.size() % 2 ? times[times.size() / 2]
                                : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  return t;
}

// Times `launch(rotation)` on `stream`: options.warmup untimed calls, then options.repetitions
// timed ones with CUDA events; returns the median and minimum.
template <class Launch>
Timing time_launches(const TimingOptions& options, int rotations, cudaStream_t stream,
                     Launch&& launch) {
  cudaEvent_t start, stop;
  KVSIM_CUDA_CHECK(cudaEventCreate(&start));
  KVSIM_CUDA_CHECK(cudaEventCreate(&stop));
  int r = 0;
  for (int i = 0; i < options.warmup; ++i) launch(r++ % rotations);
  KVSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> times;
  for (int i = 0; i < std::max(options.repetitions, 1); ++i) {
    KVSIM_CUDA_CHECK(cudaEventRecord(start, stream));
    launch(r++ % rotations);
    KVSIM_CUDA_CHECK(cudaEventRecord(stop, stream));
    KVSIM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    KVSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(static_cast<double>(ms) * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return summarize_times(std::move(times));
}

// Device buffer freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) KVSIM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Uploads floats converted to fp16 (device conversion).
DeviceBuffer upload_as(const float* host, std::size_t count, ElemType type);

}  // namespace kvsim::kernels::detail
