// Simulator speed, issue 15's two figures.
//
//   BM_DecodeHeavy             256 sequences decoding 2,000 tokens each, side by side (prompts of
//                              100, all arriving at once, max_num_seqs 256; Llama-3-8B on one
//                              H200, roofline costs): sequence_steps/s is the per-sequence-step
//                              cost of the simulator's decode loop
//   BM_SimulateSplitwiseConv   the Azure 2023 conversation trace as Vidur ships it (19,366
//                              requests) through Llama-3-8B on one A100-80GB with Vidur's
//                              settings: max_num_seqs 128, 4,096 batched tokens, max_model_len
//                              4,096 (prompts truncated), 30,208 KV blocks of 16 tokens,
//                              watermark 1%, recompute preemption; the same run as
//                              `kvsim simulate ... --trace splitwise_conv.csv` (README)
//
//   BM_DecodeHeavyMoeLockstep  the decode-heavy run on an MoE model over two data-parallel ranks
//                              in lockstep (expert parallelism)
//   BM_DisaggregatedMoeLockstep  the same, disaggregated: a prefill replica of two lockstep ranks
//                              in front of the decode replica's two
//   BM_DecodeHeavyHybridState  the decode-heavy run on a gated DeltaNet hybrid (Qwen3-Next), its
//                              per-sequence state pages in the KV pool
//   BM_DecodeHeavySparseAttention  the decode-heavy run on DeepSeek-V3.2 (sparse attention) at
//                              TP 8 after prompts past its top-k, fast-forwarded
//                              (...StepByStep: every step one event)
//   BM_DecodeHeavyPipelineV1   the decode-heavy run over two pipeline stages (TP 1 × PP 2) with
//                              vLLM V1's scheduler: one engine, a batch queue of two steps
//   BM_DecodeHeavyPipelineV0   the same with vLLM V0's scheduler: two virtual engines
//   BM_ChatSessionsSerial      4,096 chat turns of 256 conversations, each turn sent once the one
//                              before it has its answer (serial sessions); ...OnTime: the same
//                              turns sent on time
//
// Each of the first two also as ...StepByStep: with SimOptions::fast_forward off (one event per
// step), the same results. Skips with a message when ../shared/data is absent.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/catalog.h"
#include "model/expert_parallel.h"
#include "model/kv_math.h"
#include "model/vllm_memory.h"
#include "sim/deployment.h"
#include "sim/simulator.h"
#include "trace/workload.h"

