#include "run/resolve.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "common/error.h"
#include "common/format.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/warning.h"
#include "config/catalog.h"
#include "config/settings.h"
#include "model/expert_parallel.h"
#include "model/pipeline.h"
#include "model/vllm_memory.h"
#include "model/vllm_release.h"

namespace kvsim::run {
namespace {

Bytes gib_to_bytes(double gib) {
  return static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
}

Error flag_error(const std::string& flag, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, flag}, message);
}

// --quantization over the model's own (an HF quantization_config): "auto" keeps the model's; the
// same method keeps the model's details (group size, blocks, modules not converted); another
// method wins with a warning (vLLM refuses such a mismatch; kvsim costs what was asked).
void apply_quantization(model::ModelSpec& m, const std::string& given) {
  if (given.empty() || given == "auto") return;
  const auto method = model::parse_quant_method(given);
  if (!method) {  // the settings table accepted the name
    throw flag_error(
        "--quantization",
        "expected one of auto|" + join(model::quant_method_names(), "|") + ", got '" + given + "'");
  }
  if (*method == m.quantization.method) return;
  if (m.quantization.enabled()) {
    warn(ErrorLocation{"", 0, 0, "--quantization"},
         "the model's config says " + model::quantization_summary(m.quantization) +
             "; costing it as " + std::string(model::quant_method_name(*method)) +
             " as asked (vLLM would refuse the mismatch)");
  }
  m.quantization = model::default_quantization(*method);
  m.quantization.origin = "--quantization";
  m.moe.has_expert_dtype = false;  // gpt-oss's MXFP4 experts follow the method asked for
}

// The GPU with the deployment's overrides of its nodes and the link between them.
model::HardwareSpec load_deployment_hardware(const config::ScenarioDeployment& given) {
  model::HardwareSpec hw = config::load_hardware(given.gpu);
  if (given.gpus_per_node) hw.gpus_per_node = *given.gpus_per_node;
  if (given.internode_bandwidth_gb_s)
    hw.internode_bandwidth = *given.internode_bandwidth_gb_s * 1e9;
  if (given.internode_latency_us) hw.internode_latency_s = *given.internode_latency_us * 1e-6;
  return hw;
}

// --mxfp4-moe-activation: the MXFP4 experts' kernel takes MXFP8 activations (vLLM runs that
// kernel on Blackwell only); a model without MXFP4 experts is told it changes nothing.
void apply_mxfp4_moe_activation(model::ModelSpec& m, const model::HardwareSpec* hw,
                                const std::string& given) {
  if (given.empty() || given == "bf16") return;
  if (given != "mxfp8") {  // the settings table accepted the name
    throw flag_error("--mxfp4-moe-activation", "expected bf16 or mxfp8, got '" + given + "'");
  }
  if (!model::has_mxfp4_experts(m)) {
    warn(ErrorLocation{"", 0, 0, "--mxfp4-moe-activation"},
         m.name + " has no MXFP4 experts; mxfp8 changes nothing");
    return;
  }
  if (hw != nullptr && hw->compute_capability > 0 && hw->compute_capability < 10.0) {
    throw flag_error("--mxfp4-moe-activation",
                     "mxfp8 needs a Blackwell GPU (compute capability 10 or above: vLLM's MXFP4 "
                     "x MXFP8 MoE kernel); " +
                         hw->name + " has " + fixed(hw->compute_capability, 1));
  }
  m.moe.mxfp4_activation_bits = 8;
}

// The engine and what only V1 accepts: the release modelled and vLLM's two overrides.
void resolve_engine(const config::ScenarioDeployment& given, Deployment& d) {
  d.engine = given.engine == "v0" ? model::MemoryEngine::kV0 : model::MemoryEngine::kVllmV1;
  const bool v0 = d.engine == model::MemoryEngine::kV0;
  if (!given.vllm_version.empty()) {
    if (v0) throw flag_error("--vllm-version", "needs --engine v1 (V0 has one accounting)");
    const auto release = model::parse_vllm_release(given.vllm_version);
    if (!release) {
      throw flag_error("--vllm-version", "expected a vLLM release such as 0.10.1 or 0.14, got '" +
                                             given.vllm_version + "'");
    }
    d.vllm_release = model::nearest_modelled_vllm_release(*release);
    if (const std::string p = model::vllm_release_problem(*release); !p.empty()) {
      warn(ErrorLocation{"", 0, 0, "--vllm-version"},
           p + "; using " + d.vllm_release.text() + "'s (a release outside that range may take " +
               "memory differently)");
    }
  }
  if (given.kv_cache_memory_bytes) {
    if (v0) throw flag_error("--kv-cache-memory-bytes", "needs --engine v1");
    d.kv_cache_memory_bytes = static_cast<Bytes>(*given.kv_cache_memory_bytes);
  }
  if (given.num_gpu_blocks_override) {
    if (v0) throw flag_error("--num-gpu-blocks-override", "needs --engine v1");
    d.num_gpu_blocks_override = given.num_gpu_blocks_override;
  }
}

}  // namespace

