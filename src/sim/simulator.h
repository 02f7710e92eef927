#pragma once
// The discrete-event serving simulator: a workload streamed through replicas of one deployment
// (router → per-replica scheduler, KV allocator and step-time cost model), and what came out.
//
// Event loop: events pop in (time, seq) order (see EventQueue). All events at one instant are
// applied first (arrivals are queued, finished steps produce their tokens, swap-ins complete);
// then every affected idle replica, in index order, starts its next step. Arrivals are read
// from the workload one at a time, just before they are due, so memory follows the number of
// live requests. The run ends when the workload is drained and every request has finished or
// been rejected, or at the time limit. A step end alone at its instant may be followed at once by
// that replica's next pure-decode steps, applied without events while none of them could end
// after anything else happens (fast forward, SimOptions::fast_forward: the same results).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/units.h"
#include "cost/cost_model.h"
#include "cost/pipeline_model.h"
#include "memory/allocator.h"
#include "sim/metrics.h"
#include "sim/options.h"
#include "sim/request.h"
#include "trace/request.h"

namespace kvsim::sim {

struct SimSetup {
  SimOptions options;
  // Builds one replica's KV allocator (called once per replica; each gets its own).
  std::function<std::unique_ptr<memory::Allocator>()> make_allocator;
  // Step times, shared by every replica. Must outlive the run.
  const cost::CostModel* cost_model = nullptr;
  // Pipeline parallelism (pp > 1): the same model as cost_model, by stage. Each replica (each
  // data-parallel rank of it) books its steps on the stages (sim/pipeline_clock.h): with the
  // vllm-v1 scheduler one engine whose batch queue holds pp steps in flight (vLLM V1), else one
  // virtual engine per stage (vLLM V0: own scheduler, 1/pp of the KV blocks) sharing them
  // (sim::pipeline_virtual_engines). The allocators must be sized to match (BuiltDeployment).
  // Null: one engine per replica (per rank).
  const cost::PipelineCostModel* pipeline = nullptr;
  // Data parallelism (vLLM's --data-parallel-size): each replica runs `size` engines, one per
  // rank, each with its own scheduler and KV allocator (a whole one: the ranks hold separate
  // GPUs); a request joins the rank with the lowest 4 × waiting + running (vLLM's DP load
  // balancer). With `lockstep` (an MoE model, whose MoE layers compute every rank's tokens) the
  // ranks step together: a step starts on all of them at once, each padded to the most tokens
  // any rank runs (vLLM's DP padding), an idle rank running a one-token dummy batch, and lasts as
  // long as the slowest rank's, priced with StepBatch::moe_group_tokens. With `pipeline` (not in
  // lockstep), each rank has its own stages (and virtual engines, vLLM V0: the balancer picks the
  // rank by its engines' summed score, then the rank's engine as above).
  struct DataParallel {
    std::int64_t size = 1;
    bool lockstep = false;
  };
  DataParallel data_parallel;
  // Disaggregated serving (DistServe; vLLM's prefill/decode instances): `prefill.num_replicas`
  // prefill-only replicas, with their own step costs and KV allocators, take every arrival
  // (routed among them by options.router); each request that has more than its first token to
  // produce then has its KV moved to one of the options.num_replicas decode replicas (the least
  // loaded, by options.router's measure; round-robin stays round-robin), which admits it as soon
  // as it has room for that KV and decodes it (with data_parallel, on the replica's rank that
  // vLLM's balancer picks; the ranks step together as above). A prefill engine sends one prompt
  // at a time: latency_s + prompt tokens × bytes_per_token / bandwidth, queued behind its earlier
  // sends; it frees the KV when the transfer ends. TTFT is the first token on the prefill
  // replica.
  struct PrefillPool {
    std::int64_t num_replicas = 0;  // 0: aggregated serving
    // Each prefill replica's data-parallel ranks (engines of its own; in lockstep for an MoE
    // model, as above, priced by cost_model). A prompt is prefilled on one rank, which sends it.
    DataParallel data_parallel;
    const cost::CostModel* cost_model = nullptr;
    std::function<std::unique_ptr<memory::Allocator>()> make_allocator;
    Bytes bytes_per_token = 0;  // KV moved per prompt token (all parallel streams)
    double bandwidth = 0;       // bytes/s over all parallel streams; > 0
    double latency_s = 0;
  };
  PrefillPool prefill;
  // With options.warm_prefix_cache and prefix caching: the requests whose prompt blocks the
  // prefix caches hold when the run starts (every replica's; of a replica's engines — pipeline
  // virtual engines, data-parallel ranks — the k-th request's only engine k mod engines). Before
  // the first event each prompt is admitted whole and freed, in order (an earlier run of the same
  // requests leaves the cache so, its least recently used blocks evicted first when it is full);
  // the warm-up counts in no metric or prefix-cache statistic. Read to its end once. Null: a cold
  // cache.
  trace::TraceReader* warm_prefixes = nullptr;
};

struct SimProgress {
  TimeNs now = 0;
  std::int64_t arrived = 0;
  std::int64_t ended = 0;  // finished or rejected
  std::int64_t live = 0;
};

// One engine step, as it starts: which engine (the index Request::replica holds), when it runs
// (start_ns to end_ns, swap-out copy included) and the batch the cost model timed. `batch` points
// into the engine's step plan and is valid only during the call.
struct StepEvent {
  std::uint32_t engine = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  const cost::StepBatch* batch = nullptr;
};

// Optional hooks for the caller (request log, progress bar, overhead calibration). Called on the
// simulating thread.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  // An engine step has started (one virtual call per step; the default does nothing).
  virtual void on_step(const StepEvent& step) { (void)step; }
  // Whether on_step is wanted: a run of pure-decode steps is then stepped one by one, never
  // fast-forwarded (SimOptions::fast_forward), so that every step is seen.
  virtual bool wants_steps() const { return false; }
  // A request has ended: finished, rejected, or (at the end of a time-limited run) still live or
  // read but not sent (arrival_ns -1, replica Request::kNoReplica).
  virtual void on_request_end(const Request& request) { (void)request; }
  // Every so many events.
  virtual void on_progress(const SimProgress& progress) { (void)progress; }
};

