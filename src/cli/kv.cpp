// kvsim kv: closed-form KV-cache memory math for one model, precision and tensor-parallel split.
#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "cli/setting_flags.h"
#include "common/error.h"
#include "common/strings.h"
#include "model/kv_math.h"
#include "model/pipeline.h"
#include "model/vllm_memory.h"
#include "report/kv_report.h"
#include "report/run_inputs.h"
#include "run/resolve.h"

namespace kvsim::cli {
namespace {

struct KvOptions {
  SettingFlags deployment;
  std::int64_t batch = 1;    // --batch
  std::int64_t context = 0;  // --context; 0 = the resolved max model length
  bool compare_attention = false;
  report::OutputOptions output;
};

// MHA, the model's own layout, a GQA-8 reference for MHA/MQA models, MQA; or for MLA models
// MHA, MLA and MQA.
std::vector<report::AttentionVariant> attention_variants(const model::ModelSpec& m,
                                                         const model::KvAnalysis& a) {
  const std::int64_t q = m.attention.num_q_heads;
  const auto kind = m.attention.kind;
  struct Candidate {
    std::string label;
    model::ModelSpec spec;
  };
  std::vector<Candidate> candidates;
  candidates.push_back(
      {kind == model::AttentionKind::kMha ? "MHA (model)" : "MHA", model::with_kv_heads(m, q)});
  if (kind == model::AttentionKind::kMla) {
    candidates.push_back({"MLA (model)", m});
  } else if (kind == model::AttentionKind::kGqa) {
    candidates.push_back({"GQA (model)", m});
  } else if (q > 8 && q % 8 == 0) {
    candidates.push_back({"GQA-8", model::with_kv_heads(m, 8)});
  }
  if (q > 1) {
    candidates.push_back(
        {kind == model::AttentionKind::kMqa ? "MQA (model)" : "MQA", model::with_kv_heads(m, 1)});
  }
  const model::KvQuery& query = a.query;
  const Bytes mha_bytes = model::kv_bytes_per_token(candidates.front().spec, query.format, 1);
  std::vector<report::AttentionVariant> out;
  for (const auto& c : candidates) {
    report::AttentionVariant v;
    v.label = c.label;
    v.kv_heads =
        c.spec.attention.kind == model::AttentionKind::kMla ? 1 : c.spec.attention.num_kv_heads;
    v.bytes_per_token = model::kv_bytes_per_token(c.spec, query.format, 1);
    v.total_bytes = static_cast<Bytes>(query.batch) *
                    model::kv_bytes_for_sequence(c.spec, query.format, query.context, 1);
    v.compression_vs_mha = static_cast<double>(mha_bytes) / static_cast<double>(v.bytes_per_token);
    if (a.budget && model::tensor_parallel_problem(c.spec, query.tensor_parallel_size).empty()) {
      v.max_concurrent_sequences =
          model::kv_capacity(c.spec, query.format, query.tensor_parallel_size,
                             a.budget->kv_budget_bytes, query.block_size, query.context)
              .max_concurrent_sequences;
    }
    out.push_back(v);
  }
  return out;
}

void run_kv(const KvOptions& o) {
  const config::Scenario scenario = scenario_from_flags(o.deployment);
  const run::Deployment d =
      run::resolve_deployment(scenario.deployment, run::GpuRequirement::kOptional);
  // --engine v1's profile run: not given (0) = vllm serve's defaults for the GPU.
  const auto& scheduler = scenario.sim.scheduler;
  const std::int64_t max_num_batched_tokens =
      o.deployment.find("--max-num-batched-tokens") ? scheduler.max_num_batched_tokens : 0;
  const std::int64_t max_num_seqs =
      o.deployment.find("--max-num-seqs") ? scheduler.max_num_seqs : 0;
  if (o.context > d.max_model_len) {
    throw Error({"", 0, 0, "--context"}, "expected at most the max model length (" +
                                             std::to_string(d.max_model_len) + " tokens), got " +
                                             std::to_string(o.context));
  }
  model::KvQuery query;
  query.tensor_parallel_size = d.tensor_parallel_size;
  query.format = d.kv_format;
  query.block_size = d.block_size;
  query.batch = o.batch;
  query.context = o.context > 0 ? o.context : d.max_model_len;
  query.budget = d.budget_options(max_num_batched_tokens, max_num_seqs);

  // One report per pipeline stage's GPU (the whole model without pipeline parallelism); the
  // engine sizes its cache by the GPU with the fewest blocks (vLLM: the minimum over workers),
  // so that stage is the one reported (the first of equals; without a GPU, the first stage
  // with the most layers).
  const std::int64_t pp = d.pipeline_parallel_size;
  std::optional<report::KvReport> best;
  std::int64_t best_blocks = 0;
  for (const model::PipelineStage& st : model::pipeline_stages(d.model.num_layers, pp)) {
    report::KvReport r;
    r.model = model::stage_model(d.model, st, pp);
    r.hardware = d.hardware_or_null();
    r.serving = report::serving_memory_inputs(d);
    r.analysis = model::analyze_kv(r.model, r.hardware, query);
    r.activation_reserve_estimated = !d.activation_reserve_bytes;
    if (pp > 1) {
      r.pipeline_parallel_size = pp;
      r.stage = st;
    }
    if (d.engine == model::MemoryEngine::kVllmV1 && r.hardware != nullptr) {
      r.vllm_profile =
          model::vllm_v1_memory_profile(r.model, *r.hardware, d.tensor_parallel_size, query.budget);
      r.vllm_layout = model::vllm_kv_cache_layout(
          r.model, d.kv_format, d.tensor_parallel_size, r.vllm_profile->available_kv_bytes,
          d.block_size, d.max_model_len, r.vllm_profile->max_num_batched_tokens,
          d.num_gpu_blocks_override);
      r.num_gpu_blocks_override = d.num_gpu_blocks_override;
    }
    const std::int64_t blocks = r.vllm_layout         ? r.vllm_layout->num_blocks
                                : r.analysis.capacity ? r.analysis.capacity->num_blocks
                                                      : -st.num_layers();
    if (!best || blocks < best_blocks) {
      best = std::move(r);
      best_blocks = blocks;
    }
  }
  report::KvReport& r = *best;
  if (o.compare_attention) r.attention_variants = attention_variants(r.model, r.analysis);
  if (r.analysis.budget && !r.analysis.budget->fits) {
    r.min_fitting_tensor_parallel_size =
        model::min_tensor_parallel_to_fit(r.model, *r.hardware, query.budget);
  }
  report::emit(
      o.output,
      {[&] { return report::kv_report_json(r); }, [&] { return report::kv_report_table(r); },
       [&] { return report::kv_report_csv(r); }},
      "kv");
}

}  // namespace

void register_kv(CLI::App& app) {
  auto options = std::make_shared<KvOptions>();
  auto* command = app.add_subcommand(
      "kv", "KV-cache memory math for a model, precision and tensor-parallel split");
  add_setting_flags(command, options->deployment, config::SettingScope::kDeployment,
                    SettingForm::kSingle);
  command
      ->add_option_function<std::string>(
          "--batch",
          [options](const std::string& s) { options->batch = int_at_least("--batch", s, 1); },
          "Sequences for the batch × context total")
      ->default_str("1");
  command->add_option_function<std::string>(
      "--context",
      [options](const std::string& s) { options->context = int_at_least("--context", s, 1); },
      "Tokens per sequence (default: the max model length)");
  // vLLM V1's profile run reads two serving settings; given here they size only the profile.
  add_setting_flag(command, options->deployment,
                   *config::find_setting_by_flag("--max-num-batched-tokens"),
                   "Tokens of vLLM V1's profile forward pass (default or 0: vllm serve's, 2048 or "
                   "8192 by GPU)");
  add_setting_flag(command, options->deployment,
                   *config::find_setting_by_flag("--pipeline-parallel-size"),
                   "Pipeline stages the model's layers are split over: the figures are per GPU of "
                   "the stage whose GPUs hold the fewest KV blocks (vLLM sizes every stage's "
                   "cache by it)");
  add_setting_flag(command, options->deployment, *config::find_setting_by_flag("--max-num-seqs"),
                   "Sequences of vLLM V1's profile sampler run (default: vllm serve's, 256 or "
                   "1024 by GPU)");
  command->add_flag(
      "--compare-attention", options->compare_attention,
      "Also show the same model as MHA, GQA and MQA (or MLA) with compression factors");
  add_output_flags(command, options->output);
  command->callback([options] { run_kv(*options); });
}

}  // namespace kvsim::cli
