#include "sim/options.h"

#include <algorithm>
#include <limits>

#include "common/error.h"

namespace kvsim::sim {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> find_name(std::string_view name, const std::string_view (&names)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

template <std::size_t N>
std::vector<std::string> all_names(const std::string_view (&names)[N]) {
  return std::vector<std::string>(std::begin(names), std::end(names));
}

// Indexed by the enum values.
constexpr std::string_view kSchedulerNames[] = {"vllm", "chunked-prefill", "static", "vllm-v1"};
constexpr std::string_view kPreemptionNames[] = {"recompute", "swap"};
constexpr std::string_view kRouterNames[] = {"round-robin", "least-outstanding", "least-kv",
                                             "prefix-aware"};
constexpr std::string_view kCudaGraphModeNames[] = {
    "", "NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};

Error flag_error(const std::string& flag, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, flag}, message);
}

}  // namespace

std::string_view scheduler_name(SchedulerKind kind) {
  return kSchedulerNames[static_cast<int>(kind)];
}
std::string_view preemption_name(PreemptionMode mode) {
  return kPreemptionNames[static_cast<int>(mode)];
}
std::string_view router_name(RouterKind kind) {
  return kRouterNames[static_cast<int>(kind)];
}
std::vector<std::string> scheduler_names() {
  return all_names(kSchedulerNames);
}
std::vector<std::string> preemption_names() {
  return all_names(kPreemptionNames);
}
std::vector<std::string> router_names() {
  return all_names(kRouterNames);
}
std::optional<SchedulerKind> parse_scheduler(std::string_view name) {
  return find_name<SchedulerKind>(name, kSchedulerNames);
}
std::optional<PreemptionMode> parse_preemption(std::string_view name) {
  return find_name<PreemptionMode>(name, kPreemptionNames);
}
std::optional<RouterKind> parse_router(std::string_view name) {
  return find_name<RouterKind>(name, kRouterNames);
}
std::string_view cuda_graph_mode_name(CudaGraphMode mode) {
  return kCudaGraphModeNames[static_cast<int>(mode)];
}
std::vector<std::string> cuda_graph_mode_names() {
  std::vector<std::string> names = all_names(kCudaGraphModeNames);
  names.erase(names.begin());  // kNotModelled
  return names;
}
std::optional<CudaGraphMode> parse_cuda_graph_mode(std::string_view name) {
  if (name.empty()) return std::nullopt;
  return find_name<CudaGraphMode>(name, kCudaGraphModeNames);
}

std::int64_t pipeline_virtual_engines(const SchedulerOptions& options, std::int64_t pp) {
  return options.kind == SchedulerKind::kVllmV1 ? 1 : pp;
}

std::int64_t pipeline_batch_queue(const SchedulerOptions& options, std::int64_t pp) {
  return options.kind == SchedulerKind::kVllmV1 ? pp : 1;
}

std::int64_t effective_max_num_batched_tokens(const SchedulerOptions& options) {
  if (options.max_num_batched_tokens > 0) return options.max_num_batched_tokens;
  switch (options.kind) {
    case SchedulerKind::kVllm:
      return std::max<std::int64_t>(options.max_model_len, 2048);
    case SchedulerKind::kChunkedPrefill:
    case SchedulerKind::kVllmV1:
      return 2048;
    case SchedulerKind::kStatic:
      return std::numeric_limits<std::int64_t>::max();
  }
  return 0;
}

std::int64_t cuda_graph_padded_tokens(std::int64_t tokens, std::int64_t max_size,
                                      std::int64_t max_num_batched_tokens) {
  const std::int64_t largest_allowed = std::min(max_size, max_num_batched_tokens);
  if (tokens <= 0 || largest_allowed <= 0) return tokens;
  for (std::int64_t size : {1, 2, 4}) {
    if (tokens <= size) return size <= largest_allowed ? size : tokens;
  }
  const std::int64_t padded = (tokens + 7) / 8 * 8;
  return padded <= largest_allowed ? padded : tokens;
}

std::int64_t default_cuda_graph_max_size(std::int64_t max_num_seqs) {
  return std::min<std::int64_t>(2 * max_num_seqs, 512);
}

GraphRun cuda_graph_run(std::int64_t tokens, bool decode_only, const SchedulerOptions& so) {
  const std::int64_t budget = effective_max_num_batched_tokens(so);
  const bool captured =
      so.cuda_graph_max_size > 0 && tokens <= std::min(so.cuda_graph_max_size, budget);
  const GraphRun graph{
      captured ? cuda_graph_padded_tokens(tokens, so.cuda_graph_max_size, budget) - tokens : 0,
      false};
  switch (so.cuda_graph_mode) {
    case CudaGraphMode::kNotModelled:  // padded up to the capture size, never eager
      return graph;
    case CudaGraphMode::kNone:
      return {0, true};
    case CudaGraphMode::kFullDecodeOnly:
      if (!decode_only) return {0, true};
      break;
    case CudaGraphMode::kPiecewise:
    case CudaGraphMode::kFull:
    case CudaGraphMode::kFullAndPiecewise:
      break;
  }
  // Above the largest capture size (or with none) the step runs eagerly, as it is.
  return captured ? graph : GraphRun{0, true};
}