struct MemoryFractions {
  double token_states = 0, reservation = 0, internal_fragmentation = 0, external_fragmentation = 0,
         free = 0;
};

// One timeline sample: the state in force at time t.
struct TimelinePoint {
  TimeNs t = 0;
  std::int64_t running = 0;  // all replicas
  std::int64_t waiting = 0;  // all replicas (swapped-out requests included)
  // Per GPU, averaged over replicas: allocated (token states + reservation + internal
  // fragmentation), of which reservation, and unallocated (free + external fragmentation).
  Bytes used_bytes = 0, reserved_bytes = 0, free_bytes = 0;
  // The five-way split of the same bytes: used = token states + reservation + internal
  // fragmentation; free_bytes = external fragmentation + free (evictable prefix blocks included).
  Bytes token_state_bytes = 0, internal_fragmentation_bytes = 0, external_fragmentation_bytes = 0;
};

enum class SaturationVerdict : std::uint8_t { kStable, kQueueGrowing };
const char* saturation_name(SaturationVerdict verdict);  // "stable", "queue_growing"
// The verdict is "queue_growing" when queueing delay grows faster than kSaturationSlope seconds
// per second of arrival time (least squares over every request): arrivals outpace service by
// about 5% or more. Fewer than kSaturationMinRequests requests are too few to tell: "stable".
inline constexpr double kSaturationSlope = 0.05;
inline constexpr std::int64_t kSaturationMinRequests = 100;

struct SimResult {
  Metrics metrics{SloOptions{}};
  // Still live at the time limit, plus the one request read ahead whose arrival is after it:
  // completed + rejected + unfinished = every request read from the workload.
  std::int64_t requests_unfinished = 0;
  bool hit_time_limit = false;
  TimeNs duration_ns = 0;  // first arrival (t = 0) to the last event (or the time limit)

  std::int64_t num_replicas = 0;
  std::int64_t capacity_slots = 0;  // KV token slots of one replica
  Bytes bytes_per_slot = 0;         // per GPU
  Bytes capacity_bytes = 0;         // KV bytes one replica's allocator manages, per GPU
  MemoryFractions fraction;         // time-weighted over all replicas, sum to 1
  // The most bytes (per GPU) any replica held for live sequences at once (token states +
  // reservation + internal fragmentation).
  Bytes peak_used_bytes = 0;
  double mean_running = 0;  // time-weighted, per replica (per data-parallel rank)
  double mean_waiting = 0;  // time-weighted, per replica (per data-parallel rank)
  // The largest batch and queue of any replica (per data-parallel rank); a pipelined replica's
  // engines' peaks summed, an upper bound when they peak apart (as peak_used_bytes).
  std::int64_t max_running = 0;
  std::int64_t max_waiting = 0;
  std::vector<std::int64_t> completed_per_replica;
  std::int64_t num_prefix_routed = 0;

  SaturationVerdict saturation = SaturationVerdict::kStable;
  double queue_delay_slope = 0;                     // see kSaturationSlope
  std::int64_t outstanding_at_end_of_arrivals = 0;  // live requests when the last one arrived

  std::uint64_t num_events = 0;
  std::vector<TimelinePoint> timeline;  // options.timeline_points > 0 only
  TimeNs timeline_interval_ns = 0;

  // Prefix cache, summed over the replicas' allocators (memory::PrefixCacheStats): prompt tokens
  // of admissions that looked up the cache, and of those, tokens found cached.
  std::int64_t prefix_query_tokens = 0;
  std::int64_t prefix_hit_tokens = 0;
  // KV offload (SimOptions::kv_offload_bytes > 0): tokens found in the CPU tier (loaded, not
  // recomputed) and the tiers' counters, summed over the replicas' allocators.
  bool offload_enabled = false;
  std::int64_t prefix_cpu_hit_tokens = 0;
  memory::OffloadStats offload;
  // vLLM's (GPU) prefix-cache hit rate: hit tokens / looked-up tokens (0 when none looked up).
  double prefix_cache_hit_rate() const {
    return prefix_query_tokens > 0
               ? static_cast<double>(prefix_hit_tokens) / static_cast<double>(prefix_query_tokens)
               : 0.0;
  }
};

// Runs the workload to the end. Throws kvsim::Error on bad options (validate_options) or a bad
// request from the workload (non-positive lengths, arrivals going backwards); the reader's own
// errors propagate.
SimResult simulate(const SimSetup& setup, trace::TraceReader& workload,
                   SimObserver* observer = nullptr);

// The allocator-size content ids of a prompt's leading full blocks, from the workload's prefix
// hashes (`prefix_block_tokens` tokens each): block k (tokens [k·b, (k+1)·b)) gets
// hash_combine(prefix hash of its last token, k). Only blocks wholly inside both the prompt and
// the hashed prefix get an id. Clears `out` first.
void expand_prefix_blocks(const trace::RequestSpec& spec, std::int64_t block_size,
                          std::vector<std::uint64_t>& out);

}  // namespace kvsim::sim
