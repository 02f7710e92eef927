#include "cost/device_calibration.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "cost/roofline_model.h"
#include "kernels/kernels.h"

namespace kvsim::cost {
namespace {

// A GPU with every roof, only to enumerate the model's kernel families.
model::HardwareSpec any_gpu() {
  model::HardwareSpec h;
  h.name = "planning";
  h.memory_bandwidth = 1e12;
  h.peak_flops = {{model::Dtype::kFp32, 1e14},
                  {model::Dtype::kFp16, 1e15},
                  {model::Dtype::kBf16, 1e15},
                  {model::Dtype::kFp8, 2e15}};
  h.interconnect_bandwidth = 1e11;
  h.pcie_bandwidth = 1e10;
  return h;
}

kernels::ElemType elem(model::Dtype d) {
  switch (d) {
    case model::Dtype::kFp8:
      return kernels::ElemType::kFp8;
    case model::Dtype::kFp16:
      return kernels::ElemType::kFp16;
    default:
      return kernels::ElemType::kBf16;
  }
}

}  // namespace

namespace {

using Families = std::set<std::array<std::int64_t, 3>>;

// The GEMM and (non-MLA) attention families the model runs at any of the TP degrees.
void collect_families(const model::ModelSpec& m, const DevicePlanOptions& o, Families& gemms,
                      Families& attention) {
  for (const std::int64_t tp : o.tensor_parallel_sizes) {
    CostOptions co;
    co.tensor_parallel_size = tp;
    co.weight_dtype = model::Dtype::kBf16;
    try {
      const RooflineCostModel rm(m, any_gpu(), co);
      const auto f = rm.kernel_families();
      gemms.insert(f.gemms.begin(), f.gemms.end());
      if (m.attention.kind != model::AttentionKind::kMla)
        attention.insert(f.attention.begin(), f.attention.end());
    } catch (const std::exception&) {
      // This TP degree does not fit the model's heads: nothing to measure for it.
    }
  }
}

void add_shape(std::vector<Measurement>& plan, const KernelShape& s) {
  Measurement r;
  r.shape = s;
  r.file = "device";
  plan.push_back(r);
}

void add_gemms(std::vector<Measurement>& plan, const Families& gemms, const DevicePlanOptions& o) {
  const std::vector<std::int64_t> tokens =
      o.quick ? std::vector<std::int64_t>{1, 16, 128, 1024, 4096}
              : std::vector<std::int64_t>{1,   2,   4,   8,    16,   32,   64,
                                          128, 256, 512, 1024, 2048, 4096, 8192};
  std::vector<model::Dtype> gemm_types = {model::Dtype::kBf16};
  if (o.fp8) gemm_types.push_back(model::Dtype::kFp8);
  for (const model::Dtype dt : gemm_types) {
    for (const auto& [n, k, batch] : gemms) {
      if (batch != 1) continue;  // batched per-head GEMMs (MLA absorption) use the roofline
      for (const std::int64_t t : tokens) {
        KernelShape s;
        s.op = OpClass::kGemm;
        s.dtype = dt;
        s.m = t, s.n = n, s.k = k, s.batch = 1;
        add_shape(plan, s);
      }
    }
  }
}

void add_attention(std::vector<Measurement>& plan, const Families& attention,
                   const DevicePlanOptions& o) {
  const std::vector<std::int64_t> batches =
      o.quick ? std::vector<std::int64_t>{1, 16, 64} : std::vector<std::int64_t>{1, 4, 16, 64, 256};
  const std::vector<std::int64_t> contexts = o.quick
                                                 ? std::vector<std::int64_t>{512, 4096}
                                                 : std::vector<std::int64_t>{128, 512, 2048, 8192};
  const std::vector<std::int64_t> chunks = o.quick
                                               ? std::vector<std::int64_t>{256, 2048}
                                               : std::vector<std::int64_t>{128, 512, 2048, 8192};
  const std::vector<std::int64_t> prefixes =
      o.quick ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, 2048};
  for (const auto& [qh, kvh, hd] : attention) {
    if (hd > 256) continue;
    for (const std::int64_t b : batches) {
      for (const std::int64_t c : contexts) {
        KernelShape s;
        s.op = OpClass::kAttnDecode;
        s.dtype = model::Dtype::kFp16;
        s.batch = b, s.kv_len = c, s.q_heads = qh, s.kv_heads = kvh, s.head_dim = hd;
        add_shape(plan, s);
      }
    }
    for (const std::int64_t q : chunks) {
      for (const std::int64_t c : prefixes) {
        KernelShape s;
        s.op = OpClass::kAttnPrefill;
        s.dtype = model::Dtype::kFp16;
        s.batch = 1, s.q_len = q, s.kv_len = c, s.q_heads = qh, s.kv_heads = kvh, s.head_dim = hd;
        add_shape(plan, s);
      }
    }
  }
}

// Host-device copies and, with NCCL and two GPUs or more, all-reduces over 2, 4, ... GPUs.
void add_transfers(std::vector<Measurement>& plan, const DevicePlanOptions& o) {
  const std::vector<double> copies =
      o.quick ? std::vector<double>{16.0 * (1 << 20), 256.0 * (1 << 20)}
              : std::vector<double>{1.0 * (1 << 20), 16.0 * (1 << 20), 256.0 * (1 << 20),
                                    1024.0 * (1 << 20)};
  for (const double b : copies) {
    KernelShape s;
    s.op = OpClass::kMemcpy;
    s.dtype = model::Dtype::kFp16;
    s.bytes = b;
    add_shape(plan, s);
  }
  if (o.nccl && o.num_gpus >= 2) {
    for (int p = 2; p <= o.num_gpus; p *= 2) {
      for (const double b : {64.0 * 1024, 1.0 * (1 << 20), 16.0 * (1 << 20), 64.0 * (1 << 20)}) {
        KernelShape s;
        s.op = OpClass::kAllreduce;
        s.dtype = model::Dtype::kFp16;
        s.bytes = b;
        s.num_gpus = p;
        add_shape(plan, s);
      }
    }
  }
}

}  // namespace

