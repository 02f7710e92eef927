#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/device.h"
#include "kernels/kernels.h"

namespace kk = kvsim::kernels;

namespace {

// Deterministic values in [-1, 1], never zero.
std::vector<float> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<float>((x >> 8) % 2001) / 1000.0f - 1.0f;
    if (e == 0.0f) e = 0.25f;
  }
  return v;
}

bool no_gpu() {
  if (kk::device_count() > 0) return false;
  WARN("skipped: " << kk::device_summary());
  return true;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * (1.0f + std::abs(want[i])));
  }
}

}  // namespace

TEST_CASE("GEMM reference: closed-form products", "[kernels]") {
  // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<float> c(4);
  kk::gemm_reference(2, 2, 2, a.data(), b.data(), c.data());
  CHECK(c == std::vector<float>{19, 22, 43, 50});
  // A (3×4) times the identity-like (4×2) selector picks columns 0 and 3.
  const std::vector<float> a2 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> sel = {1, 0, 0, 0, 0, 0, 0, 1};
  std::vector<float> c2(6);
  kk::gemm_reference(3, 2, 4, a2.data(), sel.data(), c2.data());
  CHECK(c2 == std::vector<float>{1, 4, 5, 8, 9, 12});
}

TEST_CASE("Paged decode reference: uniform keys average the values, block tables are followed",
          "[kernels]") {
  // 2 sequences, 4 query heads over 2 KV heads (GQA groups of 2), head_dim 4, block size 2.
  kk::PagedDecodeShape s;
  s.num_seqs = 2, s.q_heads = 4, s.kv_heads = 2, s.head_dim = 4, s.block_size = 2;
  s.num_blocks = 4, s.max_blocks_per_seq = 2;
  const std::vector<int> lens = {3, 2};
  const std::vector<int> table = {3, 1, 0, 2};  // seq 0: blocks 3 then 1; seq 1: block 0
  s.context_lens = lens.data();
  s.block_table = table.data();
  const std::size_t cache =
      static_cast<std::size_t>(s.num_blocks) * s.kv_heads * s.block_size * s.head_dim;
  std::vector<float> k(cache, 0.0f), v(cache, 0.0f);  // zero keys: equal scores
  // V row of (block, kv head, slot) = block*100 + head*10 + slot in every dimension.
  for (int blk = 0; blk < 4; ++blk)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 2; ++t)
        for (int d = 0; d < 4; ++d)
          v[((static_cast<std::size_t>(blk) * 2 + h) * 2 + t) * 4 + d] =
              static_cast<float>(blk * 100 + h * 10 + t);
  const std::vector<float> q = values(2 * 4 * 4, 1);
  std::vector<float> out(q.size());
  kk::paged_decode_reference(s, q.data(), k.data(), v.data(), 0.5f, out.data());
  // Seq 0, KV head 1 (query heads 2, 3): tokens 0,1 in block 3 (slots 0,1), token 2 in block 1.
  const float seq0_h1 = (310 + 311 + 110) / 3.0f;
  CHECK(out[(0 * 4 + 2) * 4 + 0] == Approx(seq0_h1));
  CHECK(out[(0 * 4 + 3) * 4 + 3] == Approx(seq0_h1));
  // Seq 1, KV head 0 (query heads 0, 1): block 0, slots 0 and 1.
  CHECK(out[(1 * 4 + 0) * 4 + 1] == Approx((0 + 1) / 2.0f));
  // A dominant key takes (almost) all the weight.
  k[((static_cast<std::size_t>(1) * 2 + 0) * 2 + 0) * 4 + 0] = 100.0f;  // block 1, head 0, slot 0
  std::vector<float> q1(q.size(), 0.0f);
  q1[(0 * 4 + 0) * 4 + 0] = 1.0f;  // seq 0, head 0 looks along dimension 0
  kk::paged_decode_reference(s, q1.data(), k.data(), v.data(), 1.0f, out.data());
  CHECK(out[(0 * 4 + 0) * 4 + 0] == Approx(100.0f).epsilon(1e-6));
}

TEST_CASE("Prefill attention reference: causality with a cached prefix", "[kernels]") {
  // 1 head, head_dim 2, 2 cached keys, 3 new queries; zero keys → query i averages values
  // 0 .. kv_len + i.
  kk::PrefillShape s{3, 2, 1, 1, 2};
  const std::vector<float> q = values(3 * 2, 3);
  const std::vector<float> k(5 * 2, 0.0f);
  std::vector<float> v(5 * 2);
  for (int t = 0; t < 5; ++t) v[t * 2] = v[t * 2 + 1] = static_cast<float>(t);
  std::vector<float> out(3 * 2);
  kk::prefill_attention_reference(s, q.data(), k.data(), v.data(), 1.0f, out.data());
  CHECK(out[0] == Approx(1.0f));  // keys 0..2
  CHECK(out[2] == Approx(1.5f));  // keys 0..3
  CHECK(out[4] == Approx(2.0f));  // keys 0..4
}

TEST_CASE("Copy reference copies every byte", "[kernels]") {
  std::vector<unsigned char> src(1000), dst(1000, 0);
  std::iota(src.begin(), src.end(), static_cast<unsigned char>(1));
  kk::copy_reference(src.data(), dst.data(), src.size());
  CHECK(dst == src);
}

