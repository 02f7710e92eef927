// Simulator speed: the Azure LLM inference conversation trace (2023; 19,366 requests over
// 58 minutes) through one replica of Llama-3-70B on 4 × H100 SXM (TP 4), vLLM scheduler, paged
// allocator, roofline cost model, at 1.4 × the trace's rate (about 7.7 req/s: the batch runs
// near full, ~200 sequences, and the queue stays bounded — the edge of saturation).
//
//   BM_SimulateAzureConv/1    the trace once (one hour of traffic)
//   BM_SimulateAzureConv/10   the trace ten times back to back (ten hours)
//
// Counters: requests/s and sequence_steps/s simulated per second of CPU (a sequence-step is one
// sequence in one engine step), steps, peak_heap_MB (glibc heap in use, sampled every 256
// finished requests and at the end: flat from /1 to /10 means memory follows the live requests,
// not the trace length), peak_live_requests.
//
// Skips with a message when ../shared/data is absent.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "config/catalog.h"
#include "model/kv_math.h"
#include "sim/deployment.h"
#include "sim/simulator.h"
#include "trace/workload.h"

namespace {

using namespace kvsim;

const std::string kTrace =
    std::string(KVSIM_SHARED_DATA_DIR) + "/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv";

// The workload `repeats` times in a row; each pass starts one mean gap after the previous one's
// last arrival. Ids are renumbered.
class RepeatReader final : public trace::TraceReader {
 public:
  RepeatReader(const trace::Workload& workload, int repeats)
      : workload_(workload), repeats_(repeats), reader_(workload.open()) {}
  bool next(trace::RequestSpec& out) override {
    while (true) {
      if (reader_->next(out)) {
        last_ = out.arrival_ns;
        ++in_pass_;
        out.arrival_ns += offset_;
        out.id = next_id_++;
        return true;
      }
      if (++pass_ >= repeats_ || in_pass_ == 0) return false;
      offset_ += last_ + last_ / std::max<std::int64_t>(1, in_pass_ - 1);
      in_pass_ = 0;
      reader_ = workload_.open();
    }
  }
  trace::ReaderStats stats() const override { return reader_->stats(); }
  std::string describe() const override { return reader_->describe(); }

 private:
  const trace::Workload& workload_;
  int repeats_;
  std::unique_ptr<trace::TraceReader> reader_;
  int pass_ = 0;
  std::int64_t in_pass_ = 0;
  TimeNs last_ = 0, offset_ = 0;
  std::uint64_t next_id_ = 0;
};

class HeapWatch final : public sim::SimObserver {
 public:
  void on_request_end(const sim::Request&) override {
    if ((++ended_ & 255) == 0) sample();
  }
  void sample() { peak_ = std::max(peak_, static_cast<std::size_t>(mallinfo2().uordblks)); }
  std::size_t peak() const { return peak_; }

 private:
  std::int64_t ended_ = 0;
  std::size_t peak_ = 0;
};

void BM_SimulateAzureConv(benchmark::State& state) {
  if (!std::filesystem::exists(kTrace)) {
    state.SkipWithError(("shared data absent: " + kTrace).c_str());
    return;
  }
  const model::ModelSpec model = config::load_model("llama-3-70b");
  const model::HardwareSpec gpu = config::load_hardware("h100-sxm");
  sim::DeploymentInputs in;
  in.model = &model;
  in.hardware = &gpu;
  in.tensor_parallel_size = 4;
  in.kv_format = *model::kv_format_from_name(model, "auto");
  in.block_size = 16;
  in.max_model_len = model.max_context;
  sim::SimOptions options;
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  const sim::SimSetup setup = built.setup(options);
  trace::WorkloadOptions w;
  w.trace.path = kTrace;
  w.transforms.rate_scale = 1.4;
  const trace::Workload workload(w);

  std::int64_t requests = 0, sequence_steps = 0, steps = 0, peak_live = 0;
  std::size_t peak_heap = 0;
  for (auto _ : state) {
    RepeatReader reader(workload, static_cast<int>(state.range(0)));
    HeapWatch heap;
    const sim::SimResult r = sim::simulate(setup, reader, &heap);
    heap.sample();
    requests += r.metrics.arrived;
    sequence_steps += r.metrics.num_sequence_steps;
    steps += r.metrics.num_steps;
    peak_live = std::max(peak_live, r.max_running + r.max_waiting);
    peak_heap = std::max(peak_heap, heap.peak());
  }
  state.counters["requests/s"] =
      benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
  state.counters["sequence_steps/s"] =
      benchmark::Counter(static_cast<double>(sequence_steps), benchmark::Counter::kIsRate);
  state.counters["steps"] = static_cast<double>(steps) / static_cast<double>(state.iterations());
  state.counters["peak_heap_MB"] = static_cast<double>(peak_heap) / 1e6;
  state.counters["peak_live_requests"] = static_cast<double>(peak_live);
}
BENCHMARK(BM_SimulateAzureConv)->Arg(1)->Arg(10)->Unit(benchmark::kMillisecond);

// The event core alone: a full-batch decode workload on a replica whose allocator and cost model
// are as cheap as they come (paged allocator, linear cost model), so the simulator's own per-step
// work dominates: 256 sequences of 100 + 1,000 tokens, repeated.
void BM_SimulatorCore(benchmark::State& state) {
  const model::ModelSpec model = config::load_model("llama-3-8b");
  const model::HardwareSpec gpu = config::load_hardware("h100-sxm");
  sim::DeploymentInputs in;
  in.model = &model;
  in.hardware = &gpu;
  in.kv_format = *model::kv_format_from_name(model, "auto");
  in.max_model_len = model.max_context;
  in.cost.kind = cost::CostModelKind::kLinear;
  in.cost.linear.base_ns = 10e6;
  sim::SimOptions options;
  const sim::BuiltDeployment built = sim::build_deployment(in, options);
  const sim::SimSetup setup = built.setup(options);
  trace::WorkloadOptions w;
  w.source = trace::WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = trace::ArrivalProcess::kConstant;
  w.synthetic.rate_rps = 20;
  w.synthetic.num_requests = 2560;
  w.synthetic.prompt.value = 100;
  w.synthetic.output.value = 1000;
  const trace::Workload workload(w);
  std::int64_t sequence_steps = 0;
  for (auto _ : state) {
    auto reader = workload.open();
    const sim::SimResult r = sim::simulate(setup, *reader);
    sequence_steps += r.metrics.num_sequence_steps;
  }
  state.counters["sequence_steps/s"] =
      benchmark::Counter(static_cast<double>(sequence_steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatorCore)->Unit(benchmark::kMillisecond);

}  // namespace