std::vector<Measurement> device_plan(const model::ModelSpec& m, const DevicePlanOptions& o) {
  Families gemms, attention;
  collect_families(m, o, gemms, attention);
  std::vector<Measurement> plan;
  add_gemms(plan, gemms, o);
  add_attention(plan, attention, o);
  add_transfers(plan, o);
  return plan;
}

std::vector<Measurement> run_device_plan(
    int device, const std::vector<Measurement>& plan, bool quick,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  kernels::TimingOptions t;
  if (quick) t.warmup = 2, t.repetitions = 7;
  std::vector<Measurement> out;
  std::size_t done = 0;
  for (const Measurement& row : plan) {
    Measurement r = row;
    const KernelShape& s = r.shape;
    bool run = true;
    switch (s.op) {
      case OpClass::kGemm:
        if (!kernels::gemm_supported(device, elem(s.dtype))) {
          run = false;
          break;
        }
        try {
          r.time_s = kernels::time_gemm(device, static_cast<int>(s.m), static_cast<int>(s.n),
                                        static_cast<int>(s.k), elem(s.dtype), t)
                         .median_s;
        } catch (const std::runtime_error&) {
          // cuBLASLt has no fp8 algorithm for some shapes (dimensions not multiples of 16).
          if (s.dtype != model::Dtype::kFp8) throw;
          run = false;
        }
        break;
      case OpClass::kAttnDecode:
        r.time_s = kernels::time_paged_decode(
                       device, static_cast<int>(s.batch), static_cast<int>(s.kv_len),
                       static_cast<int>(s.q_heads), static_cast<int>(s.kv_heads),
                       static_cast<int>(s.head_dim), 16, t)
                       .median_s;
        break;
      case OpClass::kAttnPrefill: {
        const kernels::PrefillShape ps{static_cast<int>(s.q_len), static_cast<int>(s.kv_len),
                                       static_cast<int>(s.q_heads), static_cast<int>(s.kv_heads),
                                       static_cast<int>(s.head_dim)};
        r.time_s =
            kernels::time_prefill_attention(device, static_cast<int>(s.batch), ps, t).median_s;
        break;
      }
      case OpClass::kMemcpy:
        r.time_s = kernels::time_copy(device, static_cast<std::size_t>(s.bytes), t).median_s;
        break;
      case OpClass::kAllreduce:
        r.time_s = kernels::time_allreduce(static_cast<int>(s.num_gpus),
                                           static_cast<std::size_t>(s.bytes), t)
                       .median_s;
        break;
      case OpClass::kElementwise:
      case OpClass::kMoe:  // no CUDA kernel here: fused-MoE rows come from imported tables
        run = false;
        break;
    }
    if (run && r.time_s > 0) out.push_back(r);
    if (progress) progress(++done, plan.size());
  }
  return out;
}

}  // namespace kvsim::cost
