#include "cli/serving_flags.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "common/error.h"
#include "common/format.h"
#include "common/strings.h"
#include "model/kv_math.h"
#include "report/kv_report.h"
#include "report/spec_json.h"
#include "report/trace_report.h"

namespace kvsim::cli {
namespace {

template <typename Enum, typename Parse>
Enum choice(const std::string& flag, const std::string& value, Parse parse,
            const std::vector<std::string>& names) {
  const auto parsed = parse(value);
  if (!parsed) {
    throw flag_error(flag, "expected one of " + join(names, "|") + ", got '" + value + "'" +
                               did_you_mean(value, names));
  }
  return *parsed;
}

// One line on stderr, rewritten in place, at most ten times a second; only on a terminal.
class ProgressLine final : public sim::SimObserver {
 public:
  explicit ProgressLine(std::string label)
      : label_(std::move(label)),
        enabled_(::isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}
  ~ProgressLine() override {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }
  void on_progress(const sim::SimProgress& p) override {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const double wall = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r\033[K%s simulated %s, %s requests done, %s live, %s req/s",
                 label_.c_str(), human_seconds(ns_to_seconds(p.now)).c_str(),
                 with_commas(p.ended).c_str(), with_commas(p.live).c_str(),
                 wall > 0 ? with_commas(static_cast<std::int64_t>(p.ended / wall)).c_str() : "-");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

class FanOut final : public sim::SimObserver {
 public:
  std::vector<sim::SimObserver*> observers;
  void on_request_end(const sim::Request& r) override {
    for (auto* o : observers) o->on_request_end(r);
  }
  void on_progress(const sim::SimProgress& p) override {
    for (auto* o : observers) o->on_progress(p);
  }
};

std::string deployment_label(const Deployment& d, const config::Scenario& s) {
  std::string gpu = d.hardware ? d.hardware->name : "?";
  std::string out = std::to_string(d.tensor_parallel_size) + " × " + gpu + " per replica";
  if (s.sim.num_replicas > 1) out += ", " + std::to_string(s.sim.num_replicas) + " replicas";
  out += "; " + std::string(memory::allocator_kind_name(s.allocator)) + " allocator, " +
         std::string(sim::scheduler_name(s.sim.scheduler.kind)) + " scheduler";
  return out;
}

}  // namespace

bool flag_given(const CLI::App* command, const std::string& name) {
  const CLI::Option* option = command->get_option_no_throw(name);
  return option != nullptr && option->count() > 0;
}

void add_serving_flags(CLI::App* c, ServingFlags& f) {
  const std::string list = f.lists ? " (comma-separated list: one run each)" : "";
  c->add_option("--replicas", f.replicas, "Copies of the deployment behind the router (default 1)")
      ->type_name("INT");
  c->add_option(
       "--router", f.router,
       "How arrivals pick a replica: " + join(sim::router_names(), "|") + " (default round-robin)")
      ->type_name("NAME");
  c->add_option("--scheduler", f.scheduler,
                "Batching policy: " + join(sim::scheduler_names(), "|") + " (default vllm)" + list)
      ->type_name("NAME");
  c->add_option("--max-num-seqs", f.max_num_seqs,
                "Most sequences running per replica (default 256)")
      ->type_name("INT");
  c->add_option("--max-num-batched-tokens", f.max_num_batched_tokens,
                "Most tokens per step (default: vllm max(max-model-len, 2048), chunked-prefill "
                "2048, static unlimited)")
      ->type_name("INT");
  c->add_option("--long-prefill-token-threshold", f.long_prefill_token_threshold,
                "chunked-prefill: largest prefill chunk per request per step (default 0: none)")
      ->type_name("INT");
  c->add_option(
       "--allocator", f.allocator,
       "KV allocator: " + join(memory::allocator_kind_names(), "|") + " (default paged)" + list)
      ->type_name("NAME");
  c->add_option(
       "--placement", f.placement,
       "Contiguous extent placement: " + join(memory::placement_names(), "|") + " (default buddy)")
      ->type_name("NAME");
  c->add_option("--watermark", f.watermark,
                "Paged: fraction of blocks kept free at admission (default 0.01)")
      ->type_name("FRACTION");
  c->add_option(
       "--preemption", f.preemption,
       "When a decode cannot grow: " + join(sim::preemption_names(), "|") + " (default recompute)")
      ->type_name("NAME");
  c->add_option("--swap-space", f.swap_space_gib, "CPU swap space per GPU, GiB (default 4)");
  c->add_flag("--enable-prefix-caching", f.enable_prefix_caching,
              "Share cached prompt blocks (the workload needs prefix hashes)")
      ->type_name("GIB");
  c->add_option("--seed", f.seed, "Seed of synthetic workloads (default 0)")->type_name("INT");
  c->add_option("--slo-ttft", f.slo_ttft_ms, "Time-to-first-token SLO, ms")->type_name("MS");
  c->add_option("--slo-tpot", f.slo_tpot_ms, "Time-per-output-token SLO, ms")->type_name("MS");
  c->add_option("--slo-e2e", f.slo_e2e_ms, "End-to-end latency SLO, ms")->type_name("MS");
  c->add_option("--slo-percentile", f.slo_percentile,
                "Percentile at which the SLOs must hold (default 99)")
      ->type_name("P");
  c->add_option("--time-limit", f.time_limit_s,
                "Stop after this many simulated seconds (default: run to the end)")
      ->type_name("SECONDS");
  c->add_option("--cost-model", f.cost_model,
                "Step time: roofline (default) or "
                "linear:BASE_US:PREFILL_US_PER_TOKEN:DECODE_US_PER_SEQ[:CONTEXT_US_PER_TOKEN]")
      ->type_name("SPEC");
  c->add_option("--timeline", f.timeline_path, "Write a downsampled timeline CSV to this file")
      ->type_name("FILE.csv");
  c->add_option("--timeline-points", f.timeline_points,
                "Most points in the timeline (default 1000)")
      ->type_name("INT");
  c->add_option("--requests", f.requests_path, "Write one CSV row per request to this file")
      ->type_name("FILE.csv");
}

void apply_serving_flags(const CLI::App* c, const ServingFlags& f, config::Scenario& s) {
  sim::SimOptions& o = s.sim;
  auto given = [&](const char* name) { return flag_given(c, name); };
  if (given("--replicas")) o.num_replicas = int_at_least("--replicas", f.replicas, 1);
  if (given("--router")) {
    o.router =
        choice<sim::RouterKind>("--router", f.router, sim::parse_router, sim::router_names());
  }
  if (!f.lists && given("--scheduler")) {
    o.scheduler.kind = choice<sim::SchedulerKind>("--scheduler", f.scheduler, sim::parse_scheduler,
                                                  sim::scheduler_names());
  }
  if (given("--max-num-seqs")) {
    o.scheduler.max_num_seqs = int_at_least("--max-num-seqs", f.max_num_seqs, 1);
  }
  if (given("--max-num-batched-tokens")) {
    o.scheduler.max_num_batched_tokens =
        int_at_least("--max-num-batched-tokens", f.max_num_batched_tokens, 1);
  }
  if (given("--long-prefill-token-threshold")) {
    o.scheduler.long_prefill_token_threshold =
        int_at_least("--long-prefill-token-threshold", f.long_prefill_token_threshold, 0);
  }
  if (!f.lists && given("--allocator")) {
    s.allocator = choice<memory::AllocatorKind>(
        "--allocator", f.allocator, memory::parse_allocator_kind, memory::allocator_kind_names());
  }
  if (given("--placement")) {
    s.placement = choice<memory::Placement>("--placement", f.placement, memory::parse_placement,
                                            memory::placement_names());
  }
  if (given("--watermark")) {
    s.watermark = number_in("--watermark", f.watermark, 0.0, 1.0, false, "a fraction in [0, 1)");
    if (s.watermark >= 1.0) {
      throw flag_error("--watermark", "expected a fraction in [0, 1), got '" + f.watermark + "'");
    }
  }
  if (given("--preemption")) {
    o.scheduler.preemption = choice<sim::PreemptionMode>(
        "--preemption", f.preemption, sim::parse_preemption, sim::preemption_names());
  }
  if (given("--swap-space")) {
    const double gib = number_in("--swap-space", f.swap_space_gib, 0.0, 1e6, false,
                                 "a non-negative number of GiB");
    o.scheduler.swap_space_bytes =
        static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
  }
  if (given("--enable-prefix-caching")) o.enable_prefix_caching = f.enable_prefix_caching;
  if (given("--seed")) s.seed = static_cast<std::uint64_t>(int_at_least("--seed", f.seed, 0));
  if (given("--slo-ttft")) {
    o.slo.ttft_ns = std::llround(
        number_in("--slo-ttft", f.slo_ttft_ms, 0.0, 1e9, true, "a positive number of ms") * 1e6);
  }
  if (given("--slo-tpot")) {
    o.slo.tpot_ns = std::llround(
        number_in("--slo-tpot", f.slo_tpot_ms, 0.0, 1e9, true, "a positive number of ms") * 1e6);
  }
  if (given("--slo-e2e")) {
    o.slo.e2e_ns = std::llround(
        number_in("--slo-e2e", f.slo_e2e_ms, 0.0, 1e9, true, "a positive number of ms") * 1e6);
  }
  if (given("--slo-percentile")) {
    o.slo.percentile = number_in("--slo-percentile", f.slo_percentile, 0.0, 100.0, true,
                                 "a percentile in (0, 100]");
  }
  if (given("--time-limit")) {
    o.time_limit_ns = seconds_to_ns(
        number_in("--time-limit", f.time_limit_s, 0.0, 1e9, true, "a positive number of seconds"));
  }
  if (given("--cost-model")) {
    s.cost = config::parse_cost_model_spec(f.cost_model, ErrorLocation{"", 0, 0, "--cost-model"});
  }
  if (given("--timeline-points")) {
    o.timeline_points = int_at_least("--timeline-points", f.timeline_points, 2);
  } else if (!f.timeline_path.empty() && o.timeline_points == 0) {
    o.timeline_points = 1000;
  }
}

void add_sim_command_flags(CLI::App* command, SimCommandFlags& flags, bool lists) {
  flags.command = command;
  flags.serving.lists = lists;
  command->add_option("--config", flags.config,
                      "Scenario YAML (configs/scenarios/); flags given override its fields");
  add_deployment_flags(command, flags.deployment);
  add_serving_flags(command, flags.serving);
  add_workload_flags(command, flags.workload, WorkloadFlagScope::kServing);
  add_output_flags(command, flags.output);
}

DeploymentFlags deployment_flags_from(const config::ScenarioDeployment& sd) {
  DeploymentFlags d;
  d.model = sd.model;
  d.gpu = sd.gpu;
  d.tensor_parallel_size = sd.tensor_parallel_size;
  d.gpu_memory_utilization = sd.gpu_memory_utilization;
  d.block_size = sd.block_size;
  d.max_model_len = sd.max_model_len;
  d.kv_cache_dtype = sd.kv_cache_dtype;
  d.kv_scale_group_size = sd.kv_scale_group_size;
  d.activation_reserve_gib = sd.activation_reserve_gib;
  d.runtime_overhead_gib = sd.runtime_overhead_gib;
  // A scenario that sets runtime_overhead_gib to anything but the default replaces V1's
  // non-torch estimate (the scenario struct does not record whether the key was present).
  d.runtime_overhead_given = sd.runtime_overhead_gib != 2.0;
  d.engine = sd.engine;
  return d;
}

void finish_run(PreparedRun& run, const DeploymentFlags& d, const WorkloadFlags& workload_flags) {
  config::Scenario& s = run.scenario;
  run.deployment = resolve_deployment(d, GpuRequirement::kRequired);
  config::ScenarioDeployment& sd = s.deployment;
  sd.model = d.model;
  sd.gpu = d.gpu;
  sd.tensor_parallel_size = run.deployment.tensor_parallel_size;
  sd.gpu_memory_utilization = run.deployment.gpu_memory_utilization;
  sd.block_size = run.deployment.block_size;
  sd.max_model_len = run.deployment.max_model_len;
  sd.kv_cache_dtype = run.deployment.kv_cache_dtype;
  sd.kv_scale_group_size = d.kv_scale_group_size;
  sd.activation_reserve_gib = d.activation_reserve_gib;
  sd.runtime_overhead_gib = d.runtime_overhead_gib;
  sd.engine = d.engine;
  s.sim.block_size = run.deployment.block_size;
  s.sim.scheduler.max_model_len = run.deployment.max_model_len;
  sim::validate_options(s.sim);

  // Workload: the scenario's section, then the workload flags given.
  trace::WorkloadOptions w =
      workload_options_from_flags(workload_flags, s.workload, s.has_workload);
  w.synthetic.seed = s.seed;
  if (workload_flags.truncate_prompts) w.transforms.max_model_len = run.deployment.max_model_len;
  s.workload = w;
  s.has_workload = true;
  run.workload = std::make_shared<const trace::Workload>(w);
}

PreparedRun prepare_run(const SimCommandFlags& flags) {
  const CLI::App* c = flags.command;
  PreparedRun run;
  config::Scenario& s = run.scenario;
  if (!flags.config.empty()) s = config::load_scenario(flags.config);

  // Deployment: the scenario's values, then the flags given.
  DeploymentFlags d = deployment_flags_from(s.deployment);
  const DeploymentFlags& f = flags.deployment;
  if (flag_given(c, "--model")) d.model = f.model;
  if (flag_given(c, "--gpu")) d.gpu = f.gpu;
  if (flag_given(c, "--tensor-parallel-size")) d.tensor_parallel_size = f.tensor_parallel_size;
  if (flag_given(c, "--gpu-memory-utilization")) {
    d.gpu_memory_utilization = f.gpu_memory_utilization;
  }
  if (flag_given(c, "--block-size")) d.block_size = f.block_size;
  if (flag_given(c, "--max-model-len")) d.max_model_len = f.max_model_len;
  if (flag_given(c, "--kv-cache-dtype")) d.kv_cache_dtype = f.kv_cache_dtype;
  if (flag_given(c, "--kv-scale-group-size")) d.kv_scale_group_size = f.kv_scale_group_size;
  if (flag_given(c, "--activation-reserve-gib"))
    d.activation_reserve_gib = f.activation_reserve_gib;
  if (flag_given(c, "--runtime-overhead-gib")) {
    d.runtime_overhead_gib = f.runtime_overhead_gib;
    d.runtime_overhead_given = true;
  }
  if (flag_given(c, "--engine")) d.engine = f.engine;
  if (flag_given(c, "--kv-cache-memory-bytes")) d.kv_cache_memory_bytes = f.kv_cache_memory_bytes;
  if (flag_given(c, "--num-gpu-blocks-override")) {
    d.num_gpu_blocks_override = f.num_gpu_blocks_override;
  }
  apply_serving_flags(c, flags.serving, s);
  if (flags.workload_override) {
    s.workload = *flags.workload_override;
    s.has_workload = true;
  }

  finish_run(run, d, flags.workload);
  return run;
}

sim::DeploymentInputs deployment_inputs(const PreparedRun& run, const config::Scenario& s) {
  const Deployment& d = run.deployment;
  sim::DeploymentInputs in;
  in.model = &d.model;
  in.hardware = d.hardware_or_null();
  in.tensor_parallel_size = d.tensor_parallel_size;
  in.kv_format = d.kv_format;
  in.budget =
      d.budget_options(s.sim.scheduler.max_num_batched_tokens, s.sim.scheduler.max_num_seqs);
  in.block_size = d.block_size;
  in.max_model_len = d.max_model_len;
  in.allocator = s.allocator;
  in.placement = s.placement;
  in.watermark = s.watermark;
  in.cost = s.cost;
  return in;
}

report::Json serving_inputs_json(const Deployment& d, const config::Scenario& s) {
  report::Json serving = report::serving_json(d.serving_inputs());
  serving["allocator"] = std::string(memory::allocator_kind_name(s.allocator));
  serving["placement"] = std::string(memory::placement_name(s.placement));
  serving["watermark"] = s.watermark;
  report::add_sim_serving_json(serving, s.sim);
  if (s.cost.kind == cost::CostModelKind::kLinear) {
    // The scenario file's own keys and units (cost_model: {kind: linear, base_us: ...}).
    const cost::LinearCostParams& p = s.cost.linear;
    serving["cost_model"] = report::Json{{"kind", "linear"},
                                         {"base_us", p.base_ns / 1e3},
                                         {"prefill_us_per_token", p.per_prefill_token_ns / 1e3},
                                         {"decode_us_per_seq", p.per_decode_seq_ns / 1e3},
                                         {"context_us_per_token", p.per_context_token_ns / 1e3},
                                         {"swap_bytes_per_s", p.swap_bytes_per_s}};
  } else {
    serving["cost_model"] = report::Json{{"kind", "roofline"}};
  }
  return serving;
}

report::SimReportInputs report_inputs(const PreparedRun& run, const config::Scenario& s,
                                      const sim::BuiltDeployment& built,
                                      const trace::ReaderStats& reader_stats,
                                      const std::string& reader_description) {
  const Deployment& d = run.deployment;
  report::SimReportInputs in;
  in.model = report::model_json(d.model);
  in.hardware = report::hardware_json(*d.hardware);
  in.serving = serving_inputs_json(d, s);
  in.workload = report::workload_json(run.workload->resolved());
  in.workload_reader = report::reader_stats_json(reader_stats);
  in.seed = s.seed;
  model::KvQuery query;
  query.tensor_parallel_size = d.tensor_parallel_size;
  query.format = d.kv_format;
  query.block_size = d.block_size;
  query.batch = 1;
  query.context = d.max_model_len;
  query.budget =
      d.budget_options(s.sim.scheduler.max_num_batched_tokens, s.sim.scheduler.max_num_seqs);
  in.kv =
      report::kv_json(model::analyze_kv(d.model, d.hardware_or_null(), query), d.kv_cache_dtype);
  in.kv["replica_capacity_bytes"] = built.allocator_options().capacity_bytes;
  in.model_label = d.model.name;
  in.deployment_label = deployment_label(d, s);
  in.workload_label = reader_description;
  return in;
}

RunOutput run_scenario(const PreparedRun& run, const config::Scenario& s,
                       const std::string& requests_path, const std::string& label) {
  const sim::BuiltDeployment built = sim::build_deployment(deployment_inputs(run, s), s.sim);
  const sim::SimSetup setup = built.setup(s.sim);
  const std::unique_ptr<trace::TraceReader> reader = run.workload->open();
  ProgressLine progress(label);
  FanOut observers;
  observers.observers.push_back(&progress);
  std::unique_ptr<report::RequestLog> log;
  if (!requests_path.empty()) {
    log = std::make_unique<report::RequestLog>(requests_path);
    observers.observers.push_back(log.get());
  }
  RunOutput out;
  out.result = sim::simulate(setup, *reader, &observers);
  if (log) log->commit();
  out.inputs = report_inputs(run, s, built, reader->stats(), reader->describe());
  return out;
}

}  // namespace kvsim::cli