model::MemoryBudgetOptions Deployment::budget_options(std::int64_t max_num_batched_tokens,
                                                      std::int64_t max_num_seqs) const {
  model::MemoryBudgetOptions o;
  o.gpu_memory_utilization = gpu_memory_utilization;
  o.activation_reserve_bytes = activation_reserve_bytes;
  o.runtime_overhead_bytes = runtime_overhead_bytes;
  o.engine = engine;
  o.max_num_seqs = max_num_seqs;  // the profile's sampler rows, under either engine
  if (engine == model::MemoryEngine::kVllmV1) {
    o.runtime_overhead_given = runtime_overhead_given;
    o.max_num_batched_tokens = max_num_batched_tokens;
    o.vllm_release = vllm_release;
    o.kv_cache_memory_bytes = kv_cache_memory_bytes;
    if (num_gpu_blocks_override && hardware) {
      const model::VllmKvCacheLayout layout = model::vllm_kv_cache_layout(
          model, kv_format, tensor_parallel_size, 0, block_size, max_model_len,
          std::max<std::int64_t>(1, max_num_batched_tokens));
      o.kv_cache_bytes_override = static_cast<Bytes>(*num_gpu_blocks_override) * layout.block_bytes;
    }
  }
  return o;
}

std::int64_t Deployment::engine_block_size() const {
  if (engine != model::MemoryEngine::kVllmV1) return block_size;
  return model::vllm_hybrid_block_size(model, kv_format, tensor_parallel_size, block_size);
}

model::KvAnalysis Deployment::kv_analysis(std::int64_t max_num_batched_tokens,
                                          std::int64_t max_num_seqs) const {
  model::KvQuery query;
  query.tensor_parallel_size = tensor_parallel_size;
  query.format = kv_format;
  query.block_size = block_size;
  query.batch = 1;
  query.context = max_model_len;
  query.budget = budget_options(max_num_batched_tokens, max_num_seqs);
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
  apply_quantization(d.model, given.quantization);
  if (!given.gpu.empty()) d.hardware = load_deployment_hardware(given);
  apply_mxfp4_moe_activation(d.model, d.hardware ? &*d.hardware : nullptr,
                             given.mxfp4_moe_activation);
  d.tensor_parallel_size = given.tensor_parallel_size;
  if (const std::string p = model::tensor_parallel_problem(d.model, d.tensor_parallel_size);
      !p.empty()) {
    throw flag_error("--tensor-parallel-size", p);
  }
  d.pipeline_parallel_size = given.pipeline_parallel_size;
  if (const std::string p = model::pipeline_parallel_problem(d.model, d.pipeline_parallel_size);
      !p.empty()) {
    throw flag_error("--pipeline-parallel-size", p);
  }
  d.data_parallel_size = given.data_parallel_size;
  d.enable_expert_parallel = given.enable_expert_parallel;
  if (const std::string p = model::expert_parallel_problem(
          d.model, d.tensor_parallel_size, d.data_parallel_size, d.enable_expert_parallel);
      !p.empty()) {
    throw flag_error(d.data_parallel_size < 1 || !d.enable_expert_parallel
                         ? "--data-parallel-size"
                         : "--enable-expert-parallel",
                     p);
  }
  const model::ModelSpec whole = d.model;  // the prefill instances shard it their own way
  d.model = model::shard_experts(whole, d.tensor_parallel_size, d.data_parallel_size,
                                 d.enable_expert_parallel);
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
  d.runtime_overhead_given = given.runtime_overhead_given;
  resolve_engine(given, d);
  d.prefill_tensor_parallel_size = given.prefill_tensor_parallel_size > 0
                                       ? given.prefill_tensor_parallel_size
                                       : d.tensor_parallel_size;
  d.prefill_data_parallel_size = given.prefill_data_parallel_size;
  if (const std::string p = model::tensor_parallel_problem(whole, d.prefill_tensor_parallel_size);
      !p.empty()) {
    throw flag_error("--prefill-tensor-parallel-size", p);
  }
  if (const std::string p =
          model::expert_parallel_problem(whole, d.prefill_tensor_parallel_size,
                                         d.prefill_data_parallel_size, d.enable_expert_parallel);
      !p.empty()) {
    throw flag_error(d.prefill_data_parallel_size > 1 ? "--prefill-data-parallel-size"
                                                      : "--prefill-tensor-parallel-size",
                     p);
  }
  d.prefill_model = model::shard_experts(whole, d.prefill_tensor_parallel_size,
                                         d.prefill_data_parallel_size, d.enable_expert_parallel);
  if (given.kv_transfer_bandwidth_gb_s) {
    d.kv_transfer_bandwidth = *given.kv_transfer_bandwidth_gb_s * 1e9;
  }
  if (given.kv_transfer_latency_us) d.kv_transfer_latency_s = *given.kv_transfer_latency_us * 1e-6;
  return d;
}

