// sim/options.cpp: option names, the per-scheduler token budget, and validation naming the flag.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "sim/options.h"

using namespace kvsim;
using namespace kvsim::sim;
using Catch::Matchers::Contains;

namespace {

SimOptions valid() {
  SimOptions o;
  o.scheduler.max_model_len = 4096;
  return o;
}

std::string error_of(const SimOptions& o) {
  try {
    validate_options(o);
  } catch (const Error& e) {
    return e.location().field + ": " + e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("options: names round-trip, in enum order; unknown names are nullopt", "[sim][options]") {
  CHECK(scheduler_names() ==
        std::vector<std::string>{"vllm", "chunked-prefill", "static", "vllm-v1"});
  CHECK(preemption_names() == std::vector<std::string>{"recompute", "swap"});
  CHECK(router_names() ==
        std::vector<std::string>{"round-robin", "least-outstanding", "least-kv", "prefix-aware"});
  for (const auto& n : scheduler_names()) CHECK(scheduler_name(*parse_scheduler(n)) == n);
  for (const auto& n : preemption_names()) CHECK(preemption_name(*parse_preemption(n)) == n);
  for (const auto& n : router_names()) CHECK(router_name(*parse_router(n)) == n);
  CHECK(parse_scheduler("chunked-prefill") == SchedulerKind::kChunkedPrefill);
  CHECK(parse_router("least-kv") == RouterKind::kLeastKvUsage);
  CHECK_FALSE(parse_scheduler("VLLM"));  // names are exact
  CHECK_FALSE(parse_preemption(""));
  CHECK_FALSE(parse_router("random"));
}

TEST_CASE("options: the token budget defaults per scheduler", "[sim][options]") {
  SchedulerOptions s;
  s.max_model_len = 1024;
  CHECK(effective_max_num_batched_tokens(s) == 2048);  // vllm: max(max_model_len, 2048)
  s.max_model_len = 8192;
  CHECK(effective_max_num_batched_tokens(s) == 8192);
  s.kind = SchedulerKind::kChunkedPrefill;
  CHECK(effective_max_num_batched_tokens(s) == 2048);
  s.kind = SchedulerKind::kVllmV1;  // run::resolve_scenario fills vllm serve's for the GPU
  CHECK(effective_max_num_batched_tokens(s) == 2048);
  s.kind = SchedulerKind::kStatic;
  CHECK(effective_max_num_batched_tokens(s) == std::numeric_limits<std::int64_t>::max());
  s.max_num_batched_tokens = 512;  // a given budget wins for every scheduler
  CHECK(effective_max_num_batched_tokens(s) == 512);
}

TEST_CASE("options: validation names the flag of the out-of-range option", "[sim][options]") {
  CHECK(error_of(valid()) == "(no error)");
  SimOptions o = valid();
  o.num_replicas = 0;
  CHECK(error_of(o) == "--replicas: expected an integer in [1, 100000], got 0");
  o = valid();
  o.scheduler.kind = SchedulerKind::kVllmV1;
  o.scheduler.preemption = sim::PreemptionMode::kSwap;
  CHECK(error_of(o).rfind("--preemption: vLLM V1 preempts by recompute only", 0) == 0);
  o = valid();
  o.scheduler.cuda_graph_max_size = -1;
  CHECK(error_of(o) == "--cuda-graph-sizes: expected a non-negative integer, got -1");
  o = valid();
  o.scheduler.max_num_seqs = -1;
  CHECK(error_of(o) == "--max-num-seqs: expected a positive integer, got -1");
  o = valid();
  o.scheduler.max_model_len = 0;
  CHECK(error_of(o) == "--max-model-len: expected a positive integer, got 0");
  o = valid();
  o.scheduler.long_prefill_token_threshold = -2;
  CHECK(error_of(o) == "--long-prefill-token-threshold: expected a non-negative integer, got -2");
  o = valid();
  o.scheduler.max_num_batched_tokens = 2048;  // below max_model_len 4096 for vllm
  CHECK_THAT(error_of(o), Contains("--max-num-batched-tokens: the vllm scheduler") &&
                              Contains("(4096) tokens, got 2048"));
  o.scheduler.kind = SchedulerKind::kChunkedPrefill;  // chunked prefill may use a smaller budget
  CHECK(error_of(o) == "(no error)");
  o = valid();
  o.block_size = 0;
  CHECK(error_of(o) == "--block-size: expected a positive integer, got 0");
  o = valid();
  o.time_limit_ns = -1;
  CHECK(error_of(o) == "--time-limit: expected a non-negative time");
  o = valid();
  o.timeline_points = 1;
  CHECK(error_of(o) == "--timeline-points: expected 0 or an integer >= 2");
  o.timeline_points = 2;
  CHECK(error_of(o) == "(no error)");
}

TEST_CASE("CUDA-graph modes: which steps replay a graph (padded) and which run eagerly",
          "[sim][options]") {
  CHECK(cuda_graph_mode_names() == std::vector<std::string>{"NONE", "PIECEWISE", "FULL",
                                                            "FULL_DECODE_ONLY",
                                                            "FULL_AND_PIECEWISE"});
  for (const auto& n : cuda_graph_mode_names()) {
    CHECK(cuda_graph_mode_name(*parse_cuda_graph_mode(n)) == n);
  }
  CHECK_FALSE(parse_cuda_graph_mode("").has_value());
  CHECK_FALSE(parse_cuda_graph_mode("full").has_value());  // vLLM's spelling only
  SchedulerOptions so;
  so.kind = SchedulerKind::kVllmV1;
  so.max_num_batched_tokens = 8192;
  so.cuda_graph_max_size = 16;
  const auto run = [&so](CudaGraphMode mode, std::int64_t tokens, bool decode_only) {
    so.cuda_graph_mode = mode;
    const GraphRun g = cuda_graph_run(tokens, decode_only, so);
    return std::pair{g.padding_tokens, g.eager};
  };
  using M = CudaGraphMode;
  // 11 tokens -> capture size 16; 3 -> 4; 17 is above the largest: eager, as it is.
  for (const M m : {M::kPiecewise, M::kFull, M::kFullAndPiecewise}) {
    CHECK(run(m, 11, false) == std::pair<std::int64_t, bool>{5, false});
    CHECK(run(m, 3, true) == std::pair<std::int64_t, bool>{1, false});
    CHECK(run(m, 17, true) == std::pair<std::int64_t, bool>{0, true});
  }
  // FULL_DECODE_ONLY: a step with a prefill is eager whatever its size.
  CHECK(run(M::kFullDecodeOnly, 3, true) == std::pair<std::int64_t, bool>{1, false});
  CHECK(run(M::kFullDecodeOnly, 11, false) == std::pair<std::int64_t, bool>{0, true});
  // NONE (--enforce-eager): every step.
  CHECK(run(M::kNone, 3, true) == std::pair<std::int64_t, bool>{0, true});
  // Not modelled (V0-era engines, options set by hand): padded up to the size, never eager.
  CHECK(run(M::kNotModelled, 11, false) == std::pair<std::int64_t, bool>{5, false});
  CHECK(run(M::kNotModelled, 17, false) == std::pair<std::int64_t, bool>{0, false});
  // No capture size: every graph mode runs eagerly; the budget caps the largest size.
  so.cuda_graph_max_size = 0;
  CHECK(run(M::kFullAndPiecewise, 3, true) == std::pair<std::int64_t, bool>{0, true});
  so.cuda_graph_max_size = 512;
  so.max_num_batched_tokens = 8;
  CHECK(run(M::kPiecewise, 8, true) == std::pair<std::int64_t, bool>{0, false});
}
