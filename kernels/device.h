#pragma once
// What the local machine offers for running kernels. Everything here works without a GPU:
// with no CUDA compiled in, or no device present, device_count() is 0 and the device_* entry
// points throw std::runtime_error naming the reason.

#include <string>

namespace kvsim::kernels {

// True when this binary was built with nvcc (the CUDA kernels exist in it).
bool cuda_compiled();

// Number of usable CUDA devices; 0 when none, when the driver is missing, or when CUDA was not
// compiled in. Never throws.
int device_count();

// One line describing why device_count() is 0 (or the device name of device 0 when it is not).
std::string device_summary();

}  // namespace kvsim::kernels