sim::DeploymentInputs ResolvedScenario::deployment_inputs() const {
  sim::DeploymentInputs in;
  in.model = &deployment.model;
  in.hardware = deployment.hardware_or_null();
  in.tensor_parallel_size = deployment.tensor_parallel_size;
  in.pipeline_parallel_size = deployment.pipeline_parallel_size;
  in.data_parallel_size = deployment.data_parallel_size;
  in.kv_format = deployment.kv_format;
  in.budget =
      deployment.budget_options(sim.scheduler.max_num_batched_tokens, sim.scheduler.max_num_seqs);
  in.block_size = deployment.engine_block_size();
  in.max_model_len = deployment.max_model_len;
  in.allocator = allocator;
  in.placement = placement;
  in.watermark = watermark;
  in.cost = cost;
  return in;
}

namespace {

// The defaults that depend on the engine and the scheduler, for the settings the scenario did not
// give: the scheduler (vllm-v1 with engine v1, vllm with v0); for vllm-v1, vllm serve's
// max_num_seqs and max_num_batched_tokens for the GPU, prefix caching on, no watermark and
// CUDA graphs up to vLLM's default size (none with enforce_eager).
void apply_engine_defaults(const config::Scenario& s, const Deployment& d, sim::SimOptions& sim,
                           double& watermark) {
  const auto given = [&](std::string_view path) { return s.origins.contains(path); };
  sim::SchedulerOptions& so = sim.scheduler;
  if (!given("serving.scheduler")) {
    so.kind = d.engine == model::MemoryEngine::kVllmV1 ? sim::SchedulerKind::kVllmV1
                                                       : sim::SchedulerKind::kVllm;
  }
  if (so.kind != sim::SchedulerKind::kVllmV1) {
    if (given("serving.cudagraph_mode")) {
      throw flag_error("--cudagraph-mode",
                       "CUDA-graph modes are vLLM V1's (--scheduler vllm-v1); this run's scheduler "
                       "is " +
                           std::string(sim::scheduler_name(so.kind)));
    }
    so.cuda_graph_max_size = 0;  // V0-era engines: not modelled
    so.cuda_graph_mode = sim::CudaGraphMode::kNotModelled;
    return;
  }
  const model::VllmSchedulerDefaults serve =
      d.hardware ? model::vllm_v1_serve_defaults(*d.hardware) : model::VllmSchedulerDefaults{};
  if (!given("serving.max_num_seqs")) so.max_num_seqs = serve.max_num_seqs;
  if (so.max_num_batched_tokens == 0) so.max_num_batched_tokens = serve.max_num_batched_tokens;
  // vLLM V1 (0.10) turns prefix caching off for a model with Mamba or linear-attention state.
  const bool stateful = model::ssm_state_bytes_per_sequence(d.model, 1) > 0;
  if (stateful && given("serving.enable_prefix_caching") && sim.enable_prefix_caching) {
    throw flag_error("--enable-prefix-caching",
                     "prefix caching of a model with a per-sequence state (Mamba or linear-"
                     "attention layers: " +
                         d.model.name +
                         ") is not modelled; vLLM 0.10 turns it off for such models");
  }
  if (!given("serving.enable_prefix_caching")) sim.enable_prefix_caching = !stateful;
  if (!given("serving.watermark")) watermark = 0;
  if (s.enforce_eager) {
    if (given("serving.cudagraph_mode") && so.cuda_graph_mode != sim::CudaGraphMode::kNone) {
      throw flag_error("--cudagraph-mode", "--enforce-eager captures no graph; drop one of them");
    }
    so.cuda_graph_max_size = 0;
    so.cuda_graph_mode = sim::CudaGraphMode::kNone;
  } else if (!given("serving.cuda_graph_sizes")) {
    so.cuda_graph_max_size = sim::default_cuda_graph_max_size(so.max_num_seqs);
  }
  if (!given("serving.cudagraph_mode") && !s.enforce_eager) {
    so.cuda_graph_mode = model::vllm_full_decode_graphs_default(d.vllm_release)
                             ? sim::CudaGraphMode::kFullAndPiecewise
                             : sim::CudaGraphMode::kPiecewise;
  }
}

}  // namespace

