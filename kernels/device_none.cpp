// Backend without CUDA (the main kvsim executable, and every build where nvcc was not found): no
// device, and every device entry point fails with the reason.
#include <stdexcept>

#include "kernels/device.h"
#include "kernels/saxpy.h"

namespace kvsim::kernels {

bool cuda_compiled() {
  return false;
}
int device_count() {
  return 0;
}
std::string device_summary() {
  return "this executable has no CUDA kernels (kvsim-device has them; it is built when nvcc is "
         "found)";
}

void saxpy_device(int, float, const float*, float*, std::size_t) {
  throw std::runtime_error("saxpy_device: " + device_summary());
}

}  // namespace kvsim::kernels
