#include <cuda_fp16.h>

#include <vector>

#include "kernels/timing.cuh"

namespace kvsim::kernels {
namespace {

constexpr int kMaxGroup = 8;       // query heads one decode block serves (one KV head's group)
constexpr int kMaxDimPerLane = 8;  // head_dim <= 256
constexpr int kDecodeWarps = 4;
constexpr int kMaxHeadDim = 32 * kMaxDimPerLane;

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ __forceinline__ void store(float* p, float v) {
  *p = v;
}
__device__ __forceinline__ void store(__half* p, float v) {
  *p = __float2half(v);
}

// One block per (sequence, KV head, slice of that head's query group): every warp walks a share
// of the sequence's tokens through the block table, loads each key/value row once and updates an
// online softmax for all query heads of the group; warps are merged at the end.
template <class OutT>
__global__ void paged_decode_kernel(const __half* __restrict__ q,
                                    const __half* __restrict__ k_cache,
                                    const __half* __restrict__ v_cache,
                                    const int* __restrict__ block_table,
                                    const int* __restrict__ context_lens, int max_blocks,
                                    int q_heads, int kv_heads, int head_dim, int block_size,
                                    float scale, OutT* __restrict__ out) {
  __shared__ float sm_m[kDecodeWarps][kMaxGroup];
  __shared__ float sm_l[kDecodeWarps][kMaxGroup];
  __shared__ float sm_acc[kDecodeWarps][kMaxGroup][kMaxHeadDim];
  const int seq = blockIdx.x, kvh = blockIdx.y;
  const int group = q_heads / kv_heads;
  const int h0 = kvh * group + blockIdx.z * kMaxGroup;
  const int heads = min(kMaxGroup, group - static_cast<int>(blockIdx.z) * kMaxGroup);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float qr[kMaxGroup][kMaxDimPerLane], acc[kMaxGroup][kMaxDimPerLane], m[kMaxGroup], l[kMaxGroup];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxDimPerLane; ++i) {
      const int d = lane + 32 * i;
      acc[g][i] = 0.0f;
      qr[g][i] =
          (g < heads && d < head_dim)
              ? __half2float(q[(static_cast<std::size_t>(seq) * q_heads + h0 + g) * head_dim + d]) *
                    scale
              : 0.0f;
    }
  }
  const int ctx = context_lens[seq];
  for (int t = warp; t < ctx; t += kDecodeWarps) {
    const int block = block_table[static_cast<std::size_t>(seq) * max_blocks + t / block_size];
    const std::size_t off =
        ((static_cast<std::size_t>(block) * kv_heads + kvh) * block_size + t % block_size) *
        head_dim;
    float kr[kMaxDimPerLane], vr[kMaxDimPerLane];
#pragma unroll
    for (int i = 0; i < kMaxDimPerLane; ++i) {
      const int d = lane + 32 * i;
      kr[i] = d < head_dim ? __half2float(k_cache[off + d]) : 0.0f;
      vr[i] = d < head_dim ? __half2float(v_cache[off + d]) : 0.0f;
    }
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
      if (g >= heads) break;
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < kMaxDimPerLane; ++i) dot += qr[g][i] * kr[i];
      dot = warp_sum(dot);
      const float new_m = fmaxf(m[g], dot);
      const float corr = __expf(m[g] - new_m);
      const float p = __expf(dot - new_m);
      l[g] = l[g] * corr + p;
#pragma unroll
      for (int i = 0; i < kMaxDimPerLane; ++i) acc[g][i] = acc[g][i] * corr + p * vr[i];
      m[g] = new_m;
    }
  }
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (lane == 0) {
      sm_m[warp][g] = m[g];
      sm_l[warp][g] = l[g];
    }
#pragma unroll
    for (int i = 0; i < kMaxDimPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < kMaxHeadDim) sm_acc[warp][g][d] = acc[g][i];
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < heads * head_dim; idx += blockDim.x) {
    const int g = idx / head_dim, d = idx % head_dim;
    float big = -INFINITY;
    for (int w = 0; w < kDecodeWarps; ++w) big = fmaxf(big, sm_m[w][g]);
    float sum = 0.0f, val = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w) {
      const float f = sm_l[w][g] > 0.0f ? __expf(sm_m[w][g] - big) : 0.0f;
      sum += sm_l[w][g] * f;
      val += sm_acc[w][g][d] * f;
    }
    store(&out[(static_cast<std::size_t>(seq) * q_heads + h0 + g) * head_dim + d], val / sum);
  }
}