std::optional<Error> ResolvedScenario::not_modelled() const {
  const Deployment& d = deployment;
  if (d.data_parallel_size == 1 || d.pipeline_parallel_size == 1) return std::nullopt;
  if (model::data_parallel_lockstep(d.model, d.data_parallel_size)) {
    return flag_error("--data-parallel-size",
                      "data parallelism with pipeline parallelism is not modelled for an MoE "
                      "model (its ranks step in lockstep); use --pipeline-parallel-size 1 or "
                      "--data-parallel-size 1");
  }
  // Rank r holds GPUs [r × TP × PP, (r + 1) × TP × PP): every rank's stages meet at the links
  // rank 0's do (the pipeline is priced once) when a rank fills whole nodes or a node holds
  // whole ranks.
  const model::HardwareSpec* hw = d.hardware_or_null();
  const std::int64_t rank = d.tensor_parallel_size * d.pipeline_parallel_size;
  const std::int64_t per_node = hw == nullptr ? rank : std::max<std::int64_t>(hw->gpus_per_node, 1);
  if (rank % per_node != 0 && per_node % rank != 0) {
    return flag_error("--data-parallel-size",
                      "data-parallel ranks of TP × PP = " + std::to_string(rank) +
                          " GPUs on nodes of " + std::to_string(per_node) +
                          " cross nodes at different stage boundaries, which is not modelled; "
                          "choose TP × PP dividing, or a multiple of, the GPUs per node");
  }
  return std::nullopt;
}

sim::DeploymentInputs ResolvedScenario::prefill_deployment_inputs() const {
  sim::DeploymentInputs in = deployment_inputs();
  in.model = &deployment.prefill_model;
  in.tensor_parallel_size = deployment.prefill_tensor_parallel_size;
  in.pipeline_parallel_size = 1;  // --pipeline-parallel-size stages the decode instances only
  in.data_parallel_size = deployment.prefill_data_parallel_size;
  return in;
}

sim::SimSetup::PrefillPool ResolvedScenario::prefill_pool(
    const sim::BuiltDeployment& prefill) const {
  const Deployment& d = deployment;
  const model::HardwareSpec& hw = *d.hardware;
  const std::int64_t gpus = d.disaggregated_gpus(sim.num_prefill_replicas, sim.num_replicas);
  model::Link link =
      gpus <= hw.gpus_per_node ? model::intranode_link(hw) : model::internode_link(hw);
  if (d.kv_transfer_bandwidth) link.bandwidth = *d.kv_transfer_bandwidth;
  if (d.kv_transfer_latency_s) link.latency_s = *d.kv_transfer_latency_s;
  if (!(link.bandwidth > 0)) {
    throw flag_error("--kv-transfer-bandwidth-gb-s",
                     std::string("the prefill and decode instances (") + std::to_string(gpus) +
                         " GPUs) cross the " + link.name + " link, which " + hw.name +
                         " does not give (" + link.field + "): give the KV link's bandwidth");
  }
  // Each GPU of the prefill rank that computed the prompt sends its heads' KV, each GPU of the
  // receiving decode rank (a stage's TP rank) receives its layers' and heads' share: as many
  // transfers run at once as the smaller side has GPUs.
  const std::int64_t streams =
      std::min(d.prefill_tensor_parallel_size, d.tensor_parallel_size * d.pipeline_parallel_size);
  sim::SimSetup::PrefillPool pool;
  pool.num_replicas = sim.num_prefill_replicas;
  pool.cost_model = &prefill.cost_model();
  const sim::SimSetup setup = prefill.setup(sim);
  pool.make_allocator = setup.make_allocator;
  pool.data_parallel = setup.data_parallel;
  pool.bytes_per_token = model::kv_bytes_per_token(d.model, d.kv_format, 1);
  pool.bandwidth = link.bandwidth * static_cast<double>(streams);
  pool.latency_s = link.latency_s;
  return pool;
}

