#pragma once
// The simulator's options as plain structs: defaults in the member initialisers, each with what
// changing it does. Only config/ (scenario YAML) and cli/ (flags) fill them; validate_options()
// checks them, naming the flag.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.h"
#include "sim/slo.h"

namespace kvsim::sim {

enum class SchedulerKind : std::uint8_t {
  kVllm,            // continuous batching, FCFS, prefill-only steps first, then decode steps
  kChunkedPrefill,  // token budget per step: decodes first, then prefill chunks (vLLM v1, Sarathi)
  kStatic,          // request-level batches that run until their longest request finishes
  kVllmV1,          // vLLM V1: one token budget, running requests in order, then waiting ones
};
enum class PreemptionMode : std::uint8_t {
  kRecompute,  // the victim's KV is freed; it re-runs its prefill (prompt + tokens so far)
  kSwap,       // the victim's KV moves to the CPU swap space over PCIe and back later
};
enum class RouterKind : std::uint8_t {
  kRoundRobin,        // replicas in turn
  kLeastOutstanding,  // fewest waiting + running + swapped requests
  kLeastKvUsage,      // lowest allocated fraction of the KV cache
  kPrefixAware,       // longest cached prefix (approximate index), else least outstanding
};

// vLLM V1's compilation-config cudagraph_mode: which steps replay a captured CUDA graph (up to
// the largest capture size) and which run eagerly, their kernels issued one by one.
enum class CudaGraphMode {
  kNotModelled,       // graphs padded up to cuda_graph_max_size, no step eager (V0-era engines: 0)
  kNone,              // --enforce-eager: every step eager
  kPiecewise,         // every step up to the capture size (attention outside the graph)
  kFull,              // every step up to the capture size, whole
  kFullDecodeOnly,    // decode-only steps up to the capture size; steps with prefill eager
  kFullAndPiecewise,  // decode-only steps whole, the others piecewise (vLLM's default from 0.11)
};

// vLLM's names ("FULL_AND_PIECEWISE"); kNotModelled is "" and not among the settable names.
std::string_view cuda_graph_mode_name(CudaGraphMode mode);
std::vector<std::string> cuda_graph_mode_names();
std::optional<CudaGraphMode> parse_cuda_graph_mode(std::string_view name);

struct SchedulerOptions {
  SchedulerKind kind = SchedulerKind::kVllm;
  // Most sequences running on one replica at once (vLLM --max-num-seqs).
  std::int64_t max_num_seqs = 256;
  // Most tokens computed in one step (prefill tokens + one per decode). 0 = the default of the
  // scheduler: vllm max(max_model_len, 2048) (vLLM's default without chunked prefill; it must be
  // >= max_model_len), chunked-prefill 2048, static unlimited.
  std::int64_t max_num_batched_tokens = 0;
  // vllm-v1: largest prefill chunk of one request in one step; 0 = only the step budget.
  // chunked-prefill (V0): what counts as a long prefill for max_long_partial_prefills (0 = 4% of
  // max_model_len when max_num_partial_prefills > 1).
  std::int64_t long_prefill_token_threshold = 0;
  // chunked-prefill (V0): prefills that share a step's budget evenly (1 = one budget for all, in
  // order), and of those at most this many long ones (vLLM --max-num-partial-prefills,
  // --max-long-partial-prefills).
  std::int64_t max_num_partial_prefills = 1;
  std::int64_t max_long_partial_prefills = 1;
  PreemptionMode preemption = PreemptionMode::kRecompute;
  // Longest sequence (prompt + output) served; longer requests are rejected, as vLLM's API
  // server does. Required (> 0).
  std::int64_t max_model_len = 0;
  // CPU swap space per GPU for PreemptionMode::kSwap (vLLM --swap-space, 4 GiB). When it is
  // full, a victim is recomputed instead.
  Bytes swap_space_bytes = 4 * kGiB;
  // CUDA graphs (vLLM V1's piecewise graphs): a step of at most this many tokens runs the
  // graph captured for the next capture size (cuda_graph_padded_tokens), so its token-wise
  // layers compute the padding rows too. 0 = no graphs (eager, or a V0-era engine).
  std::int64_t cuda_graph_max_size = 0;
  CudaGraphMode cuda_graph_mode = CudaGraphMode::kNotModelled;
  // vllm-v1 with --async-scheduling: the engine decides step k+1's batch as soon as it has
  // launched step k, so a request that arrives while a step is in flight misses the batch
  // already decided and is first scheduled in the step after it (Replica::enqueue). An engine
  // with nothing to run decides when the request arrives.
  bool async_scheduling = false;
};

// vLLM V0's front end per request where no fitted profile gives one (roofline cost model): the
// API server's HTTP handling and tokenization, the hand-off to the engine loop and the first
// token's way back to the client. 10 ms: what `kvsim calibrate --from-run` fits to the two V0
// ground-truth sets in ../shared/data/groundtruth with per-request times, on top of their step
// costs (llm-k8s Llama-3.3-70B TP8, vLLM 0.8.3: 9.8 ms; DistServe's OPT-13B vLLM runs, early
// 2024: 11.3 ms). V1 runs (aiconfigurator's InferenceMAX rows) show no such term: 0 there.
inline constexpr TimeNs kVllmV0FrontendLatencyNs = 10 * kNsPerMs;

struct SimOptions {
  std::int64_t num_replicas = 1;  // copies of the deployment behind the router
  // Disaggregated serving: prefill-only replicas in front of the num_replicas (decode) replicas
  // (SimSetup::prefill); 0 = aggregated serving.
  std::int64_t num_prefill_replicas = 0;
  SchedulerOptions scheduler;
  RouterKind router = RouterKind::kRoundRobin;
  // Prefix caching on the KV allocator: requests with prefix hashes share cached blocks and skip
  // their prefill compute. Off: prefix hashes are ignored.
  bool enable_prefix_caching = false;
  // The prefix caches start warm: the server already served this workload's prompts (a benchmark
  // repeated against the same server), so they hold its prompt blocks, as far as they have room.
  // Needs prefix caching and a workload with prefix hashes (SimSetup::warm_prefixes).
  bool warm_prefix_cache = false;
  // KV offload to CPU memory (vLLM's OffloadingConnector, LMCache's local CPU cache): host bytes
  // per GPU that keep the prefix blocks the GPU prefix cache evicts; a later prompt that continues
  // its GPU hit with blocks held there loads them over PCIe instead of recomputing them, and runs
  // once the load is done. 0 = off. Needs prefix caching and a scheduler that resumes running
  // prefills (vllm-v1, chunked-prefill).
  Bytes kv_offload_bytes = 0;
  // Host → device bandwidth of those loads, bytes/s. 0 = the cost model's swap_time (the GPU
  // profile's PCIe bandwidth).
  double kv_offload_bandwidth_bytes_per_s = 0;
  // Allocator block size in tokens, used to split a workload's prefix blocks into the
  // allocator's blocks (the allocator itself is built with the same value).
  std::int64_t block_size = 16;
  // Stop at this simulated time; requests still in flight are reported as unfinished. 0 = run
  // until the workload is drained and every request has finished or been rejected.
  TimeNs time_limit_ns = 0;
  SloOptions slo;
  // Keep a downsampled timeline of at most this many evenly spaced points (0 = none).
  std::int64_t timeline_points = 0;
  // Closed-loop clients (trace::WorkloadOptions::max_concurrency): at most this many requests
  // outstanding (arrived, not yet completed or rejected); the next request waits for one to end
  // and arrives then, or at its own time if later. 0 = open loop.
  std::int64_t max_concurrency = 0;
  // Serial sessions (trace::WorkloadOptions::serial_sessions): a request with a session id is
  // sent when the session's previous request has ended (completed or rejected), or at its own
  // time if later, as a chat client sends a conversation's next turn once it has the answer; its
  // TTFT and E2E count from that send. Other sessions' requests go out on time meanwhile.
  bool serial_sessions = false;
  // The serving front end's latency per request (model::CostProfile::frontend_latency_s, else
  // kVllmV0FrontendLatencyNs for vLLM V0): a request reaches the routers and its engine's queue
  // this much after the client sent it; its TTFT, E2E and queueing time count from the send.
  // 0 = at once.
  TimeNs frontend_latency_ns = 0;
  // Advance runs of pure-decode steps of a replica in one go (sim/fast_forward.cpp) instead of
  // one event each. Results are identical either way (bit for bit; tests compare the two);
  // false only to test that, or to time the step-by-step loop.
  bool fast_forward = true;
};

// Canonical names, as flags and YAML spell them.
std::string_view scheduler_name(
    SchedulerKind kind);  // "vllm", "chunked-prefill", "static", "vllm-v1"
std::string_view preemption_name(PreemptionMode mode);  // "recompute", "swap"
std::string_view router_name(
    RouterKind kind);  // "round-robin", "least-outstanding", "least-kv", "prefix-aware"
std::vector<std::string> scheduler_names();
std::vector<std::string> preemption_names();
std::vector<std::string> router_names();
// nullopt when `name` is not one of the names above.
std::optional<SchedulerKind> parse_scheduler(std::string_view name);
std::optional<PreemptionMode> parse_preemption(std::string_view name);
std::optional<RouterKind> parse_router(std::string_view name);

// max_num_batched_tokens with its per-scheduler default applied.
std::int64_t effective_max_num_batched_tokens(const SchedulerOptions& options);

// How an engine runs `pp` pipeline stages. vLLM V1 (the vllm-v1 scheduler): one scheduler over
// the whole KV cache, whose batch queue holds up to pp steps in flight (EngineCore's
// step_with_batch_queue). Earlier engines (vLLM V0): pp virtual engines, each with its own
// scheduler, 1/pp of the cache and one step in flight. Both return 1 when pp is 1.
std::int64_t pipeline_virtual_engines(const SchedulerOptions& options, std::int64_t pp);
std::int64_t pipeline_batch_queue(const SchedulerOptions& options, std::int64_t pp);

// vLLM 0.10's CUDA-graph capture sizes up to `max_size`: 1, 2, 4, then every multiple of 8
// (never above `max_num_batched_tokens`). Returns the smallest capture size >= `tokens`, or
// `tokens` itself when it exceeds the largest one (the step then runs eagerly) or max_size is 0.
std::int64_t cuda_graph_padded_tokens(std::int64_t tokens, std::int64_t max_size,
                                      std::int64_t max_num_batched_tokens);
// vLLM 0.10's default largest capture size: min(2 × max_num_seqs, 512).
std::int64_t default_cuda_graph_max_size(std::int64_t max_num_seqs);

// How a step of `tokens` tokens runs under `so`'s graphs: padded to its capture size, or eagerly
// (not padded).
struct GraphRun {
  std::int64_t padding_tokens = 0;
  bool eager = false;
};
GraphRun cuda_graph_run(std::int64_t tokens, bool decode_only, const SchedulerOptions& so);

// Throws kvsim::Error naming the flag (e.g. "--max-num-seqs") for an out-of-range option:
// non-positive counts, a vllm token budget below max_model_len, a percentile outside (0, 100].
void validate_options(const SimOptions& options);

}  // namespace kvsim::sim