constexpr int kPrefillWarps = 8;
constexpr int kRowsPerWarp = 2;
constexpr int kBlockQ = kPrefillWarps * kRowsPerWarp;  // query rows per block
constexpr int kBlockK = 32;                            // keys per shared-memory tile

// Tiled causal attention: one block per (tile of kBlockQ query rows, query head, sequence). K/V
// tiles of kBlockK keys are staged in shared memory and reused by every row of the block; each
// warp keeps kRowsPerWarp rows in registers with an online softmax.
template <class OutT>
__global__ void prefill_kernel(const __half* __restrict__ q, const __half* __restrict__ k,
                               const __half* __restrict__ v, int q_len, int kv_len, int q_heads,
                               int kv_heads, int head_dim, float scale, OutT* __restrict__ out) {
  __shared__ __half ks[kBlockK * kMaxHeadDim];
  __shared__ __half vs[kBlockK * kMaxHeadDim];
  const int h = blockIdx.y, seq = blockIdx.z;
  const int kvh = h / (q_heads / kv_heads);
  const int q0 = blockIdx.x * kBlockQ;
  const std::size_t q_seq = static_cast<std::size_t>(q_len) * q_heads * head_dim;
  const std::size_t kv_seq = static_cast<std::size_t>(kv_len + q_len) * kv_heads * head_dim;
  q += seq * q_seq;
  out += seq * q_seq;
  k += seq * kv_seq;
  v += seq * kv_seq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float qr[kRowsPerWarp][kMaxDimPerLane], acc[kRowsPerWarp][kMaxDimPerLane], m[kRowsPerWarp],
      l[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = q0 + warp * kRowsPerWarp + r;
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxDimPerLane; ++i) {
      const int d = lane + 32 * i;
      acc[r][i] = 0.0f;
      qr[r][i] =
          (row < q_len && d < head_dim)
              ? __half2float(q[(static_cast<std::size_t>(row) * q_heads + h) * head_dim + d]) *
                    scale
              : 0.0f;
    }
  }
  const int last_row = min(q0 + kBlockQ, q_len) - 1;
  const int key_end = kv_len + last_row + 1;
  for (int tile = 0; tile < key_end; tile += kBlockK) {
    __syncthreads();
    for (int idx = threadIdx.x; idx < kBlockK * head_dim; idx += blockDim.x) {
      const int j = idx / head_dim, d = idx % head_dim;
      const int key = tile + j;
      const std::size_t src = (static_cast<std::size_t>(key) * kv_heads + kvh) * head_dim + d;
      ks[j * head_dim + d] = key < key_end ? k[src] : __float2half(0.0f);
      vs[j * head_dim + d] = key < key_end ? v[src] : __float2half(0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = q0 + warp * kRowsPerWarp + r;
      if (row >= q_len) continue;
      const int limit = kv_len + row;  // last key this row sees
      for (int j = 0; j < kBlockK && tile + j <= limit; ++j) {
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < kMaxDimPerLane; ++i) {
          const int d = lane + 32 * i;
          if (d < head_dim) dot += qr[r][i] * __half2float(ks[j * head_dim + d]);
        }
        dot = warp_sum(dot);
        const float new_m = fmaxf(m[r], dot);
        const float corr = __expf(m[r] - new_m);
        const float p = __expf(dot - new_m);
        l[r] = l[r] * corr + p;
#pragma unroll
        for (int i = 0; i < kMaxDimPerLane; ++i) {
          const int d = lane + 32 * i;
          if (d < head_dim) acc[r][i] = acc[r][i] * corr + p * __half2float(vs[j * head_dim + d]);
        }
        m[r] = new_m;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = q0 + warp * kRowsPerWarp + r;
    if (row >= q_len) continue;
#pragma unroll
    for (int i = 0; i < kMaxDimPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < head_dim)
        store(&out[(static_cast<std::size_t>(row) * q_heads + h) * head_dim + d], acc[r][i] / l[r]);
    }
  }
}