TEST_CASE("Without a device, device entry points fail with the reason", "[kernels]") {
  if (kk::device_count() > 0) return;
  std::vector<float> a(4, 1.0f), c(4);
  CHECK_THROWS_WITH(kk::gemm_device(0, 2, 2, 1, kk::ElemType::kFp16, a.data(), a.data(), c.data()),
                    Catch::Contains("gemm_device"));
  CHECK_THROWS(kk::time_copy(0, 1 << 20, {}));
  CHECK_FALSE(kk::gemm_supported(0, kk::ElemType::kBf16));
}

TEST_CASE("GPU GEMM matches the reference", "[kernels][gpu]") {
  if (no_gpu()) return;
  const int m = 33, n = 70, k = 128;
  const auto a = values(static_cast<std::size_t>(m) * k, 5),
             b = values(static_cast<std::size_t>(k) * n, 6);
  std::vector<float> want(static_cast<std::size_t>(m) * n), got(want.size());
  kk::gemm_reference(m, n, k, a.data(), b.data(), want.data());
  for (auto type : {kk::ElemType::kFp16, kk::ElemType::kBf16}) {
    kk::gemm_device(0, m, n, k, type, a.data(), b.data(), got.data());
    check_close(got, want, type == kk::ElemType::kFp16 ? 0.02f : 0.1f);
  }
  const auto t = kk::time_gemm(0, 1024, 1024, 1024, kk::ElemType::kBf16, {1, 3});
  CHECK(t.median_s > 0);
  if (kk::gemm_supported(0, kk::ElemType::kFp8)) {
    CHECK(kk::time_gemm(0, 1024, 1024, 1024, kk::ElemType::kFp8, {1, 3}).median_s > 0);
  }
}

TEST_CASE("GPU paged decode attention matches the reference", "[kernels][gpu]") {
  if (no_gpu()) return;
  kk::PagedDecodeShape s;
  s.num_seqs = 3, s.q_heads = 32, s.kv_heads = 2, s.head_dim = 128, s.block_size = 16;
  const std::vector<int> lens = {1, 70, 200};
  s.max_blocks_per_seq = 13;
  s.num_blocks = 3 * 13;
  std::vector<int> table(static_cast<std::size_t>(s.num_blocks));
  for (int i = 0; i < s.num_blocks; ++i)
    table[static_cast<std::size_t>(i)] = (i * 7) % s.num_blocks;
  s.context_lens = lens.data();
  s.block_table = table.data();
  const std::size_t cache =
      static_cast<std::size_t>(s.num_blocks) * s.kv_heads * s.block_size * s.head_dim;
  const auto k = values(cache, 7), v = values(cache, 8);
  const auto q = values(static_cast<std::size_t>(s.num_seqs) * s.q_heads * s.head_dim, 9);
  std::vector<float> want(q.size()), got(q.size());
  const float scale = 1.0f / std::sqrt(128.0f);
  kk::paged_decode_reference(s, q.data(), k.data(), v.data(), scale, want.data());
  kk::paged_decode_device(0, s, q.data(), k.data(), v.data(), scale, got.data());
  check_close(got, want, 0.02f);
  CHECK(kk::time_paged_decode(0, 8, 1024, 32, 8, 128, 16, {1, 3}).median_s > 0);
}

TEST_CASE("GPU prefill attention matches the reference", "[kernels][gpu]") {
  if (no_gpu()) return;
  const kk::PrefillShape s{45, 20, 8, 2, 128};
  const auto q = values(static_cast<std::size_t>(s.q_len) * s.q_heads * s.head_dim, 10);
  const auto k = values(static_cast<std::size_t>(s.kv_len + s.q_len) * s.kv_heads * s.head_dim, 11);
  const auto v = values(k.size(), 12);
  std::vector<float> want(q.size()), got(q.size());
  const float scale = 1.0f / std::sqrt(128.0f);
  kk::prefill_attention_reference(s, q.data(), k.data(), v.data(), scale, want.data());
  kk::prefill_attention_device(0, s, q.data(), k.data(), v.data(), scale, got.data());
  check_close(got, want, 0.02f);
  CHECK(kk::time_prefill_attention(0, 1, {512, 0, 32, 8, 128}, {1, 3}).median_s > 0);
}

TEST_CASE("GPU copy kernel copies every byte", "[kernels][gpu]") {
  if (no_gpu()) return;
  std::vector<unsigned char> src((1 << 20) + 7), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 31 + 1);
  kk::copy_device(0, src.data(), dst.data(), src.size());
  CHECK(dst == src);
  CHECK(kk::time_copy(0, 64u << 20, {1, 3}).median_s > 0);
}

TEST_CASE("NCCL all-reduce runs when several GPUs exist", "[kernels][gpu]") {
  if (no_gpu()) return;
  if (!kk::nccl_compiled() || kk::device_count() < 2) {
    WARN("skipped: needs NCCL and 2+ GPUs (" << kk::device_count() << " GPU(s), NCCL "
                                             << (kk::nccl_compiled() ? "built" : "not built")
                                             << ")");
    return;
  }
  CHECK(kk::time_allreduce(2, 1 << 20, {1, 3}).median_s > 0);
}
