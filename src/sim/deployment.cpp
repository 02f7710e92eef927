#include "sim/deployment.h"

#include <algorithm>

#include "common/assert.h"
#include "common/error.h"
#include "common/format.h"

namespace kvsim::sim {
namespace {

Error deployment_error(const std::string& field, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, field}, message);
}

// The allocator settings that come from the serving options, not the deployment.
void set_serving_options(memory::AllocatorOptions& a, const SimOptions& options) {
  a.enable_prefix_caching = options.enable_prefix_caching;
  a.cpu_swap_bytes = options.scheduler.preemption == PreemptionMode::kSwap
                         ? options.scheduler.swap_space_bytes
                         : 0;
}

}  // namespace

BuiltDeployment build_deployment(const DeploymentInputs& in, const SimOptions& options) {
  KVSIM_ASSERT(in.model != nullptr && in.hardware != nullptr, "a model and a GPU");
  KVSIM_ASSERT(in.max_model_len > 0, "max_model_len is resolved");
  const model::ModelSpec& m = *in.model;
  const model::HardwareSpec& hw = *in.hardware;
  const std::int64_t tp = in.tensor_parallel_size;

  BuiltDeployment d;
  d.block_size_ = in.block_size;
  d.max_model_len_ = in.max_model_len;
  d.budget_ = model::kv_budget_per_gpu(m, hw, tp, in.budget);
  const model::KvBudget& b = d.budget_;
  if (!b.fits) {
    const auto min_tp =
        model::min_tensor_parallel_to_fit(m, hw, in.budget, std::max<std::int64_t>(64, tp));
    const std::string advice =
        min_tp && *min_tp > tp
            ? "it needs --tensor-parallel-size " + std::to_string(*min_tp) + " or more"
            : "use a GPU with more memory or smaller weights (--gpu, the model's weight dtype)";
    throw deployment_error(
        "--gpu", m.name + " does not fit " + hw.name + " at tensor parallel size " +
                     std::to_string(tp) + ": weights " + human_bytes(b.weights_bytes) +
                     " + activations " + human_bytes(b.activation_reserve_bytes) + " + runtime " +
                     human_bytes(b.runtime_overhead_bytes) + " per GPU exceed " +
                     human_bytes(b.usable_bytes) + " usable (" + human_bytes(b.memory_bytes) +
                     " × " + fixed(b.gpu_memory_utilization, 2) + ") by " +
                     human_bytes(b.shortfall_bytes) + "; " + advice);
  }
  d.capacity_ =
      model::kv_capacity(m, in.kv_format, tp, b.kv_budget_bytes, in.block_size, in.max_model_len);
  if (d.capacity_.max_concurrent_sequences < 1) {
    throw deployment_error(
        "--max-model-len",
        "the KV cache of one replica (" + human_bytes(b.kv_budget_bytes) + " per GPU, " +
            with_commas(d.capacity_.max_cached_tokens) + " tokens) cannot hold one sequence of " +
            with_commas(in.max_model_len) +
            " tokens; lower --max-model-len, or raise --gpu-memory-utilization or "
            "--tensor-parallel-size");
  }

  memory::AllocatorOptions& a = d.allocator_;
  a.kind = in.allocator;
  a.capacity_bytes = b.kv_budget_bytes;
  a.bytes_per_slot = d.capacity_.bytes_per_token;
  const std::vector<model::KvGroup> groups = model::kv_groups(m, in.kv_format, tp);
  const bool hybrid = groups.size() > 1 ||
                      (groups.size() == 1 && groups[0].kind != model::LayerKind::kFullAttention);
  if (hybrid) {
    for (const model::KvGroup& g : groups) {
      a.groups.push_back(memory::KvGroupSpec{g.bytes_per_token, g.window_tokens});
    }
  }
  a.block_size = in.block_size;
  a.watermark = in.watermark;
  a.placement = in.placement;
  a.max_seq_len = in.max_model_len;
  set_serving_options(a, options);
  memory::validate_allocator_options(a);  // now, before any run

  cost::CostModelConfig cost = in.cost;
  cost.roofline.tensor_parallel_size = tp;
  cost.roofline.kv_dtype = in.kv_format.dtype;
  d.cost_model_ = cost::make_cost_model(m, hw, cost);
  return d;
}

SimSetup BuiltDeployment::setup(SimOptions options) const {
  options.block_size = block_size_;
  options.scheduler.max_model_len = max_model_len_;
  SimSetup s;
  s.options = options;
  s.cost_model = cost_model_.get();
  memory::AllocatorOptions alloc = allocator_;
  set_serving_options(alloc, options);
  s.make_allocator = [alloc] { return memory::make_allocator(alloc); };
  return s;
}

}  // namespace kvsim::sim