ResolvedScenario resolve_scenario(const config::Scenario& s, const ResolveOptions& options) {
  ResolvedScenario r;
  r.watermark = s.watermark;
  try {
    r.deployment = resolve_deployment(s.deployment, GpuRequirement::kRequired);
    r.sim = s.sim;
    r.sim.block_size = r.deployment.engine_block_size();
    r.sim.scheduler.max_model_len = r.deployment.max_model_len;
    apply_engine_defaults(s, r.deployment, r.sim, r.watermark);
    sim::validate_options(r.sim);
  } catch (const Error& e) {
    throw config::relabel(e, s);
  }
  r.allocator = s.allocator;
  r.placement = s.placement;
  r.cost = s.cost;
  // The engine's host-overhead settings act on the roofline model only.
  const auto refuse = [&s](const char* flag, const std::string& message) {
    throw config::relabel(flag_error(flag, message), s);
  };
  const bool linear = r.cost.kind != cost::CostModelKind::kRoofline;
  // Not given: as the modelled release's `vllm serve` does it (on from 0.14, one stage only),
  // where the scheduler and the cost model can express it.
  const bool async_scheduling =
      s.origins.contains("serving.async_scheduling")
          ? s.async_scheduling
          : r.sim.scheduler.kind == sim::SchedulerKind::kVllmV1 && !linear &&
                model::vllm_async_scheduling_default(r.deployment.vllm_release,
                                                     r.deployment.pipeline_parallel_size);
  if (async_scheduling) {
    if (r.sim.scheduler.kind != sim::SchedulerKind::kVllmV1) {
      refuse("--async-scheduling",
             "async scheduling is vLLM V1's: it needs the vllm-v1 scheduler (--engine v1)");
    }
    if (linear) {
      refuse("--async-scheduling",
             "async scheduling overlaps the roofline cost model's host overhead; the linear cost "
             "model has none");
    }
    if (r.deployment.pipeline_parallel_size > 1) {
      refuse("--async-scheduling",
             "async scheduling with pipeline parallelism is not modelled (the engine's batch "
             "queue steps as vLLM's without it; vLLM leaves it off with pipeline stages)");
    }
    r.cost.roofline.async_scheduling = true;
    r.sim.scheduler.async_scheduling = true;
  }
  for (const auto& [flag, value, target] :
       {std::tuple{"--step-overhead-us", s.step_overhead_us, &r.cost.roofline.step_overhead_s},
        std::tuple{"--context-token-overhead-us", s.context_token_overhead_us,
                   &r.cost.roofline.context_token_overhead_s}}) {
    if (!value) continue;
    if (linear) {
      refuse(flag,
             "the host overhead is the roofline cost model's; the linear cost model has its own "
             "coefficients");
    }
    *target = *value * 1e-6;
  }
  // The front end's latency: the flag's, else the GPU profile's where a run fitted it, else the
  // engine's (vLLM V0's with the roofline model; 0 in datasheet profiles and V1).
  const model::CostProfile& profile = r.deployment.hardware->cost;
  const bool profile_fitted_frontend =
      profile.frontend_latency_s != 0 ||
      std::ranges::find(profile.provenance.fitted_overheads, "frontend_latency_us") !=
          profile.provenance.fitted_overheads.end();
  const bool v0 = r.deployment.engine == model::MemoryEngine::kV0;
  if (s.frontend_latency_us) {
    r.sim.frontend_latency_ns = seconds_to_ns(*s.frontend_latency_us * 1e-6);
  } else if (profile_fitted_frontend) {
    r.sim.frontend_latency_ns = seconds_to_ns(profile.frontend_latency_s);
  } else if (v0 && !linear) {
    r.sim.frontend_latency_ns = sim::kVllmV0FrontendLatencyNs;
  }
  if (v0) r.cost.roofline.engine_seq_overhead_s = cost::kVllmV0SeqOverheadS;
  r.seed = s.seed;
  trace::WorkloadOptions w = s.workload;
  w.synthetic.seed = s.seed;
  r.sim.max_concurrency = w.max_concurrency;  // the client's loop, which the simulator closes
  r.sim.serial_sessions = w.serial_sessions;
  if (options.truncate_prompts) w.transforms.max_model_len = r.deployment.max_model_len;
  r.workload = std::make_shared<const trace::Workload>(w);
  return r;
}

}  // namespace kvsim::run