void check_geometry(int q_heads, int kv_heads, int head_dim, const char* what) {
  if (kv_heads <= 0 || q_heads % kv_heads != 0 || head_dim <= 0 || head_dim > kMaxHeadDim) {
    throw std::runtime_error(std::string(what) +
                             ": expected q_heads a multiple of kv_heads and "
                             "0 < head_dim <= 256");
  }
}

template <class OutT>
void launch_decode(const __half* q, const __half* kc, const __half* vc, const int* table,
                   const int* lens, int num_seqs, int max_blocks, int q_heads, int kv_heads,
                   int head_dim, int block_size, float scale, OutT* out) {
  const int group = q_heads / kv_heads;
  const dim3 grid(num_seqs, kv_heads, (group + kMaxGroup - 1) / kMaxGroup);
  paged_decode_kernel<OutT><<<grid, 32 * kDecodeWarps>>>(
      q, kc, vc, table, lens, max_blocks, q_heads, kv_heads, head_dim, block_size, scale, out);
}

template <class OutT>
void launch_prefill(const __half* q, const __half* k, const __half* v, int batch,
                    const PrefillShape& s, float scale, OutT* out) {
  const dim3 grid((s.q_len + kBlockQ - 1) / kBlockQ, s.q_heads, batch);
  prefill_kernel<OutT><<<grid, 32 * kPrefillWarps>>>(q, k, v, s.q_len, s.kv_len, s.q_heads,
                                                     s.kv_heads, s.head_dim, scale, out);
}

