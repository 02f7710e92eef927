#pragma once
// The calibration kernels and their CPU references. Kernel headers stay C++17 (nvcc builds the
// .cu files): plain pointers and sizes, no std::span. Every *_device / time_* entry point throws
// std::runtime_error naming the reason when no CUDA device is usable (see device.h); the
// *_reference functions always work.
//
// Timing (time_*): CUDA events around each launch, `warmup` untimed launches first, then
// `repetitions` timed ones; the median is reported. Inputs are random non-zero values, and the
// kernels rotate through enough copies of their inputs that the set exceeds twice the L2 cache,
// so that L2 does not flatter the numbers.

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvsim::kernels {

enum class ElemType { kFp16, kBf16, kFp8 };

struct TimingOptions {
  int warmup = 3;
  int repetitions = 15;
};

struct Timing {
  double median_s = 0;
  double min_s = 0;
  int repetitions = 0;
};

struct DeviceInfo {
  std::string name;
  int driver_version = 0;  // e.g. 13000 for 13.0
  int runtime_version = 0;
  int sm_major = 0, sm_minor = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  int device_count = 0;
};

// Properties of device `device` (throws without one).
DeviceInfo device_info(int device);

// --- GEMM (cuBLAS; fp8 through cuBLASLt on sm_89 and newer) -------------------------------------
// Row-major C[m×n] = A[m×k] · B[k×n] in float.
void gemm_reference(int m, int n, int k, const float* a, const float* b, float* c);
// The same on the device with A and B rounded to `type` (fp16 or bf16), fp32 accumulation and
// output.
void gemm_device(int device, int m, int n, int k, ElemType type, const float* a, const float* b,
                 float* c);
// Whether `type` GEMMs run on `device` (fp8 needs compute capability 8.9+).
bool gemm_supported(int device, ElemType type);
Timing time_gemm(int device, int m, int n, int k, ElemType type, const TimingOptions& options);

// --- Paged decode attention ---------------------------------------------------------------------
// One query token per sequence over its cached keys. KV cache layout:
// [num_blocks][kv_heads][block_size][head_dim] for K and for V; block_table is
// [num_seqs][max_blocks_per_seq]; q and out are [num_seqs][q_heads][head_dim]. Query head h reads
// KV head h / (q_heads / kv_heads) (GQA grouping: the device kernel loads each KV head once for
// its whole group).
struct PagedDecodeShape {
  int num_seqs = 0, q_heads = 0, kv_heads = 0, head_dim = 0, block_size = 16;
  int num_blocks = 0, max_blocks_per_seq = 0;
  const int* context_lens = nullptr;  // [num_seqs], keys attended (>= 1)
  const int* block_table = nullptr;   // [num_seqs][max_blocks_per_seq]
};
void paged_decode_reference(const PagedDecodeShape& s, const float* q, const float* k_cache,
                            const float* v_cache, float scale, float* out);
// Device version: q and caches rounded to fp16, fp32 softmax and accumulation.
void paged_decode_device(int device, const PagedDecodeShape& s, const float* q,
                         const float* k_cache, const float* v_cache, float scale, float* out);
// `batch` sequences, each attending `kv_len` cached keys, scattered blocks (fp16).
Timing time_paged_decode(int device, int batch, int kv_len, int q_heads, int kv_heads, int head_dim,
                         int block_size, const TimingOptions& options);

// --- Prefill attention (tiled, causal, after a cached prefix) ----------------------------------
// q, out: [q_len][q_heads][head_dim]; k, v: [kv_len + q_len][kv_heads][head_dim] (cached keys
// first). Query i sees keys 0 .. kv_len + i.
struct PrefillShape {
  int q_len = 0, kv_len = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
};
void prefill_attention_reference(const PrefillShape& s, const float* q, const float* k,
                                 const float* v, float scale, float* out);
void prefill_attention_device(int device, const PrefillShape& s, const float* q, const float* k,
                              const float* v, float scale, float* out);
Timing time_prefill_attention(int device, int batch, const PrefillShape& s,
                              const TimingOptions& options);

// --- Copy bandwidth (vectorised 16-byte loads and stores) -------------------------------------
void copy_reference(const void* src, void* dst, std::size_t bytes);
void copy_device(int device, const void* src, void* dst, std::size_t bytes);
Timing time_copy(int device, std::size_t bytes, const TimingOptions& options);

// --- All-reduce (NCCL, one process driving every local GPU) ------------------------------------
// Whether this build has NCCL.
bool nccl_compiled();
// Sum all-reduce of `bytes` of fp16 over GPUs 0..num_gpus-1 (slowest GPU's time).
Timing time_allreduce(int num_gpus, std::size_t bytes, const TimingOptions& options);

}  // namespace kvsim::kernels
