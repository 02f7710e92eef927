// Backend without CUDA (see device_none.cpp): every device entry point of
// kernels.h fails with the reason (the CPU references in kernels_ref.cpp still work).
#include <stdexcept>

#include "kernels/device.h"
#include "kernels/kernels.h"

namespace kvsim::kernels {
namespace {

[[noreturn]] void no_device(const char* what) {
  throw std::runtime_error(std::string(what) + ": " + device_summary());
}

}  // namespace

DeviceInfo device_info(int) {
  no_device("device_info");
}
void gemm_device(int, int, int, int, ElemType, const float*, const float*, float*) {
  no_device("gemm_device");
}
bool gemm_supported(int, ElemType) {
  return false;
}
Timing time_gemm(int, int, int, int, ElemType, const TimingOptions&) {
  no_device("time_gemm");
}
void paged_decode_device(int, const PagedDecodeShape&, const float*, const float*, const float*,
                         float, float*) {
  no_device("paged_decode_device");
}
Timing time_paged_decode(int, int, int, int, int, int, int, const TimingOptions&) {
  no_device("time_paged_decode");
}
void prefill_attention_device(int, const PrefillShape&, const float*, const float*, const float*,
                              float, float*) {
  no_device("prefill_attention_device");
}
Timing time_prefill_attention(int, int, const PrefillShape&, const TimingOptions&) {
  no_device("time_prefill_attention");
}
void copy_device(int, const void*, void*, std::size_t) {
  no_device("copy_device");
}
Timing time_copy(int, std::size_t, const TimingOptions&) {
  no_device("time_copy");
}
bool nccl_compiled() {
  return false;
}
Timing time_allreduce(int, std::size_t, const TimingOptions&) {
  no_device("time_allreduce");
}

}  // namespace kvsim::kernels
