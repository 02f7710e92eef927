#include "report/run_inputs.h"

#include "model/expert_parallel.h"
#include "report/kv_report.h"
#include "report/trace_report.h"
#include "sim/options.h"

namespace kvsim::report {

ServingMemoryInputs serving_memory_inputs(const run::Deployment& d) {
  ServingMemoryInputs s;
  s.tensor_parallel_size = d.tensor_parallel_size;
  s.gpu_memory_utilization = d.gpu_memory_utilization;
  s.block_size = d.block_size;
  s.max_model_len = d.max_model_len;
  s.kv_cache_dtype = d.kv_cache_dtype;
  s.kv_format = d.kv_format;
  s.activation_reserve_bytes = d.activation_reserve_bytes;
  s.runtime_overhead_bytes = d.runtime_overhead_bytes;
  s.engine = d.engine;
  s.vllm_release = d.vllm_release;
  s.kv_cache_memory_bytes = d.kv_cache_memory_bytes;
  s.num_gpu_blocks_override = d.num_gpu_blocks_override;
  return s;
}

namespace {

Json link_json(const model::Link& link) {
  return Json{{"kind", link.internode ? "internode" : "interconnect"},
              {"bandwidth_bytes_per_s", link.bandwidth},
              {"latency_s", link.latency_s}};
}

}  // namespace

void add_parallel_links_json(Json& serving, const run::Deployment& d) {
  const std::int64_t tp = d.tensor_parallel_size;
  const std::int64_t pp = d.pipeline_parallel_size;
  const std::int64_t dp = d.data_parallel_size;
  const bool data_parallel = dp > 1 || d.enable_expert_parallel;
  if (!d.hardware || (pp == 1 && !data_parallel && tp <= d.hardware->gpus_per_node)) return;
  const model::HardwareSpec& hw = *d.hardware;
  serving["pipeline_parallel_size"] = pp;
  if (data_parallel) {
    serving["data_parallel_size"] = dp;
    serving["enable_expert_parallel"] = d.enable_expert_parallel;
    serving["data_parallel_lockstep"] = model::data_parallel_lockstep(d.model, dp);
  }
  serving["gpus_per_replica"] = d.gpus_per_replica();
  serving["gpus_per_node"] = hw.gpus_per_node;
  Json links = Json::object();
  if (tp > 1) links["tensor_parallel_allreduce"] = link_json(model::allreduce_link(hw, tp));
  if (model::data_parallel_lockstep(d.model, dp)) {
    links["moe_dispatch"] = link_json(model::allreduce_link(hw, tp * dp));
  }
  if (pp > 1) {
    Json stages = Json::array();
    for (std::int64_t s = 0; s + 1 < pp; ++s)
      stages.push_back(link_json(model::stage_link(hw, tp, s)));
    links["pipeline_stage_transfers"] = stages;
  }
  serving["links"] = links;
}

Json serving_inputs_json(const run::ResolvedScenario& s) {
  Json serving = serving_json(serving_memory_inputs(s.deployment));
  serving["allocator"] = std::string(memory::allocator_kind_name(s.allocator));
  serving["placement"] = std::string(memory::placement_name(s.placement));
  serving["watermark"] = s.watermark;
  add_sim_serving_json(serving, s.sim);
  add_parallel_links_json(serving, s.deployment);
  if (const std::int64_t pp = s.deployment.pipeline_parallel_size; pp > 1) {
    // How the stages are kept busy (sim::pipeline_virtual_engines): vLLM V1's batch queue (one
    // scheduler, up to pp batches in flight) or vLLM V0's pp virtual engines.
    serving["pipeline_engine"] =
        sim::pipeline_virtual_engines(s.sim.scheduler, pp) == 1 ? "batch_queue" : "virtual_engines";
  }
  if (s.sim.num_prefill_replicas > 0) {
    // The prefill pool; the link is what the simulator prices (resolve.h, prefill_pool).
    const run::Deployment& d = s.deployment;
    Json dis;
    dis["prefill_replicas"] = s.sim.num_prefill_replicas;
    dis["prefill_tensor_parallel_size"] = d.prefill_tensor_parallel_size;
    if (d.prefill_data_parallel_size > 1) {
      dis["prefill_data_parallel_size"] = d.prefill_data_parallel_size;
    }
    dis["decode_replicas"] = s.sim.num_replicas;
    dis["decode_tensor_parallel_size"] = d.tensor_parallel_size;
    dis["decode_pipeline_parallel_size"] = d.pipeline_parallel_size;
    if (d.data_parallel_size > 1) dis["decode_data_parallel_size"] = d.data_parallel_size;
    dis["gpus"] = d.disaggregated_gpus(s.sim.num_prefill_replicas, s.sim.num_replicas);
    dis["kv_transfer_bandwidth_bytes_per_s"] =
        d.kv_transfer_bandwidth ? Json(*d.kv_transfer_bandwidth) : Json(nullptr);
    dis["kv_transfer_latency_s"] =
        d.kv_transfer_latency_s ? Json(*d.kv_transfer_latency_s) : Json(nullptr);
    serving["disaggregation"] = dis;
  }
  if (s.cost.kind == cost::CostModelKind::kLinear) {
    // The scenario file's own keys and units (cost_model: {kind: linear, base_us: ...}).
    const cost::LinearCostParams& p = s.cost.linear;
    serving["cost_model"] = Json{{"kind", "linear"},
                                 {"base_us", p.base_ns / 1e3},
                                 {"prefill_us_per_token", p.per_prefill_token_ns / 1e3},
                                 {"decode_us_per_seq", p.per_decode_seq_ns / 1e3},
                                 {"context_us_per_token", p.per_context_token_ns / 1e3},
                                 {"swap_bytes_per_s", p.swap_bytes_per_s}};
  } else {
    serving["cost_model"] = Json{{"kind", "roofline"}};
    if (s.cost.roofline.engine_seq_overhead_s > 0) {
      serving["cost_model"]["engine_seq_overhead_us"] = s.cost.roofline.engine_seq_overhead_s * 1e6;
    }
    if (s.cost.roofline.async_scheduling) serving["cost_model"]["async_scheduling"] = true;
    if (s.cost.roofline.step_overhead_s) {
      serving["cost_model"]["step_overhead_us"] = *s.cost.roofline.step_overhead_s * 1e6;
    }
    if (s.cost.roofline.context_token_overhead_s) {
      serving["cost_model"]["context_token_overhead_us"] =
          *s.cost.roofline.context_token_overhead_s * 1e6;
    }
  }
  // Shown when not 0 (the profile's or the flag's), so reports without one keep their text.
  if (s.sim.frontend_latency_ns > 0) {
    serving["frontend_latency_us"] = static_cast<double>(s.sim.frontend_latency_ns) / 1e3;
  }
  return serving;
}

Json inputs_json(const run::ResolvedScenario& s) {
  Json in;
  in["model"] = model_json(s.deployment.model);
  in["hardware"] = hardware_json(*s.deployment.hardware);
  in["serving"] = serving_inputs_json(s);
  in["workload"] = workload_json(s.workload->resolved());
  in["seed"] = s.seed;
  return in;
}

std::string deployment_label(const run::ResolvedScenario& s) {
  const run::Deployment& d = s.deployment;
  std::string gpu = d.hardware ? d.hardware->name : "?";
  std::string out = std::to_string(d.tensor_parallel_size) + " × " + gpu + " per replica";
  if (d.pipeline_parallel_size > 1) {
    out = std::to_string(d.tensor_parallel_size) + " × " + gpu + " × " +
          std::to_string(d.pipeline_parallel_size) + " pipeline stages per replica";
  }
  if (d.data_parallel_size > 1 || d.enable_expert_parallel) {
    out = std::to_string(d.data_parallel_size) + " data-parallel ranks × " +
          std::to_string(d.tensor_parallel_size) + " × " + gpu +
          (d.enable_expert_parallel ? " (expert parallel)" : "") + " per replica";
  }
  if (s.sim.num_prefill_replicas > 0) {
    std::string decode_shape = std::to_string(d.tensor_parallel_size) + " " + gpu;
    if (d.pipeline_parallel_size > 1) {
      decode_shape += " × " + std::to_string(d.pipeline_parallel_size) + " pipeline stages";
    }
    if (d.data_parallel_size > 1) {
      decode_shape += " × " + std::to_string(d.data_parallel_size) + " data-parallel ranks";
    }
    std::string prefill_shape = std::to_string(d.prefill_tensor_parallel_size);
    if (d.prefill_data_parallel_size > 1) {
      prefill_shape +=
          " × " + std::to_string(d.prefill_data_parallel_size) + " data-parallel ranks";
    }
    out = std::to_string(s.sim.num_prefill_replicas) + " prefill × " + prefill_shape + " + " +
          std::to_string(s.sim.num_replicas) + " decode × " + decode_shape +
          (d.enable_expert_parallel ? " (disaggregated, expert parallel)" : " (disaggregated)");
  } else if (s.sim.num_replicas > 1) {
    out += ", " + std::to_string(s.sim.num_replicas) + " replicas";
  }
  out += "; " + std::string(memory::allocator_kind_name(s.allocator)) + " allocator, " +
         std::string(sim::scheduler_name(s.sim.scheduler.kind)) + " scheduler";
  return out;
}

SimReportInputs sim_report_inputs(const run::ResolvedScenario& s, const run::RunResult& run,
                                  KvDetail kv_detail) {
  Json inputs = inputs_json(s);
  SimReportInputs in;
  in.model = std::move(inputs["model"]);
  in.hardware = std::move(inputs["hardware"]);
  in.serving = std::move(inputs["serving"]);
  in.workload = std::move(inputs["workload"]);
  in.workload_reader = reader_stats_json(run.reader_stats);
  in.seed = s.seed;
  in.kv = kv_json(run.kv, s.deployment.kv_cache_dtype, kv_detail);
  in.kv["replica_capacity_bytes"] = run.replica_capacity_bytes;
  in.model_label = s.deployment.model.name;
  in.deployment_label = deployment_label(s);
  in.workload_label = run.reader_description;
  return in;
}

}  // namespace kvsim::report
