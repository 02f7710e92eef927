#include "model/expert_parallel.h"

#include "common/assert.h"

namespace kvsim::model {

std::string expert_parallel_problem(const ModelSpec& model, std::int64_t tp,
                                    std::int64_t data_parallel_size, bool expert_parallel) {
  if (data_parallel_size < 1) {
    return "expected a positive data parallel size, got " + std::to_string(data_parallel_size);
  }
  if (expert_parallel && !model.moe.enabled()) {
    return "expert parallelism needs a mixture-of-experts model; " + model.name +
           " is dense (use --data-parallel-size alone)";
  }
  const std::int64_t ranks = tp * data_parallel_size;
  if (expert_parallel && model.moe.num_experts < ranks) {
    return "expert parallelism over " + std::to_string(ranks) + " GPUs (tensor parallel " +
           std::to_string(tp) + " × data parallel " + std::to_string(data_parallel_size) +
           ") leaves GPUs without an expert: " + model.name + " has " +
           std::to_string(model.moe.num_experts) + " routed experts";
  }
  return "";
}

ModelSpec shard_experts(const ModelSpec& model, std::int64_t tp, std::int64_t data_parallel_size,
                        bool expert_parallel) {
  KVSIM_ASSERT(expert_parallel_problem(model, tp, data_parallel_size, expert_parallel).empty(),
               "shard_experts: a valid deployment");
  ModelSpec m = model;
  if (!m.moe.enabled() || (data_parallel_size == 1 && !expert_parallel)) return m;
  m.moe.shard_ranks = tp * data_parallel_size;
  m.moe.expert_parallel = expert_parallel;
  return m;
}

bool data_parallel_lockstep(const ModelSpec& model, std::int64_t data_parallel_size) {
  return model.moe.enabled() && data_parallel_size > 1;
}

}  // namespace kvsim::model