detail::DeviceBuffer upload_ints(const int* host, std::size_t count) {
  detail::DeviceBuffer d(count * sizeof(int));
  KVSIM_CUDA_CHECK(cudaMemcpy(d.get(), host, count * sizeof(int), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

void paged_decode_device(int device, const PagedDecodeShape& s, const float* q,
                         const float* k_cache, const float* v_cache, float scale, float* out) {
  detail::use_device(device, "paged_decode_device");
  check_geometry(s.q_heads, s.kv_heads, s.head_dim, "paged_decode_device");
  const std::size_t q_count = static_cast<std::size_t>(s.num_seqs) * s.q_heads * s.head_dim;
  const std::size_t cache_count =
      static_cast<std::size_t>(s.num_blocks) * s.kv_heads * s.block_size * s.head_dim;
  const auto dq = detail::upload_as(q, q_count, ElemType::kFp16);
  const auto dk = detail::upload_as(k_cache, cache_count, ElemType::kFp16);
  const auto dv = detail::upload_as(v_cache, cache_count, ElemType::kFp16);
  const auto table =
      upload_ints(s.block_table, static_cast<std::size_t>(s.num_seqs) * s.max_blocks_per_seq);
  const auto lens = upload_ints(s.context_lens, static_cast<std::size_t>(s.num_seqs));
  detail::DeviceBuffer dout(q_count * sizeof(float));
  launch_decode(dq.get<__half>(), dk.get<__half>(), dv.get<__half>(), table.get<int>(),
                lens.get<int>(), s.num_seqs, s.max_blocks_per_seq, s.q_heads, s.kv_heads,
                s.head_dim, s.block_size, scale, dout.get<float>());
  KVSIM_CUDA_CHECK(cudaGetLastError());
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  KVSIM_CUDA_CHECK(cudaMemcpy(out, dout.get(), dout.bytes(), cudaMemcpyDeviceToHost));
}

Timing time_paged_decode(int device, int batch, int kv_len, int q_heads, int kv_heads, int head_dim,
                         int block_size, const TimingOptions& options) {
  detail::use_device(device, "time_paged_decode");
  check_geometry(q_heads, kv_heads, head_dim, "time_paged_decode");
  const int context = kv_len + 1;  // the cached keys plus this step's token
  const int max_blocks = (context + block_size - 1) / block_size;
  const int num_blocks = batch * max_blocks;
  const std::size_t cache_count =
      static_cast<std::size_t>(num_blocks) * kv_heads * block_size * head_dim;
  const std::size_t q_count = static_cast<std::size_t>(batch) * q_heads * head_dim;
  const int rotations = detail::rotations_for(device, 2 * cache_count * 2);
  std::vector<detail::DeviceBuffer> ks, vs, qs, tables;
  for (int r = 0; r < rotations; ++r) {
    ks.emplace_back(cache_count * 2);
    vs.emplace_back(cache_count * 2);
    qs.emplace_back(q_count * 2);
    tables.emplace_back(static_cast<std::size_t>(num_blocks) * sizeof(int));
    detail::fill_random(ks.back().get(), cache_count, ElemType::kFp16, 10 * r + 1);
    detail::fill_random(vs.back().get(), cache_count, ElemType::kFp16, 10 * r + 2);
    detail::fill_random(qs.back().get(), q_count, ElemType::kFp16, 10 * r + 3);
    // Scattered blocks: the block table points anywhere in the pool.
    detail::fill_random_indices(tables.back().get<int>(), static_cast<std::size_t>(num_blocks),
                                num_blocks, 10 * r + 4);
  }
  const std::vector<int> lens_host(static_cast<std::size_t>(batch), context);
  const auto lens = upload_ints(lens_host.data(), lens_host.size());
  detail::DeviceBuffer out(q_count * 2);
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const float scale = 1.0f / sqrtf(static_cast<float>(head_dim));
  return detail::time_launches(options, rotations, nullptr, [&](int r) {
    launch_decode(qs[r].get<__half>(), ks[r].get<__half>(), vs[r].get<__half>(),
                  tables[r].get<int>(), lens.get<int>(), batch, max_blocks, q_heads, kv_heads,
                  head_dim, block_size, scale, out.get<__half>());
  });
}

void prefill_attention_device(int device, const PrefillShape& s, const float* q, const float* k,
                              const float* v, float scale, float* out) {
  detail::use_device(device, "prefill_attention_device");
  check_geometry(s.q_heads, s.kv_heads, s.head_dim, "prefill_attention_device");
  const std::size_t q_count = static_cast<std::size_t>(s.q_len) * s.q_heads * s.head_dim;
  const std::size_t kv_count =
      static_cast<std::size_t>(s.kv_len + s.q_len) * s.kv_heads * s.head_dim;
  const auto dq = detail::upload_as(q, q_count, ElemType::kFp16);
  const auto dk = detail::upload_as(k, kv_count, ElemType::kFp16);
  const auto dv = detail::upload_as(v, kv_count, ElemType::kFp16);
  detail::DeviceBuffer dout(q_count * sizeof(float));
  launch_prefill(dq.get<__half>(), dk.get<__half>(), dv.get<__half>(), 1, s, scale,
                 dout.get<float>());
  KVSIM_CUDA_CHECK(cudaGetLastError());
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  KVSIM_CUDA_CHECK(cudaMemcpy(out, dout.get(), dout.bytes(), cudaMemcpyDeviceToHost));
}

Timing time_prefill_attention(int device, int batch, const PrefillShape& s,
                              const TimingOptions& options) {
  detail::use_device(device, "time_prefill_attention");
  check_geometry(s.q_heads, s.kv_heads, s.head_dim, "time_prefill_attention");
  const std::size_t q_count = static_cast<std::size_t>(batch) * s.q_len * s.q_heads * s.head_dim;
  const std::size_t kv_count =
      static_cast<std::size_t>(batch) * (s.kv_len + s.q_len) * s.kv_heads * s.head_dim;
  const int rotations = detail::rotations_for(device, (2 * q_count + 2 * kv_count) * 2);
  std::vector<detail::DeviceBuffer> qs, ks, vs, outs;
  for (int r = 0; r < rotations; ++r) {
    qs.emplace_back(q_count * 2);
    ks.emplace_back(kv_count * 2);
    vs.emplace_back(kv_count * 2);
    outs.emplace_back(q_count * 2);
    detail::fill_random(qs.back().get(), q_count, ElemType::kFp16, 20 * r + 1);
    detail::fill_random(ks.back().get(), kv_count, ElemType::kFp16, 20 * r + 2);
    detail::fill_random(vs.back().get(), kv_count, ElemType::kFp16, 20 * r + 3);
  }
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const float scale = 1.0f / sqrtf(static_cast<float>(s.head_dim));
  return detail::time_launches(options, rotations, nullptr, [&](int r) {
    launch_prefill(qs[r].get<__half>(), ks[r].get<__half>(), vs[r].get<__half>(), batch, s, scale,
                   outs[r].get<__half>());
  });
}

}  // namespace kvsim::kernels
