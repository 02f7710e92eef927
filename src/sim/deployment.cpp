#include "sim/deployment.h"

#include <algorithm>
#include <optional>

#include "common/assert.h"
#include "common/error.h"
#include "common/format.h"
#include "common/int_math.h"
#include "model/expert_parallel.h"
#include "model/pipeline.h"
#include "model/vllm_memory.h"

namespace kvsim::sim {
namespace {

Error deployment_error(const std::string& field, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, field}, message);
}

// The allocator settings that come from the serving options, not the deployment. Each of `engines`
// virtual engines (pipeline parallelism) gets its share of the swap space (vLLM V0:
// num_cpu_blocks //= pipeline_parallel_size) and of the CPU offload tier.
void set_serving_options(memory::AllocatorOptions& a, const SimOptions& options,
                         std::int64_t engines) {
  a.enable_prefix_caching = options.enable_prefix_caching;
  a.cpu_swap_bytes = options.scheduler.preemption == PreemptionMode::kSwap
                         ? options.scheduler.swap_space_bytes / static_cast<Bytes>(engines)
                         : 0;
  a.cpu_offload_bytes = options.kv_offload_bytes / static_cast<Bytes>(engines);
}

// vLLM V1 keeps a hybrid model's per-sequence state (Mamba / linear-attention layers) in the
// KV pool: one page per group of such layers per request (model::vllm_kv_cache_layout), here in
// pages of the allocator's size.
void set_state_pages(memory::AllocatorOptions& a, const model::ModelSpec& m,
                     const DeploymentInputs& in, Bytes engine_bytes) {
  const std::int64_t tp = in.tensor_parallel_size;
  const Bytes state = model::ssm_state_bytes_per_sequence(m, tp);
  if (state == 0) return;
  Bytes widest = a.bytes_per_slot;
  if (!a.groups.empty()) {
    widest = 0;
    for (const memory::KvGroupSpec& g : a.groups) widest = std::max(widest, g.bytes_per_slot);
  }
  const Bytes page = static_cast<Bytes>(in.block_size) * widest;
  const model::VllmKvCacheLayout l = model::vllm_kv_cache_layout(
      m, in.kv_format, tp, engine_bytes, in.block_size, in.max_model_len, 1);
  const Bytes held =
      l.state_groups > 0 ? static_cast<Bytes>(l.state_groups) * l.block_bytes : state;
  a.state_blocks_per_seq = static_cast<std::int64_t>(ceil_div(held, page));
  a.state_bytes_per_seq = state;
}

// KV offload's requirements on the deployment (the allocator checks them too, by option name).
void check_offload(const memory::AllocatorOptions& a, const SimOptions& options) {
  if (options.kv_offload_bytes == 0) return;
  if (a.kind != memory::AllocatorKind::kPaged) {
    throw deployment_error("--kv-offload-gib",
                           "a CPU offload tier needs --allocator paged, not " +
                               std::string(memory::allocator_kind_name(a.kind)));
  }
  if (!a.groups.empty()) {
    throw deployment_error("--kv-offload-gib",
                           "a CPU offload tier is modelled for full-attention models only (this "
                           "model has sliding-window or hybrid layers)");
  }
}

// The "does not fit" error of stage `stage` of `pp` (the whole model when pp == 1).
Error does_not_fit(const DeploymentInputs& in, const model::KvBudget& b, std::int64_t stage) {
  const model::ModelSpec& m = *in.model;
  const model::HardwareSpec& hw = *in.hardware;
  const std::int64_t tp = in.tensor_parallel_size;
  const std::int64_t pp = in.pipeline_parallel_size;
  const auto min_tp =
      model::min_tensor_parallel_to_fit(m, hw, in.budget, std::max<std::int64_t>(64, tp));
  const std::string advice =
      pp == 1 && min_tp && *min_tp > tp
          ? "it needs --tensor-parallel-size " + std::to_string(*min_tp) + " or more"
          : "use a GPU with more memory or smaller weights (--gpu, the model's weight dtype)" +
                std::string(pp > 1 ? ", or more tensor or pipeline parallelism" : "");
  const std::string where = pp == 1 ? ""
                                    : " × pipeline parallel size " + std::to_string(pp) +
                                          " (stage " + std::to_string(stage) + ")";
  return deployment_error(
      "--gpu", m.name + " does not fit " + hw.name + " at tensor parallel size " +
                   std::to_string(tp) + where + ": weights " + human_bytes(b.weights_bytes) +
                   " + activations " + human_bytes(b.activation_reserve_bytes) + " + runtime " +
                   human_bytes(b.runtime_overhead_bytes) + " per GPU exceed " +
                   human_bytes(b.usable_bytes) + " usable (" + human_bytes(b.memory_bytes) + " × " +
                   fixed(b.gpu_memory_utilization, 2) + ") by " + human_bytes(b.shortfall_bytes) +
                   "; " + advice);
}

struct StageSizing {
  model::ModelSpec model;
  model::KvBudget budget;
  model::KvCapacity capacity;
};