namespace {

using namespace kvsim;

void report(benchmark::State& state, std::int64_t sequence_steps, std::int64_t requests,
            std::int64_t steps) {
  state.counters["sequence_steps/s"] =
      benchmark::Counter(static_cast<double>(sequence_steps), benchmark::Counter::kIsRate);
  state.counters["requests/s"] =
      benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
  state.counters["steps"] = static_cast<double>(steps) / static_cast<double>(state.iterations());
}

// The decode-heavy run's deployment: `model` on one H200 per rank, `data_parallel_size` ranks,
// 4,096-token context; max_num_seqs 256 with room for every prompt in one step.
sim::DeploymentInputs decode_heavy_inputs(const model::ModelSpec& model,
                                          const model::HardwareSpec& gpu,
                                          std::int64_t data_parallel_size,
                                          std::int64_t pipeline_parallel_size = 1) {
  sim::DeploymentInputs in;
  in.model = &model;
  in.hardware = &gpu;
  in.data_parallel_size = data_parallel_size;
  in.pipeline_parallel_size = pipeline_parallel_size;
  in.kv_format = *model::kv_format_from_name(model, "auto");
  in.max_model_len = 4096;
  return in;
}
sim::SimOptions decode_heavy_options(bool fast_forward) {
  sim::SimOptions options;
  options.scheduler.max_num_seqs = 256;
  options.scheduler.max_num_batched_tokens = 256 * 100;
  options.fast_forward = fast_forward;
  return options;
}

// `workload` through `setup` once per iteration, its counters reported (requests: the completed
// ones); returns the last run's result.
sim::SimResult simulate_each_iteration(benchmark::State& state, const sim::SimSetup& setup,
                                       const trace::Workload& workload) {
  std::int64_t sequence_steps = 0, requests = 0, steps = 0;
  sim::SimResult last;
  for (auto _ : state) {
    auto reader = workload.open();
    last = sim::simulate(setup, *reader);
    sequence_steps += last.metrics.num_sequence_steps;
    requests += last.metrics.completed;
    steps += last.metrics.num_steps;
  }
  report(state, sequence_steps, requests, steps);
  return last;
}

// 256 requests of `prompt` (100) prompt and 2,000 output tokens, all at once, through `setup` per
// iteration; returns the last run's largest batch.
std::int64_t run_decode_heavy(benchmark::State& state, const sim::SimSetup& setup,
                              std::int64_t prompt = 100) {
  trace::WorkloadOptions w;
  w.source = trace::WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = trace::ArrivalProcess::kConstant;
  w.synthetic.rate_rps = 1e6;  // all 256 at once
  w.synthetic.num_requests = 256;
  w.synthetic.prompt.value = static_cast<double>(prompt);
  w.synthetic.output.value = 2000;
  return simulate_each_iteration(state, setup, trace::Workload(w)).max_running;
}

// `fast_forward` false: every step one event (SimOptions::fast_forward), the loop before it.
// `model` over `data_parallel_size` ranks (an MoE model's then step in lockstep).
void decode_heavy(benchmark::State& state, const model::ModelSpec& model, bool fast_forward,
                  std::int64_t data_parallel_size = 1) {
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  const sim::SimOptions options = decode_heavy_options(fast_forward);
  const sim::BuiltDeployment built =
      sim::build_deployment(decode_heavy_inputs(model, gpu, data_parallel_size), options);
  state.counters["max_running"] =
      static_cast<double>(run_decode_heavy(state, built.setup(options)));
}
void BM_DecodeHeavy(benchmark::State& state) {
  decode_heavy(state, config::load_model("llama-3-8b"), true);
}
void BM_DecodeHeavyStepByStep(benchmark::State& state) {
  decode_heavy(state, config::load_model("llama-3-8b"), false);
}
BENCHMARK(BM_DecodeHeavy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeHeavyStepByStep)->Unit(benchmark::kMillisecond);

// The same 256 x 2,000-token decode on an MoE model over two data-parallel ranks with expert
// parallelism (DeepSeek-V2-Lite, DP 2 x TP 1 on H200s): the ranks step in lockstep, each step
// priced on both ranks' batches (never fast-forwarded).
void BM_DecodeHeavyMoeLockstep(benchmark::State& state) {
  decode_heavy(state, model::shard_experts(config::load_model("deepseek-v2-lite"), 1, 2, true),
               true, 2);
}
BENCHMARK(BM_DecodeHeavyMoeLockstep)->Unit(benchmark::kMillisecond);

// The same decode over two pipeline stages (Llama-3-8B, TP 1 × PP 2 on H200s), never
// fast-forwarded: `kind` vllm-v1 runs one engine with a batch queue of two steps, vllm (V0) two
// virtual engines.
void decode_heavy_pipeline(benchmark::State& state, sim::SchedulerKind kind) {
  const model::ModelSpec model = config::load_model("llama-3-8b");
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  sim::SimOptions options = decode_heavy_options(true);
  options.scheduler.kind = kind;
  const sim::BuiltDeployment built =
      sim::build_deployment(decode_heavy_inputs(model, gpu, 1, 2), options);
  state.counters["max_running"] =
      static_cast<double>(run_decode_heavy(state, built.setup(options)));
}
void BM_DecodeHeavyPipelineV1(benchmark::State& state) {
  decode_heavy_pipeline(state, sim::SchedulerKind::kVllmV1);
}
void BM_DecodeHeavyPipelineV0(benchmark::State& state) {
  decode_heavy_pipeline(state, sim::SchedulerKind::kVllm);
}
BENCHMARK(BM_DecodeHeavyPipelineV1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeHeavyPipelineV0)->Unit(benchmark::kMillisecond);

// The same 256 x 2,000-token decode on a gated DeltaNet hybrid (the repo's Qwen3-Next-80B-A3B
// config fixture, TP 2 on H200s under vLLM V1's layout): each sequence also holds its
// state pages in the pool, and every step reads and writes its 36 layers' state.
void BM_DecodeHeavyHybridState(benchmark::State& state) {
  const model::ModelSpec model = config::load_model(
      std::string(KVSIM_SOURCE_DIR) + "/tests/config/data/hf/qwen3-next-80b-a3b.json");
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  const sim::SimOptions options = decode_heavy_options(true);
  sim::DeploymentInputs in = decode_heavy_inputs(model, gpu, 1);
  in.tensor_parallel_size = 2;  // 159 GB of bf16 weights
  in.budget.engine = model::MemoryEngine::kVllmV1;
  in.block_size = model::vllm_hybrid_block_size(model, in.kv_format, 2, 16);
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  state.counters["state_pages_per_seq"] =
      static_cast<double>(built.allocator_options().state_blocks_per_seq);
  state.counters["max_running"] =
      static_cast<double>(run_decode_heavy(state, built.setup(options)));
}
BENCHMARK(BM_DecodeHeavyHybridState)->Unit(benchmark::kMillisecond);

// The same 256 x 2,000-token decode on DeepSeek-V3.2 (the shipped fp8 checkpoint, TP 8 on
// H200s, vLLM V1's 64-token blocks) after 2,050-token prompts: every context is past the
// 2,048 top-k, so runs of decode steps fast-forward (decode_totals_min_context).
void sparse_attention(benchmark::State& state, bool fast_forward) {
  const model::ModelSpec model = config::load_model("deepseek-v3.2");
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  const sim::SimOptions options = decode_heavy_options(fast_forward);
  sim::DeploymentInputs in = decode_heavy_inputs(model, gpu, 1);
  in.tensor_parallel_size = 8;
  in.budget.engine = model::MemoryEngine::kVllmV1;
  in.block_size = model::vllm_hybrid_block_size(model, in.kv_format, 8, 16);
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  state.counters["max_running"] =
      static_cast<double>(run_decode_heavy(state, built.setup(options), 2050));
}
void BM_DecodeHeavySparseAttention(benchmark::State& state) {
  sparse_attention(state, true);
}
BENCHMARK(BM_DecodeHeavySparseAttention)->Unit(benchmark::kMillisecond);
void BM_DecodeHeavySparseAttentionStepByStep(benchmark::State& state) {
  sparse_attention(state, false);
}
BENCHMARK(BM_DecodeHeavySparseAttentionStepByStep)->Unit(benchmark::kMillisecond);

// The same MoE run disaggregated: one prefill replica of two lockstep data-parallel ranks in front
// of the decode replica's two (DeepSeek-V2-Lite, expert parallel, prefill and decode DP 2 x TP 1
// on H200s), each prompt's KV sent over NVLink: both pools' lockstep groups and the sends.
void BM_DisaggregatedMoeLockstep(benchmark::State& state) {
  const model::ModelSpec model =
      model::shard_experts(config::load_model("deepseek-v2-lite"), 1, 2, true);
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  const sim::SimOptions options = decode_heavy_options(true);
  const sim::DeploymentInputs in = decode_heavy_inputs(model, gpu, 2);
  // Both pools have the same shape: one deployment serves both (each setup() call makes fresh
  // allocators).
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  sim::SimSetup setup = built.setup(options);
  const sim::SimSetup prefill_setup = built.setup(options);
  setup.prefill.num_replicas = 1;
  setup.prefill.data_parallel = prefill_setup.data_parallel;
  setup.prefill.cost_model = &built.cost_model();
  setup.prefill.make_allocator = prefill_setup.make_allocator;
  setup.prefill.bytes_per_token = model::kv_bytes_per_token(model, in.kv_format, 1);
  setup.prefill.bandwidth = gpu.interconnect_bandwidth;
  setup.prefill.latency_s = gpu.interconnect_latency_s;
  run_decode_heavy(state, setup);
}
BENCHMARK(BM_DisaggregatedMoeLockstep)->Unit(benchmark::kMillisecond);

void simulate_splitwise_conv(benchmark::State& state, bool fast_forward) {
  const std::string trace_path =
      std::string(KVSIM_SHARED_DATA_DIR) + "/traces/vidur_processed/splitwise_conv.csv";
  if (!std::filesystem::exists(trace_path)) {
    state.SkipWithError(("shared data absent: " + trace_path).c_str());
    return;
  }
  const model::ModelSpec model = config::load_model("llama-3-8b");
  const model::HardwareSpec gpu = config::load_hardware("a100-80gb");
  sim::DeploymentInputs in;
  in.model = &model;
  in.hardware = &gpu;
  in.kv_format = *model::kv_format_from_name(model, "auto");
  in.block_size = 16;
  in.max_model_len = 4096;
  in.budget.gpu_memory_utilization = 0.92447;
  in.budget.activation_reserve_bytes = 0;
  in.budget.runtime_overhead_bytes = 0;
  in.watermark = 0.01;
  sim::SimOptions options;
  options.scheduler.max_num_seqs = 128;
  options.scheduler.max_num_batched_tokens = 4096;
  options.scheduler.preemption = sim::PreemptionMode::kRecompute;
  options.fast_forward = fast_forward;
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  const sim::SimSetup setup = built.setup(options);
  trace::WorkloadOptions w;
  w.trace.path = trace_path;
  w.transforms.max_model_len = 4096;
  const trace::Workload workload(w);
  std::int64_t sequence_steps = 0, requests = 0, steps = 0;
  for (auto _ : state) {
    auto reader = workload.open();
    const sim::SimResult r = sim::simulate(setup, *reader);
    sequence_steps += r.metrics.num_sequence_steps;
    requests += r.metrics.arrived;
    steps += r.metrics.num_steps;
  }
  report(state, sequence_steps, requests, steps);
  state.counters["kv_blocks"] = static_cast<double>(built.capacity().num_blocks);
}
void BM_SimulateSplitwiseConv(benchmark::State& state) {
  simulate_splitwise_conv(state, true);
}
void BM_SimulateSplitwiseConvStepByStep(benchmark::State& state) {
  simulate_splitwise_conv(state, false);
}
BENCHMARK(BM_SimulateSplitwiseConv)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateSplitwiseConvStepByStep)->Unit(benchmark::kMillisecond);

