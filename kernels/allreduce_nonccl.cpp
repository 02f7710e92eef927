// CUDA build without NCCL: the all-reduce timing is unavailable, and says so.
#include <stdexcept>

#include "kernels/kernels.h"

namespace kvsim::kernels {

bool nccl_compiled() {
  return false;
}

Timing time_allreduce(int, std::size_t, const TimingOptions&) {
  throw std::runtime_error("time_allreduce: this kvsim was built without NCCL (nccl.h not found)");
}

}  // namespace kvsim::kernels
