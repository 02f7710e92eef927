#pragma once
// Reading a step's breakdown: which roof binds, and where decode turns compute-bound.

#include <cstdint>
#include <optional>

#include "cost/cost_model.h"

namespace kvsim::cost {

// Seconds of the step's compute-bound ops and of the others (memory- or link-bound), the per-step
// CPU overhead excluded.
struct BoundSplit {
  double compute_s = 0;
  double memory_s = 0;
  bool compute_bound() const { return compute_s > memory_s; }
};
BoundSplit bound_split(const StepCost& cost);

// Decode at a fixed context: the smallest batch (1 .. max_batch) whose step is compute-bound
// (bound_split), and the smallest whose dense GEMMs (the "mlp", or for MoE models "qkv_proj", op)
// are; nullopt when it does not happen up to max_batch. Assumes both flips are monotone in the
// batch (searched by doubling, then bisection).
struct DecodeCrossover {
  std::optional<std::int64_t> step_batch;
  std::optional<std::int64_t> gemm_batch;
};
DecodeCrossover decode_crossover(const CostModel& model, std::int64_t context,
                                 std::int64_t max_batch = 1 << 16);

}  // namespace kvsim::cost
