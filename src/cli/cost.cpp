#include <cmath>
#include <vector>

#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "common/error.h"
#include "common/strings.h"
#include "cost/linear_model.h"
#include "cost/pipeline_model.h"
#include "cost/roofline_model.h"
#include "cost/step_analysis.h"
#include "model/dtype.h"
#include "report/cost_report.h"
#include "run/resolve.h"

namespace kvsim::cli {
namespace {

struct CostFlags {
  SettingFlags deployment;
  std::vector<std::int64_t> prefill;         // --prefill: one chunk per value
  std::vector<std::int64_t> prefill_cached;  // --prefill-cached: per chunk (or one for all)
  std::int64_t decode_batch = 0;
  std::int64_t context = 0;
  std::int64_t num_sampling = -1;  // -1: every decode plus every prefill chunk
  std::string dtype = "auto";      // weights (vLLM --dtype): auto = the model's
  std::string activation_dtype = "auto";
  double step_overhead_us = -1;  // < 0: the GPU profile's
  bool no_tables = false;
  bool no_crossover = false;
  std::string cost_model = "roofline";
  double linear_base_us = 0, linear_per_prefill_token_us = 0, linear_per_decode_seq_us = 0,
         linear_per_context_token_ns = 0;
  report::OutputOptions output;
};

std::optional<model::Dtype> dtype_flag(const std::string& value, const std::string& flag) {
  if (value == "auto") return std::nullopt;
  const auto d = model::parse_dtype(value);
  if (!d) {
    auto names = model::dtype_names();
    names.insert(names.begin(), "auto");
    throw Error(ErrorLocation{"", 0, 0, flag}, "expected one of " + join(names, ", ") + ", got '" +
                                                   value + "'" + did_you_mean(value, names));
  }
  return d;
}

void non_negative(std::int64_t v, const char* flag) {
  if (v < 0) {
    throw Error(ErrorLocation{"", 0, 0, flag},
                "expected a non-negative integer, got " + std::to_string(v));
  }
}

// The flags' own checks (ranges, chunk counts, the cost model's name).
void check_flags(const CostFlags& f) {
  for (const auto t : f.prefill) {
    if (t <= 0) {
      throw Error(ErrorLocation{"", 0, 0, "--prefill"},
                  "expected a positive token count, got " + std::to_string(t));
    }
  }
  for (const auto c : f.prefill_cached) non_negative(c, "--prefill-cached");
  non_negative(f.decode_batch, "--decode-batch");
  non_negative(f.context, "--context");
  if (!f.prefill_cached.empty() && f.prefill_cached.size() != 1 &&
      f.prefill_cached.size() != f.prefill.size()) {
    throw Error(ErrorLocation{"", 0, 0, "--prefill-cached"},
                "expected one value or one per --prefill chunk (" +
                    std::to_string(f.prefill.size()) + "), got " +
                    std::to_string(f.prefill_cached.size()));
  }
  if (f.prefill.empty() && f.decode_batch == 0) {
    throw Error(ErrorLocation{"", 0, 0, "--prefill"},
                "expected --prefill TOKENS and/or --decode-batch B (with --context L)");
  }
  if (f.cost_model != "roofline" && f.cost_model != "linear") {
    throw Error(ErrorLocation{"", 0, 0, "--cost-model"},
                "expected roofline or linear, got '" + f.cost_model + "'" +
                    did_you_mean(f.cost_model, {"roofline", "linear"}));
  }
}

// The prefill chunks the flags describe, each with its cached tokens.
std::vector<cost::PrefillChunk> prefill_chunks(const CostFlags& f) {
  std::vector<cost::PrefillChunk> chunks;
  for (std::size_t i = 0; i < f.prefill.size(); ++i) {
    const std::int64_t cached =
        f.prefill_cached.empty() ? 0 : f.prefill_cached[f.prefill_cached.size() == 1 ? 0 : i];
    chunks.push_back({f.prefill[i], cached});
  }
  return chunks;
}

cost::LinearCostParams linear_params(const CostFlags& f, const model::HardwareSpec& hw) {
  cost::LinearCostParams p;
  p.base_ns = f.linear_base_us * 1e3;
  p.per_prefill_token_ns = f.linear_per_prefill_token_us * 1e3;
  p.per_decode_seq_ns = f.linear_per_decode_seq_us * 1e3;
  p.per_context_token_ns = f.linear_per_context_token_ns;
  p.swap_bytes_per_s = hw.pcie_bandwidth > 0 ? hw.pcie_bandwidth : p.swap_bytes_per_s;
  return p;
}

// The roofline model's options the flags ask for.
cost::CostOptions roofline_options(const CostFlags& f, const run::Deployment& d) {
  cost::CostOptions o;
  o.tensor_parallel_size = d.tensor_parallel_size;
  o.kv_dtype = d.kv_format.dtype;
  o.weight_dtype = dtype_flag(f.dtype, "--dtype");
  o.activation_dtype = dtype_flag(f.activation_dtype, "--activation-dtype");
  if (f.step_overhead_us >= 0) {
    if (!std::isfinite(f.step_overhead_us))
      throw Error(ErrorLocation{"", 0, 0, "--step-overhead-us"}, "expected a finite time");
    o.step_overhead_s = f.step_overhead_us * 1e-6;
  }
  o.use_tables = !f.no_tables;
  return o;
}

// The roofline model of `options` (of the whole model; with pipeline stages, of their dtypes and
// overheads, which every stage shares); records its resolved dtypes, profile and overhead in `in`.
std::unique_ptr<cost::RooflineCostModel> roofline_model(const cost::CostOptions& options,
                                                        const run::Deployment& d,
                                                        report::CostReportInput& in) {
  const model::HardwareSpec& hw = *d.hardware;
  auto roofline = std::make_unique<cost::RooflineCostModel>(d.model, hw, options);
  in.weight_dtype = std::string(model::dtype_name(roofline->dtypes().weight));
  in.activation_dtype = std::string(model::dtype_name(roofline->dtypes().gemm_compute));
  if (d.model.quantization.enabled()) {  // the linear layers' storage and GEMM compute
    const cost::ResolvedDtypes& q = roofline->dtypes();
    in.weight_dtype =
        model::quantization_summary(d.model.quantization) + ", the rest " + in.weight_dtype;
    in.activation_dtype = std::string(model::dtype_name(q.quant_compute)) +
                          (q.quant_dequantizes ? " (weights dequantized)" : "") +
                          " in quantized GEMMs, " + in.activation_dtype + " elsewhere";
  }
  if (model::has_mxfp4_experts(d.model)) {
    in.activation_dtype += std::string(", MXFP4 experts multiplied in ") +
                           (d.model.moe.mxfp4_activation_bits == 8 ? "mxfp8" : "bf16");
  }
  in.kv_dtype = std::string(model::dtype_name(roofline->dtypes().kv));
  in.profile_kind = hw.cost.provenance.kind;
  in.profile_device = hw.cost.provenance.device;
  in.defaulted_classes = roofline->defaulted_classes();
  in.measured_classes = hw.cost.provenance.fitted_op_classes;
  in.tables_used = static_cast<std::int64_t>(roofline->num_tables_used());
  in.step_overhead_s = roofline->step_overhead_s();
  in.seq_overhead_s = roofline->seq_overhead_s();
  in.prefill_token_overhead_s = roofline->prefill_token_overhead_s();
  in.context_token_overhead_s = roofline->context_token_overhead_s();
  return roofline;
}

void run(CostFlags& f) {
  check_flags(f);
  const run::Deployment d = run::resolve_deployment(scenario_from_flags(f.deployment).deployment,
                                                    run::GpuRequirement::kRequired);
  const model::HardwareSpec& hw = *d.hardware;
  const std::vector<cost::PrefillChunk> chunks = prefill_chunks(f);
  const std::vector<std::int64_t> contexts(static_cast<std::size_t>(f.decode_batch), f.context);
  cost::StepBatch batch;
  batch.prefills = chunks;
  batch.decode_context_tokens = contexts;
  batch.num_sampling = f.num_sampling >= 0
                           ? f.num_sampling
                           : f.decode_batch + static_cast<std::int64_t>(chunks.size());

  report::CostReportInput in;
  in.model = d.model.name;
  in.gpu = hw.name;
  in.tensor_parallel_size = d.tensor_parallel_size;
  in.pipeline_parallel_size = d.pipeline_parallel_size;
  in.expert_shard_ranks = d.model.moe.shard_ranks;
  in.expert_parallel = d.model.moe.expert_parallel;
  in.prefills = chunks;
  in.decode_batch = f.decode_batch;
  in.context = f.context;
  in.num_sampling = batch.num_sampling;
  in.cost_model = f.cost_model;

  std::unique_ptr<cost::CostModel> model;
  if (f.cost_model == "linear") {
    if (d.pipeline_parallel_size > 1) {
      throw Error(ErrorLocation{"", 0, 0, "--pipeline-parallel-size"},
                  "pipeline stages need the roofline cost model (the linear model has no layers "
                  "to split)");
    }
    model = std::make_unique<cost::LinearCostModel>(linear_params(f, hw));
    in.step_overhead_s = 0;
  } else {
    const cost::CostOptions options = roofline_options(f, d);
    model = roofline_model(options, d, in);
    if (d.pipeline_parallel_size > 1) {
      cost::CostModelConfig config;
      config.roofline = options;
      model = cost::make_pipeline_cost_model(d.model, hw, config, d.pipeline_parallel_size);
    }
    if (!f.no_crossover)
      in.crossover = cost::decode_crossover(*model, f.context > 0 ? f.context : 4096);
    if (in.crossover && f.context == 0) in.context = 4096;
  }
  const cost::StepCost c = model->breakdown(batch);
  report::emit(f.output,
               {[&] { return report::dump(report::cost_json(c, in)); },
                [&] { return report::cost_table(c, in); }, [&] { return report::cost_csv(c); }},
               "cost");
}

}  // namespace

void register_cost(CLI::App& app) {
  auto flags = std::make_shared<CostFlags>();
  auto* command = app.add_subcommand(
      "cost", "Step time and per-op breakdown of one engine step (roofline or linear cost model)");
  add_setting_flags(command, flags->deployment, config::SettingScope::kDeployment,
                    SettingForm::kSingle);
  add_setting_flag(command, flags->deployment,
                   *config::find_setting_by_flag("--pipeline-parallel-size"),
                   "Pipeline stages the model's layers are split over: the step is one batch "
                   "through every stage in turn (each stage's ops prefixed stageN., the "
                   "activation transfers between stages pp_transfer), one batch's "
                   "latency");
  command->add_option("--prefill", flags->prefill,
                      "Prefill chunk of TOKENS new tokens (repeat for several chunks in one step)");
  command->add_option("--prefill-cached", flags->prefill_cached,
                      "Tokens already cached before each chunk (one value, or one per chunk)");
  command->add_option("--decode-batch", flags->decode_batch, "Decoding sequences in the step");
  command->add_option("--context", flags->context, "Cached tokens of each decoding sequence");
  command->add_option("--num-sampling", flags->num_sampling,
                      "Rows sampled (LM head); default every decode plus every prefill chunk");
  command->add_option("--dtype", flags->dtype, "Weight dtype: auto (the model's) or a dtype name");
  command->add_option(
      "--activation-dtype", flags->activation_dtype,
      "Activation/GEMM dtype: auto (fp8 weights run W8A8, int8/int4 W*A16) or a name");
  command->add_option("--step-overhead-us", flags->step_overhead_us,
                      "CPU time per engine step in microseconds (default: the GPU profile's)");
  command->add_flag("--no-tables", flags->no_tables,
                    "Ignore measured tables; fitted roofline only");
  command->add_flag("--no-crossover", flags->no_crossover, "Skip the decode crossover search");
  command->add_option("--cost-model", flags->cost_model, "roofline (default) or linear");
  command->add_option("--linear-base-us", flags->linear_base_us,
                      "Linear model: time per step (us)");
  command->add_option("--linear-per-prefill-token-us", flags->linear_per_prefill_token_us,
                      "Linear model: time per prefill token (us)");
  command->add_option("--linear-per-decode-seq-us", flags->linear_per_decode_seq_us,
                      "Linear model: time per decoding sequence (us)");
  command->add_option("--linear-per-context-token-ns", flags->linear_per_context_token_ns,
                      "Linear model: time per cached context token read (ns)");
  add_output_flags(command, flags->output);
  command->callback([flags] { run(*flags); });
}

}  // namespace kvsim::cli
