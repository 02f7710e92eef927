#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"

namespace kvsim::kernels {

void gemm_reference(int m, int n, int k, const float* a, const float* b, float* c) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        acc += static_cast<double>(a[static_cast<std::size_t>(i) * k + p]) *
               b[static_cast<std::size_t>(p) * n + j];
      }
      c[static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
    }
  }
}

namespace {

// Softmax-weighted sum of `num_keys` value rows for one query row.
void attend(int num_keys, int head_dim, float scale, const float* q,
            const float* (*key)(const void*, int), const float* (*value)(const void*, int),
            const void* ctx, float* out) {
  std::vector<double> score(static_cast<std::size_t>(num_keys));
  double max_score = -INFINITY;
  for (int t = 0; t < num_keys; ++t) {
    const float* kt = key(ctx, t);
    double dot = 0;
    for (int d = 0; d < head_dim; ++d) dot += static_cast<double>(q[d]) * kt[d];
    score[static_cast<std::size_t>(t)] = dot * scale;
    max_score = std::max(max_score, score[static_cast<std::size_t>(t)]);
  }
  double sum = 0;
  for (double& s : score) sum += (s = std::exp(s - max_score));
  for (int d = 0; d < head_dim; ++d) {
    double acc = 0;
    for (int t = 0; t < num_keys; ++t) acc += score[static_cast<std::size_t>(t)] * value(ctx, t)[d];
    out[d] = static_cast<float>(acc / sum);
  }
}

struct PagedCtx {
  const PagedDecodeShape* s;
  const float* k;
  const float* v;
  int seq, kv_head;
};

const float* paged_row(const PagedCtx* c, const float* cache, int t) {
  const PagedDecodeShape& s = *c->s;
  const int block =
      s.block_table[static_cast<std::size_t>(c->seq) * s.max_blocks_per_seq + t / s.block_size];
  const std::size_t offset =
      ((static_cast<std::size_t>(block) * s.kv_heads + c->kv_head) * s.block_size +
       t % s.block_size) *
      s.head_dim;
  return cache + offset;
}

struct PrefillCtx {
  const PrefillShape* s;
  const float* k;
  const float* v;
  int kv_head;
};

}  // namespace

void paged_decode_reference(const PagedDecodeShape& s, const float* q, const float* k_cache,
                            const float* v_cache, float scale, float* out) {
  const int group = s.q_heads / s.kv_heads;
  for (int seq = 0; seq < s.num_seqs; ++seq) {
    for (int h = 0; h < s.q_heads; ++h) {
      const PagedCtx ctx{&s, k_cache, v_cache, seq, h / group};
      const std::size_t row = (static_cast<std::size_t>(seq) * s.q_heads + h) * s.head_dim;
      attend(
          s.context_lens[seq], s.head_dim, scale, q + row,
          [](const void* c, int t) {
            auto* p = static_cast<const PagedCtx*>(c);
            return paged_row(p, p->k, t);
          },
          [](const void* c, int t) {
            auto* p = static_cast<const PagedCtx*>(c);
            return paged_row(p, p->v, t);
          },
          &ctx, out + row);
    }
  }
}

void prefill_attention_reference(const PrefillShape& s, const float* q, const float* k,
                                 const float* v, float scale, float* out) {
  const int group = s.q_heads / s.kv_heads;
  for (int i = 0; i < s.q_len; ++i) {
    for (int h = 0; h < s.q_heads; ++h) {
      const PrefillCtx ctx{&s, k, v, h / group};
      const std::size_t row = (static_cast<std::size_t>(i) * s.q_heads + h) * s.head_dim;
      attend(
          s.kv_len + i + 1, s.head_dim, scale, q + row,
          [](const void* c, int t) {
            auto* p = static_cast<const PrefillCtx*>(c);
            return p->k +
                   (static_cast<std::size_t>(t) * p->s->kv_heads + p->kv_head) * p->s->head_dim;
          },
          [](const void* c, int t) {
            auto* p = static_cast<const PrefillCtx*>(c);
            return p->v +
                   (static_cast<std::size_t>(t) * p->s->kv_heads + p->kv_head) * p->s->head_dim;
          },
          &ctx, out + row);
    }
  }
}

void copy_reference(const void* src, void* dst, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace kvsim::kernels
