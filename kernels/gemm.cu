#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <vector>

#include "kernels/timing.cuh"

namespace kvsim::kernels {
namespace {

#define KVSIM_CUBLAS_CHECK(expr)                                                           \
  do {                                                                                     \
    cublasStatus_t kvsim_st_ = (expr);                                                     \
    if (kvsim_st_ != CUBLAS_STATUS_SUCCESS) {                                              \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) +    \
                               ": " #expr ": cuBLAS status " + std::to_string(kvsim_st_)); \
    }                                                                                      \
  } while (0)

cudaDataType_t cuda_type(ElemType t) {
  switch (t) {
    case ElemType::kFp16:
      return CUDA_R_16F;
    case ElemType::kBf16:
      return CUDA_R_16BF;
    case ElemType::kFp8:
      return CUDA_R_8F_E4M3;
  }
  return CUDA_R_16F;
}

class Cublas {
 public:
  Cublas() { KVSIM_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~Cublas() { cublasDestroy(handle_); }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_{};
};

// Row-major C[m×n] = A[m×k]·B[k×n] is column-major C^T = B^T·A^T: cuBLAS sees an (n × m) result.
void gemm_16(cublasHandle_t h, int m, int n, int k, ElemType t, const void* a, const void* b,
             void* c, cudaDataType_t c_type) {
  const float alpha = 1.0f, beta = 0.0f;
  KVSIM_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, cuda_type(t), n,
                                  a, cuda_type(t), k, &beta, c, c_type, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
}

// FP8 (e4m3) GEMM through cuBLASLt, which requires the "TN" layout: column-major
// D[n×m] = W^T[n×k] · X[k×m] with W stored k×n (transposed op) — the same FLOPs and bytes as the
// row-major C[m×n] = X[m×k]·W[k×n]. Output bf16.
class LtFp8 {
 public:
  LtFp8(int m, int n, int k) : workspace_(kWorkspace) {
    KVSIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
    KVSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    KVSIM_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    KVSIM_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    KVSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, CUDA_R_8F_E4M3, k, n, k));
    KVSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, CUDA_R_8F_E4M3, k, m, k));
    KVSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, CUDA_R_16BF, n, m, n));
    KVSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    const std::size_t ws = kWorkspace;
    KVSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    KVSIM_CUBLAS_CHECK(
        cublasLtMatmulAlgoGetHeuristic(lt_, desc_, a_, b_, c_, c_, pref_, 1, &algo_, &found));
    if (found == 0) throw std::runtime_error("cuBLASLt: no fp8 GEMM algorithm for this shape");
  }
  ~LtFp8() {
    cublasLtMatmulPreferenceDestroy(pref_);
    cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatmulDescDestroy(desc_);
    cublasLtDestroy(lt_);
  }
  void run(const void* w, const void* x, void* out, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    KVSIM_CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &alpha, w, a_, x, b_, &beta, out, c_, out, c_,
                                      &algo_.algo, workspace_.get(), kWorkspace, stream));
  }

 private:
  static constexpr std::size_t kWorkspace = 32u << 20;
  cublasLtHandle_t lt_{};
  cublasLtMatmulDesc_t desc_{};
  cublasLtMatrixLayout_t a_{}, b_{}, c_{};
  cublasLtMatmulPreference_t pref_{};
  cublasLtMatmulHeuristicResult_t algo_{};
  detail::DeviceBuffer workspace_;
};

}  // namespace

bool gemm_supported(int device, ElemType type) {
  if (device < 0 || device >= device_count()) return false;
  if (type != ElemType::kFp8) return true;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return false;
  return prop.major * 10 + prop.minor >= 89;
}

void gemm_device(int device, int m, int n, int k, ElemType type, const float* a, const float* b,
                 float* c) {
  detail::use_device(device, "gemm_device");
  if (type == ElemType::kFp8)
    throw std::runtime_error("gemm_device: fp8 is timed only (time_gemm)");
  const auto da = detail::upload_as(a, static_cast<std::size_t>(m) * k, type);
  const auto db = detail::upload_as(b, static_cast<std::size_t>(k) * n, type);
  detail::DeviceBuffer dc(static_cast<std::size_t>(m) * n * sizeof(float));
  Cublas h;
  gemm_16(h.get(), m, n, k, type, da.get(), db.get(), dc.get(), CUDA_R_32F);
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  KVSIM_CUDA_CHECK(cudaMemcpy(c, dc.get(), dc.bytes(), cudaMemcpyDeviceToHost));
}

Timing time_gemm(int device, int m, int n, int k, ElemType type, const TimingOptions& options) {
  detail::use_device(device, "time_gemm");
  if (!gemm_supported(device, type))
    throw std::runtime_error("time_gemm: fp8 needs sm_89 or newer");
  const std::size_t eb = detail::elem_bytes(type);
  const std::size_t a_bytes = static_cast<std::size_t>(m) * k * eb;
  const std::size_t b_bytes = static_cast<std::size_t>(k) * n * eb;
  const std::size_t c_bytes = static_cast<std::size_t>(m) * n * 2;
  const int rotations = detail::rotations_for(device, a_bytes + b_bytes + c_bytes);
  std::vector<detail::DeviceBuffer> as, bs, cs;
  for (int r = 0; r < rotations; ++r) {
    as.emplace_back(a_bytes);
    bs.emplace_back(b_bytes);
    cs.emplace_back(c_bytes);
    detail::fill_random(as.back().get(), a_bytes / eb, type, 2 * r + 1);
    detail::fill_random(bs.back().get(), b_bytes / eb, type, 2 * r + 2);
  }
  KVSIM_CUDA_CHECK(cudaDeviceSynchronize());
  if (type == ElemType::kFp8) {
    LtFp8 lt(m, n, k);
    return detail::time_launches(options, rotations, nullptr, [&](int r) {
      lt.run(bs[r].get(), as[r].get(), cs[r].get(), nullptr);
    });
  }
  Cublas h;
  const cudaDataType_t out = type == ElemType::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  return detail::time_launches(options, rotations, nullptr, [&](int r) {
    gemm_16(h.get(), m, n, k, type, as[r].get(), bs[r].get(), cs[r].get(), out);
  });
}

}  // namespace kvsim::kernels