// The stage whose GPU holds the fewest KV blocks (the first of equals); with pp == 1 the model.
StageSizing size_kv_stage(const DeploymentInputs& in, std::int64_t* index) {
  const std::int64_t pp = in.pipeline_parallel_size;
  std::optional<StageSizing> worst;
  for (const model::PipelineStage& st : model::pipeline_stages(in.model->num_layers, pp)) {
    StageSizing s;
    s.model = model::stage_model(*in.model, st, pp);
    s.budget = model::kv_budget_per_gpu(s.model, *in.hardware, in.tensor_parallel_size, in.budget);
    if (!s.budget.fits) throw does_not_fit(in, s.budget, st.index);
    s.capacity = model::kv_capacity(s.model, in.kv_format, in.tensor_parallel_size,
                                    s.budget.kv_budget_bytes, in.block_size, in.max_model_len);
    if (!worst || s.capacity.num_blocks < worst->capacity.num_blocks) {
      worst = std::move(s);
      *index = st.index;
    }
  }
  return std::move(*worst);
}

}  // namespace

BuiltDeployment build_deployment(const DeploymentInputs& in, const SimOptions& options) {
  KVSIM_ASSERT(in.model != nullptr && in.hardware != nullptr, "a model and a GPU");
  KVSIM_ASSERT(in.max_model_len > 0, "max_model_len is resolved");
  const model::HardwareSpec& hw = *in.hardware;
  const std::int64_t tp = in.tensor_parallel_size;
  const std::int64_t pp = in.pipeline_parallel_size;
  KVSIM_ASSERT(pp >= 1, "pipeline parallel size is resolved");
  KVSIM_ASSERT(pp == 1 || !model::data_parallel_lockstep(*in.model, in.data_parallel_size),
               "no ranks in lockstep with pipeline parallelism "
               "(run::ResolvedScenario::not_modelled)");

  BuiltDeployment d;
  d.block_size_ = in.block_size;
  d.max_model_len_ = in.max_model_len;
  d.engines_ = pipeline_virtual_engines(options.scheduler, pp);
  const StageSizing stage = size_kv_stage(in, &d.kv_stage_);
  const model::ModelSpec& m = stage.model;
  d.budget_ = stage.budget;
  d.capacity_ = stage.capacity;
  const model::KvBudget& b = d.budget_;
  // One virtual engine's share of the cache (all of it with one engine per replica).
  const std::int64_t engines = d.engines_;
  const Bytes engine_bytes = b.kv_budget_bytes / static_cast<Bytes>(engines);
  const model::KvCapacity engine =
      engines == 1
          ? d.capacity_
          : model::kv_capacity(m, in.kv_format, tp, engine_bytes, in.block_size, in.max_model_len);
  if (engine.max_concurrent_sequences < 1) {
    throw deployment_error(
        "--max-model-len",
        "the KV cache of one " + std::string(engines == 1 ? "replica" : "virtual engine") + " (" +
            human_bytes(engine_bytes) + " per GPU, " + with_commas(engine.max_cached_tokens) +
            " tokens) cannot hold one sequence of " + with_commas(in.max_model_len) +
            " tokens; lower --max-model-len, or raise --gpu-memory-utilization or "
            "--tensor-parallel-size");
  }

  memory::AllocatorOptions& a = d.allocator_;
  a.kind = in.allocator;
  a.capacity_bytes = engine_bytes;
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
  if (a.kind == memory::AllocatorKind::kPaged && in.budget.engine == model::MemoryEngine::kVllmV1) {
    set_state_pages(a, m, in, engine_bytes);
  }
  a.watermark = in.watermark;
  a.placement = in.placement;
  a.max_seq_len = in.max_model_len;
  set_serving_options(a, options, engines);
  check_offload(a, options);
  memory::validate_allocator_options(a);  // now, before any run

  d.data_parallel_.size = in.data_parallel_size;
  d.data_parallel_.lockstep = model::data_parallel_lockstep(*in.model, in.data_parallel_size);
  cost::CostModelConfig cost = in.cost;
  cost.roofline.tensor_parallel_size = tp;
  cost.roofline.data_parallel_size = d.data_parallel_.lockstep ? in.data_parallel_size : 1;
  cost.roofline.kv_dtype = in.kv_format.dtype;
  if (pp == 1) {
    d.cost_model_ = cost::make_cost_model(*in.model, hw, cost);
  } else {
    d.pipeline_ = cost::make_pipeline_cost_model(*in.model, hw, cost, pp);
    d.cost_model_ = d.pipeline_;
  }
  return d;
}

SimSetup BuiltDeployment::setup(SimOptions options) const {
  KVSIM_ASSERT(pipeline_virtual_engines(options.scheduler,
                                        pipeline_ ? pipeline_->num_stages() : 1) == engines_,
               "the engine the deployment was sized for");
  options.block_size = block_size_;
  options.scheduler.max_model_len = max_model_len_;
  SimSetup s;
  s.options = options;
  s.cost_model = cost_model_.get();
  s.pipeline = pipeline_.get();
  s.data_parallel = data_parallel_;
  memory::AllocatorOptions alloc = allocator_;
  set_serving_options(alloc, options, engines_);
  s.make_allocator = [alloc] { return memory::make_allocator(alloc); };
  return s;
}

}  // namespace kvsim::sim
