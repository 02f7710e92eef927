#pragma once
// CUDA error checking for the .cu files: turns a failed runtime call into std::runtime_error
// naming the call and the file:line.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#define KVSIM_CUDA_CHECK(expr)                                                          \
  do {                                                                                  \
    cudaError_t kvsim_err_ = (expr);                                                    \
    if (kvsim_err_ != cudaSuccess) {                                                    \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                               ": " #expr ": " + cudaGetErrorString(kvsim_err_));       \
    }                                                                                   \
  } while (0)
