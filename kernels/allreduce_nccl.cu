#include <nccl.h>

#include <vector>

#include "kernels/timing.cuh"

namespace kvsim::kernels {
namespace {

#define KVSIM_NCCL_CHECK(expr)                                                          \
  do {                                                                                  \
    ncclResult_t kvsim_r_ = (expr);                                                     \
    if (kvsim_r_ != ncclSuccess) {                                                      \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                               ": " #expr ": " + ncclGetErrorString(kvsim_r_));         \
    }                                                                                   \
  } while (0)

}  // namespace

bool nccl_compiled() {
  return true;
}

Timing time_allreduce(int num_gpus, std::size_t bytes, const TimingOptions& options) {
  if (num_gpus < 2 || num_gpus > device_count()) {
    throw std::runtime_error("time_allreduce: needs " + std::to_string(num_gpus) +
                             " GPUs, this machine has " + std::to_string(device_count()));
  }
  std::vector<int> devs(static_cast<std::size_t>(num_gpus));
  for (int i = 0; i < num_gpus; ++i) devs[static_cast<std::size_t>(i)] = i;
  std::vector<ncclComm_t> comms(devs.size());
  KVSIM_NCCL_CHECK(ncclCommInitAll(comms.data(), num_gpus, devs.data()));
  const std::size_t count = bytes / 2;
  std::vector<void*> bufs(devs.size());
  std::vector<cudaStream_t> streams(devs.size());
  std::vector<cudaEvent_t> start(devs.size()), stop(devs.size());
  for (int i = 0; i < num_gpus; ++i) {
    KVSIM_CUDA_CHECK(cudaSetDevice(i));
    KVSIM_CUDA_CHECK(cudaMalloc(&bufs[i], count * 2));
    detail::fill_random(bufs[i], count, ElemType::kFp16, 1000 + i);
    KVSIM_CUDA_CHECK(cudaStreamCreate(&streams[i]));
    KVSIM_CUDA_CHECK(cudaEventCreate(&start[i]));
    KVSIM_CUDA_CHECK(cudaEventCreate(&stop[i]));
    KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  auto once = [&](bool timed) {
    for (int i = 0; i < num_gpus; ++i) {
      KVSIM_CUDA_CHECK(cudaSetDevice(i));
      if (timed) KVSIM_CUDA_CHECK(cudaEventRecord(start[i], streams[i]));
    }
    KVSIM_NCCL_CHECK(ncclGroupStart());
    for (int i = 0; i < num_gpus; ++i) {
      KVSIM_NCCL_CHECK(
          ncclAllReduce(bufs[i], bufs[i], count, ncclFloat16, ncclSum, comms[i], streams[i]));
    }
    KVSIM_NCCL_CHECK(ncclGroupEnd());
    double slowest = 0;
    for (int i = 0; i < num_gpus; ++i) {
      KVSIM_CUDA_CHECK(cudaSetDevice(i));
      if (timed) KVSIM_CUDA_CHECK(cudaEventRecord(stop[i], streams[i]));
      KVSIM_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      if (timed) {
        float ms = 0;
        KVSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
        slowest = std::max(slowest, static_cast<double>(ms) * 1e-3);
      }
    }
    return slowest;
  };
  for (int i = 0; i < options.warmup; ++i) once(false);
  std::vector<double> times;
  for (int i = 0; i < std::max(options.repetitions, 1); ++i) times.push_back(once(true));
  for (int i = 0; i < num_gpus; ++i) {
    cudaSetDevice(i);
    cudaEventDestroy(start[i]);
    cudaEventDestroy(stop[i]);
    cudaStreamDestroy(streams[i]);
    cudaFree(bufs[i]);
    ncclCommDestroy(comms[i]);
  }
  return detail::summarize_times(std::move(times));
}

}  // namespace kvsim::kernels