// A native trace of `conversations` chats of `turns` turns, in a temporary file: request i is
// turn i / conversations of conversation i mod conversations, sent every `gap_s`; turn k's
// prompt is 256 tokens and k × (128 answer + 64 question) more, its output 128, its prefix ids
// by position in its conversation over prompt and output (64-token blocks).
std::string write_chat_trace(std::int64_t conversations, std::int64_t turns, double gap_s) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "kvsim-bench-chat.csv").string();
  std::ofstream out(path);
  out << "arrival_s,prompt_tokens,output_tokens,session_id,prefix_hashes\n";
  for (std::int64_t i = 0; i < conversations * turns; ++i) {
    const std::int64_t c = i % conversations, turn = i / conversations;
    const std::int64_t prompt = 256 + turn * (128 + 64), output = 128;
    out << static_cast<double>(i) * gap_s << ',' << prompt << ',' << output << ',' << c << ',';
    for (std::int64_t b = 0; b < (prompt + output) / 64; ++b) {
      out << (b ? ";" : "") << ((c + 1) << 20 | b);
    }
    out << '\n';
  }
  return path;
}

// 256 conversations of 16 turns (4,096 requests, one every 2.5 ms: a conversation's next turn
// is due 0.64 s after its last, before that one's answer has ended) through Llama-3-8B on one
// H200 with prefix caching, vLLM V1's scheduler; `serial` sessions (each turn sent once the one
// before it has its answer: most wait) or turns sent on time.
void chat_sessions(benchmark::State& state, bool serial) {
  const std::string path = write_chat_trace(256, 16, 0.0025);
  const model::ModelSpec model = config::load_model("llama-3-8b");
  const model::HardwareSpec gpu = config::load_hardware("h200-sxm");
  sim::SimOptions options;
  options.scheduler.kind = sim::SchedulerKind::kVllmV1;
  options.scheduler.max_num_seqs = 256;
  options.scheduler.max_num_batched_tokens = 8192;
  options.enable_prefix_caching = true;
  options.serial_sessions = serial;
  sim::DeploymentInputs in = decode_heavy_inputs(model, gpu, 1);
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  const sim::SimSetup setup = built.setup(options);
  trace::WorkloadOptions w;
  w.trace.path = path;
  w.trace.prefix_block_tokens = 64;
  const sim::SimResult last = simulate_each_iteration(state, setup, trace::Workload(w));
  state.counters["simulated_s"] = static_cast<double>(last.duration_ns) / 1e9;
  std::filesystem::remove(path);
}
void BM_ChatSessionsSerial(benchmark::State& state) {
  chat_sessions(state, true);
}
void BM_ChatSessionsOnTime(benchmark::State& state) {
  chat_sessions(state, false);
}
BENCHMARK(BM_ChatSessionsSerial)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChatSessionsOnTime)->Unit(benchmark::kMillisecond);

}  // namespace