namespace {

// KV offload's requirements (SimOptions::kv_offload_bytes).
void validate_offload(const SimOptions& options) {
  if (options.kv_offload_bytes > 0) {
    if (!options.enable_prefix_caching) {
      throw flag_error("--kv-offload-gib",
                       "the CPU offload tier holds prefix-cached blocks: it needs "
                       "--enable-prefix-caching");
    }
    if (options.scheduler.kind != SchedulerKind::kVllmV1 &&
        options.scheduler.kind != SchedulerKind::kChunkedPrefill) {
      throw flag_error("--kv-offload-gib",
                       "a request that loads offloaded blocks resumes its prefill when they "
                       "arrive, which needs --scheduler vllm-v1 or chunked-prefill (vLLM's "
                       "offloading connector is V1-only), not " +
                           std::string(scheduler_name(options.scheduler.kind)));
    }
  }
  if (options.kv_offload_bandwidth_bytes_per_s < 0) {
    throw flag_error("--kv-offload-bandwidth-gb-s", "expected a positive bandwidth");
  }
}

}  // namespace

void validate_options(const SimOptions& options) {
  const SchedulerOptions& s = options.scheduler;
  if (options.num_replicas < 1 || options.num_replicas > 100000) {
    throw flag_error("--replicas", "expected an integer in [1, 100000], got " +
                                       std::to_string(options.num_replicas));
  }
  if (s.max_num_seqs < 1) {
    throw flag_error("--max-num-seqs",
                     "expected a positive integer, got " + std::to_string(s.max_num_seqs));
  }
  if (s.max_num_batched_tokens < 0) {
    throw flag_error("--max-num-batched-tokens", "expected a positive integer, got " +
                                                     std::to_string(s.max_num_batched_tokens));
  }
  if (s.long_prefill_token_threshold < 0) {
    throw flag_error(
        "--long-prefill-token-threshold",
        "expected a non-negative integer, got " + std::to_string(s.long_prefill_token_threshold));
  }
  if (s.max_model_len < 1) {
    throw flag_error("--max-model-len",
                     "expected a positive integer, got " + std::to_string(s.max_model_len));
  }
  if (s.kind == SchedulerKind::kVllm && effective_max_num_batched_tokens(s) < s.max_model_len) {
    throw flag_error("--max-num-batched-tokens",
                     "the vllm scheduler computes a whole prompt in one step, so it needs at "
                     "least --max-model-len (" +
                         std::to_string(s.max_model_len) + ") tokens, got " +
                         std::to_string(s.max_num_batched_tokens) +
                         "; use --scheduler chunked-prefill for a smaller budget");
  }
  if (s.kind == SchedulerKind::kVllmV1 && s.preemption == PreemptionMode::kSwap) {
    throw flag_error("--preemption",
                     "vLLM V1 preempts by recompute only (it has no swap space); use "
                     "--preemption recompute, or a V0 scheduler (--scheduler vllm or "
                     "chunked-prefill) to model swapping");
  }
  if (s.max_num_partial_prefills < 1 || s.max_long_partial_prefills < 1) {
    throw flag_error(s.max_num_partial_prefills < 1 ? "--max-num-partial-prefills"
                                                    : "--max-long-partial-prefills",
                     "expected a positive integer");
  }
  if (s.max_long_partial_prefills > s.max_num_partial_prefills) {
    throw flag_error("--max-long-partial-prefills",
                     "expected at most --max-num-partial-prefills (" +
                         std::to_string(s.max_num_partial_prefills) + "), got " +
                         std::to_string(s.max_long_partial_prefills));
  }
  if (s.max_num_partial_prefills > 1 && s.kind != SchedulerKind::kChunkedPrefill) {
    throw flag_error("--max-num-partial-prefills",
                     "concurrent partial prefills are vLLM V0's chunked prefill: use --scheduler "
                     "chunked-prefill (--engine v0); vLLM V1 does not support them");
  }
  if (options.warm_prefix_cache && !options.enable_prefix_caching) {
    throw flag_error("--warm-prefix-cache",
                     "a warm prefix cache needs prefix caching (--enable-prefix-caching; on by "
                     "default with the vllm-v1 scheduler)");
  }
  validate_offload(options);
  if (s.cuda_graph_max_size < 0) {
    throw flag_error("--cuda-graph-sizes", "expected a non-negative integer, got " +
                                               std::to_string(s.cuda_graph_max_size));
  }
  if (options.block_size < 1) {
    throw flag_error("--block-size",
                     "expected a positive integer, got " + std::to_string(options.block_size));
  }
  if (options.time_limit_ns < 0) throw flag_error("--time-limit", "expected a non-negative time");
  validate_slo(options.slo);
  if (options.timeline_points < 0 || options.timeline_points == 1) {
    throw flag_error("--timeline-points", "expected 0 or an integer >= 2");
  }
  if (options.max_concurrency < 0) {
    throw flag_error("--max-concurrency", "expected a non-negative integer (0 = open loop), got " +
                                              std::to_string(options.max_concurrency));
  }
}

}  // namespace kvsim::sim
