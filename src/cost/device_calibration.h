#pragma once
// `kvsim calibrate --device N --model M`: which kernels to time for a model, and timing them on
// the local GPU with the kernels in kernels/ (cuBLAS GEMMs, our paged decode and tiled prefill
// attention kernels, the vectorised copy, NCCL all-reduce when several GPUs and NCCL exist).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/measurements.h"
#include "model/model_spec.h"

namespace kvsim::cost {

struct DevicePlanOptions {
  // Tensor-parallel degrees whose per-GPU shards are measured (those the model allows).
  std::vector<std::int64_t> tensor_parallel_sizes = {1, 2, 4, 8};
  bool quick = false;  // a few points per family (scripts/gpu-check.sh), not the full sweep
  bool fp8 = true;     // also time fp8 GEMMs where the device supports them
  int num_gpus = 1;    // GPUs available for all-reduce timing (all-reduce needs >= 2)
  bool nccl = false;   // whether NCCL is built in
};

// The kernel shapes to time for `model` (time_s left 0), in a fixed order: GEMMs per family and
// token count (bf16, then fp8 when requested), decode attention over batch × context, prefill
// attention over chunk × cached prefix, copies, all-reduces. MLA attention is not timed (our
// kernels are GQA/MHA): its rows come from the fitted roofline.
std::vector<Measurement> device_plan(const model::ModelSpec& model,
                                     const DevicePlanOptions& options);

// Times every row of `plan` on CUDA device `device`, filling time_s; rows whose kernel the device
// cannot run (fp8 on sm < 8.9) are dropped. `progress(done, total)` is called after each row.
// Throws std::runtime_error when no device is usable.
std::vector<Measurement> run_device_plan(
    int device, const std::vector<Measurement>& plan, bool quick,
    const std::function<void(std::size_t, std::size_t)>& progress);

}  // namespace kvsim::cost
