#include "run/resolve.h"

#include <cmath>

#include "common/error.h"
#include "common/strings.h"
#include "config/catalog.h"
#include "config/settings.h"

namespace kvsim::run {
namespace {

Bytes gib_to_bytes(double gib) {
  return static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
}

Error flag_error(const std::string& flag, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, flag}, message);
}

}  // namespace

model::MemoryBudgetOptions Deployment::budget_options() const {
  model::MemoryBudgetOptions o;
  o.gpu_memory_utilization = gpu_memory_utilization;
  o.activation_reserve_bytes = activation_reserve_bytes;
  o.runtime_overhead_bytes = runtime_overhead_bytes;
  return o;
}

model::KvAnalysis Deployment::kv_analysis() const {
  model::KvQuery query;
  query.tensor_parallel_size = tensor_parallel_size;
  query.format = kv_format;
  query.block_size = block_size;
  query.batch = 1;
  query.context = max_model_len;
  query.budget = budget_options();
  return model::analyze_kv(model, hardware_or_null(), query);
}

Deployment resolve_deployment(const config::ScenarioDeployment& given, GpuRequirement gpu) {
  if (given.model.empty()) {
    throw flag_error("--model",
                     "missing required flag; expected a shipped name (see 'kvsim "
                     "models'), a model YAML or a Hugging Face config.json");
  }
  if (gpu == GpuRequirement::kRequired && given.gpu.empty()) {
    throw flag_error("--gpu",
                     "missing required flag; expected a shipped name (see 'kvsim gpus') "
                     "or a hardware YAML");
  }
  Deployment d;
  d.model = config::load_model(given.model);
  if (!given.gpu.empty()) d.hardware = config::load_hardware(given.gpu);
  d.tensor_parallel_size = given.tensor_parallel_size;
  if (const std::string p = model::tensor_parallel_problem(d.model, d.tensor_parallel_size);
      !p.empty()) {
    throw flag_error("--tensor-parallel-size", p);
  }
  d.gpu_memory_utilization = given.gpu_memory_utilization;
  d.block_size = given.block_size;
  d.max_model_len = given.max_model_len > 0 ? given.max_model_len : d.model.max_context;
  if (d.max_model_len > d.model.max_context) {
    throw flag_error("--max-model-len", "expected at most the model's maximum context (" +
                                            std::to_string(d.model.max_context) + " tokens for " +
                                            d.model.name + "), got " +
                                            std::to_string(d.max_model_len));
  }
  d.kv_cache_dtype = given.kv_cache_dtype;
  const auto format =
      model::kv_format_from_name(d.model, given.kv_cache_dtype, given.kv_scale_group_size);
  if (!format) {  // the settings table accepted the name
    throw flag_error("--kv-cache-dtype", "expected one of " +
                                             join(model::kv_cache_dtype_names(), "|") + ", got '" +
                                             given.kv_cache_dtype + "'");
  }
  d.kv_format = *format;
  if (given.activation_reserve_gib) {
    d.activation_reserve_bytes = gib_to_bytes(*given.activation_reserve_gib);
  }
  d.runtime_overhead_bytes = gib_to_bytes(given.runtime_overhead_gib);
  return d;
}

sim::DeploymentInputs ResolvedScenario::deployment_inputs() const {
  sim::DeploymentInputs in;
  in.model = &deployment.model;
  in.hardware = deployment.hardware_or_null();
  in.tensor_parallel_size = deployment.tensor_parallel_size;
  in.kv_format = deployment.kv_format;
  in.budget = deployment.budget_options();
  in.block_size = deployment.block_size;
  in.max_model_len = deployment.max_model_len;
  in.allocator = allocator;
  in.placement = placement;
  in.watermark = watermark;
  in.cost = cost;
  return in;
}

ResolvedScenario resolve_scenario(const config::Scenario& s, const ResolveOptions& options) {
  ResolvedScenario r;
  try {
    r.deployment = resolve_deployment(s.deployment, GpuRequirement::kRequired);
    r.sim = s.sim;
    r.sim.block_size = r.deployment.block_size;
    r.sim.scheduler.max_model_len = r.deployment.max_model_len;
    sim::validate_options(r.sim);
  } catch (const Error& e) {
    throw config::relabel(e, s);
  }
  r.allocator = s.allocator;
  r.placement = s.placement;
  r.watermark = s.watermark;
  r.cost = s.cost;
  r.seed = s.seed;
  trace::WorkloadOptions w = s.workload;
  w.synthetic.seed = s.seed;
  if (options.truncate_prompts) w.transforms.max_model_len = r.deployment.max_model_len;
  r.workload = std::make_shared<const trace::Workload>(w);
  return r;
}

}  // namespace kvsim::run
