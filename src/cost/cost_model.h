#pragma once
// The simulator's clock: how long one engine step of a given batch takes on one replica.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/units.h"

namespace kvsim::cost {

// Part of a prompt computed in this step.
struct PrefillChunk {
  std::int64_t num_tokens = 0;         // new tokens computed now
  std::int64_t num_cached_tokens = 0;  // tokens of this sequence already in the KV cache
};

struct StepBatch {
  std::span<const PrefillChunk> prefills;
  // For each decoding sequence: tokens in its KV cache before this step's token.
  std::span<const std::int64_t> decode_context_tokens;
  // Sequences that sample a token this step (every decode, plus prefills finishing their prompt);
  // the LM head runs for these rows only.
  std::int64_t num_sampling = 0;
};

struct OpCost {
  std::string name;  // "qkv_proj", "attn_prefill", "attn_decode", "o_proj", "mlp", ...
  double time_s = 0;
  double flops = 0;  // per GPU
  double bytes = 0;  // per GPU, moved to/from HBM (or over the link for all-reduce)
  bool compute_bound = false;
};

struct StepCost {
  double time_s = 0;
  std::vector<OpCost> ops;  // in execution order; per-step CPU overhead is the last entry
};

// Interface: a CostModel is immutable after construction and safe to share across threads.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Step time of `batch` on one replica (hot path: no allocation).
  virtual TimeNs step_time(const StepBatch& batch) const = 0;
  // The same with the per-op breakdown (for `kvsim cost` and reports).
  virtual StepCost breakdown(const StepBatch& batch) const = 0;
  // Time to move `bytes` of KV between GPU and host memory (swap), one direction.
  virtual TimeNs swap_time(Bytes bytes) const = 0;
};

}  // namespace kvsim::cost
