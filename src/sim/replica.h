#pragma once
// One copy of the deployment: its request queues, its KV allocator, its scheduler and the clock
// of its engine steps. The simulator drives it with events; a Scheduler forms each step through
// the primitives in the "for schedulers" section.
//
// Invariants:
//   - every live request of this replica is in exactly one of waiting, running, swapped,
//     swapping-in (counted; requests loading offloaded prefix blocks included), held (static
//     batching's finished rows) or transferring (a prefill-only replica's handed-off requests,
//     whose KV it still holds);
//   - running is in admission order (newest last: the preemption victim);
//   - a request holds GPU room iff it is running, swapping in or held (and host room while
//     swapped); kv_tokens is that room in tokens, and computed <= kv_tokens;
//   - at most one step is in flight (batch_queue of them with vLLM V1's batch queue); their
//     plans hold only running or held requests, and a running request's in_flight_tokens are
//     its live items' tokens in them;
//   - the memory accounting refreshed after every change satisfies
//     token_states + reservation + internal + external + free == capacity.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/int128.h"
#include "common/units.h"
#include "cost/cost_model.h"
#include "memory/accounting.h"
#include "memory/allocator.h"
#include "sim/event_queue.h"
#include "sim/metrics.h"
#include "sim/options.h"
#include "sim/request.h"
#include "sim/step_plan.h"

namespace kvsim::sim {

class Scheduler;
class PipelineClock;

// Receives requests as they end (finished or rejected); owned by the simulator.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  // `slot` has finished or been rejected; its metrics are recorded. The sink may release the
  // slot unless `keep` (static batching keeps finished rows until the batch ends).
  virtual void on_request_end(RequestPool::Slot slot, bool keep) = 0;
  // A kept slot may now be released.
  virtual void on_release(RequestPool::Slot slot) = 0;
  // Disaggregated serving: a prefill-only replica has produced `slot`'s first token; its KV stays
  // there (Replica::release_transferred) until the sink has moved it to a decode instance.
  virtual void on_prefill_done(RequestPool::Slot slot) { (void)slot; }
};

// Time integrals of one replica's queue lengths, in requests × ns.
struct ReplicaIntegrals {
  using U128 = UInt128;
  U128 running = 0, waiting = 0;
  TimeNs elapsed = 0;
};

enum class AdmitStatus : std::uint8_t { kAdmitted, kNoRoom, kNeverFits };

class Replica {
 public:
  struct Context {
    RequestPool* pool = nullptr;
    Metrics* metrics = nullptr;
    EventQueue* events = nullptr;
    RequestSink* sink = nullptr;
  };

  // `pipeline` (pipeline parallelism): the stages this replica's steps are booked on instead of
  // taking cost_model's step time; shared with its sibling virtual engines (vLLM V0), or its own.
  // `batch_queue` (vLLM V1's EngineCore batch queue, one per pipeline stage): up to that many
  // steps in flight at once, each booked on `pipeline` when it starts and ending in the order
  // they started. A step's scheduling sees the requests of the steps in flight: a prefilling
  // one may take its next chunk, a decoding one waits for its token (Request::in_flight_tokens).
  // When a scheduling pass finds nothing to run while a step is in flight, the engine blocks
  // until the oldest step ends (busy() until then; arrivals wait), as vLLM's engine loop does.
  Replica(std::uint32_t index, const SimOptions& options,
          std::unique_ptr<memory::Allocator> allocator, const cost::CostModel& cost_model,
          Context context, PipelineClock* pipeline = nullptr, std::int64_t batch_queue = 1);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // --- driven by the simulator ---

  // A new request routed here: queued, or rejected at once when it can never be served.
  void enqueue(RequestPool::Slot slot, TimeNs now);
  // When not busy(): forms the next step and returns its end time, or nullopt when there is
  // nothing runnable now (the replica then waits for an arrival, a swap-in to complete, or, with
  // a step in flight, that step's end).
  std::optional<TimeNs> start_step(TimeNs now);
  // The oldest step in flight ended at `now`: tokens are produced, finished requests released.
  void finish_step(TimeNs now);
  // A swap-in issued by the scheduler, or an admission's load from the CPU offload tier, has
  // completed: the request (re)joins the running batch.
  void finish_swap_in(RequestPool::Slot slot, TimeNs now);
  // Adds the current state × (now − last time) to the integrals.
  void advance_to(TimeNs now);
  // Before the run (SimSetup::warm_prefixes): the prompt of `prompt_tokens` tokens with block
  // content ids `ids` is admitted whole and freed, leaving its full blocks in the prefix cache
  // (skipped when it does not fit). end_warm_up() then zeroes what the warm-up added to the
  // prefix-cache statistics and refreshes the accounting.
  void warm_prefix(std::uint64_t id, std::int64_t prompt_tokens,
                   std::span<const std::uint64_t> ids);
  void end_warm_up();
  // Disaggregated serving: this replica only prefills. A request that has produced its first
  // token and has more to produce leaves the running batch (kTransferring, its KV kept) and is
  // handed to the sink (RequestSink::on_prefill_done).
  void set_prefill_only() { prefill_only_ = true; }
  // Data parallelism in lockstep (SimSetup::DataParallel): the simulator prices this rank's steps
  // together with the other ranks'; start_step's returned end is then its start plus any
  // swap-out only.
  void set_lockstep() { lockstep_ = true; }
  // The transfer of `slot`'s KV has completed: its room is freed here.
  void release_transferred(RequestPool::Slot slot, TimeNs now);

  // Fast forward (sim/fast_forward.cpp): a run of pure-decode steps applied without events,
  // each exactly as start_step + finish_step would apply it. Call begin_fast_forward when idle,
  // right after the step that ended at `now`; it says whether the next steps qualify: a
  // vllm, chunked-prefill or vllm-v1 engine without a pipeline, nothing waiting, swapped or
  // swapping in, every running request decoding and holding room for exactly what it computed,
  // all of them within the token budget, and a cost model that prices decode totals. Then each
  // advance_decode_step runs the next step if it ends before `horizon` (when nothing else may
  // happen), and returns its end; nullopt ends the run, and end_fast_forward brings every running
  // request up to date (its next step is then an ordinary start_step). A request whose token goes
  // past its in-place room grows through the allocator in the step that needs it, as the scheduler
  // would, when the allocator promises that such grows succeed (the run ends before a step whose
  // grows it cannot promise). A request that produces its last token finishes in its step, as
  // finish_step would finish it, when `finishes` (the sink then schedules nothing at its end: no
  // client waits to send); otherwise the run ends before that step. O(1) per step, per grow and
  // per finish; O(running) at the beginning and the end. begin_fast_forward
  // declines, with nothing set up, when the run's first step would not end before `horizon`.
  bool begin_fast_forward(TimeNs now, TimeNs horizon, bool finishes);
  // `straddle_limit`: when the next step would end at or after `horizon` but before this, the
  // run stays open (launch_pending) and the replica's next start_step runs that step in flight:
  // its start applied then, its end an ordinary step-end event (finish_step lands it), exactly as
  // an ordinary step's, with events between them seeing the state an ordinary step leaves.
  std::optional<TimeNs> advance_decode_step(TimeNs horizon, TimeNs straddle_limit);
  bool launch_pending() const { return ff_.active && ff_.launch; }
  void end_fast_forward();
  // Closes the memory integrals at the end of the run (`now` >= every earlier time).
  void finish(TimeNs now);

  // No step can start now: the batch queue is full (one step in flight without a queue), or the
  // engine waits for its oldest step to end.
  bool busy() const { return busy_; }
  // The swap-out copy the step in flight waited for before computing (0 without one).
  TimeNs step_swap_out_ns() const { return step_swap_out_ns_; }
  std::uint32_t index() const { return index_; }
  // Requests routed here and not yet ended.
  std::int64_t num_outstanding() const;
  // Waiting requests, those not yet seen by the scheduler (async scheduling's inbox) included.
  std::int64_t num_waiting() const {
    return static_cast<std::int64_t>(waiting_.size() + inbox_.size());
  }
  std::int64_t num_running() const { return static_cast<std::int64_t>(running_.size()); }
  // Allocated fraction of the KV cache (token states + reservation + internal fragmentation).
  double kv_usage() const;
  // The five quantities in bytes (per GPU), as of the last change.
  const memory::ByteAccounting& accounting() const { return accounting_; }
  // Their time-weighted integrals and the peak of used bytes.
  const memory::TimeWeightedAccounting& memory_over_time() const { return memory_time_; }
  std::int64_t capacity_slots() const { return capacity_slots_; }
  Bytes bytes_per_slot() const { return allocator_->bytes_per_slot(); }
  // The allocator's counters; the prefix-cache ones without the warm-up's.
  memory::AllocatorStats allocator_stats() const;
  const ReplicaIntegrals& integrals() const { return integrals_; }
  std::int64_t max_running() const { return max_running_; }
  std::int64_t max_waiting() const { return max_waiting_; }
  std::int64_t num_completed() const { return num_completed_; }

  // --- for schedulers ---

  Request& request(RequestPool::Slot slot) { return (*ctx_.pool)[slot]; }
  std::deque<RequestPool::Slot>& waiting() { return waiting_; }
  std::vector<RequestPool::Slot>& running() { return running_; }
  std::deque<RequestPool::Slot>& swapped() { return swapped_; }
  std::vector<RequestPool::Slot>& held() { return held_; }
  std::int64_t num_swapping_in() const { return static_cast<std::int64_t>(swapping_in_.size()); }
  std::int64_t num_swapped() const { return static_cast<std::int64_t>(swapped_.size()); }
  // Live requests that have not ended, in no particular order (for end-of-run reporting).
  template <typename Fn>
  void for_each_unfinished(Fn fn) const {
    for (RequestPool::Slot s : waiting_) fn(s);
    for (RequestPool::Slot s : inbox_) fn(s);
    for (RequestPool::Slot s : running_) fn(s);
    for (RequestPool::Slot s : swapped_) fn(s);
    for (RequestPool::Slot s : swapping_in_) fn(s);
    for (RequestPool::Slot s : transferring_) fn(s);
  }
  // The plan being formed (the one start_step formed last, once it returns).
  StepPlan& plan() { return *plan_; }
  // Nothing on the GPU: no running, swapping-in or held request.
  bool holds_nothing() const;
  // Preemptions made during the current scheduling pass.
  std::int64_t preemptions_this_pass() const { return preemptions_this_pass_; }

  // Asks the allocator for room for the first `num_tokens` tokens of the waiting head `slot`.
  // kNoRoom leaves everything unchanged; kNeverFits means it failed with nothing else on the
  // GPU (the scheduler rejects it). On kAdmitted, *cached_tokens is the prefix-cache hit.
  AdmitStatus try_admit(RequestPool::Slot slot, std::int64_t num_tokens,
                        std::int64_t* cached_tokens);
  // The prefix-cache hit the waiting head `slot` would find if admitted with `num_tokens` tokens
  // (0 without prefix caching).
  std::int64_t cached_prefix(RequestPool::Slot slot, std::int64_t num_tokens) const;
  // Undoes try_admit (e.g. the step's token budget turned out too small).
  void undo_admit(RequestPool::Slot slot);
  // Moves the admitted waiting head to the end of running, in prefill, with `computed` tokens
  // already in the cache (prefix hit, capped below the prefill target). Returns false when its
  // admission found blocks in the CPU offload tier: it is loading them instead (queued on the
  // PCIe link, counted as swapping in) and joins running when they arrive, so the caller plans
  // nothing for it now.
  bool start_running(RequestPool::Slot slot, std::int64_t computed);
  // Room for `num_tokens` more tokens of a running request; false (nothing changed) if none.
  bool try_grow(RequestPool::Slot slot, std::int64_t num_tokens);
  // Room for the first `total_tokens` tokens of a running request (it may hold some already, e.g.
  // from a canceled item), preempting the newest running requests until it fits. false when
  // `slot` itself had to be preempted.
  bool make_room_or_preempt(RequestPool::Slot slot, std::int64_t total_tokens);
  // Preempts the newest running request (swap if chosen and the allocator's CPU swap space takes
  // it, else recompute) and cancels its items in the plan; returns it.
  RequestPool::Slot preempt_newest();
  // Rejects the waiting head.
  void reject_waiting_head(RejectReason reason);
  // Tries to bring the swapped head back: GPU room is taken now and the copy is queued on the
  // replica's PCIe link; it rejoins running when the copy completes. false if no room. When the
  // allocator refuses with nothing else on the GPU, the request is sent back to recompute
  // instead (head of the waiting queue) and true is returned.
  bool try_swap_in_head();
  // Frees every held (finished, static batching) request.
  void release_held();
  // Adds items to the step plan.
  void plan_prefill(RequestPool::Slot slot, std::int64_t num_tokens);
  void plan_decode(RequestPool::Slot slot);
  void plan_padding(RequestPool::Slot slot);

 private:
  // Frees `r`'s KV cache.
  void release_kv(Request& r);
  // Deferred growth: `r` now holds exactly what the allocator was told; its in-place room is
  // asked for again. tell_allocator() first tells the allocator of r's deferred tokens.
  void note_told(Request& r);
  void tell_allocator(Request& r);
  // Frees `slot`'s KV cache and puts it back at the head of the queue to recompute from scratch.
  void requeue_for_recompute(RequestPool::Slot slot);
  memory::SeqInfo seq_info(const Request& r, bool with_prefix) const;
  // Queues the admitted `slot`'s load from the CPU offload tier on the PCIe link.
  void start_load(RequestPool::Slot slot);
  void produce_token(RequestPool::Slot slot, TimeNs now);
  // After a step: the finished requests (and a prefill-only replica's handed-off ones) leave the
  // running list, then each releases its KV (or is held) and ends, in running order.
  void release_finished();
  // Inter-token gaps of one step go to the ITL histogram in runs of equal length.
  void note_token_gap(TimeNs gap_ns);
  void flush_token_gaps();
  void reject(RequestPool::Slot slot, RejectReason reason, TimeNs now);
  void refresh_accounting();
  // Moves the inbox to the end of waiting_ (arrival order kept).
  void join_inbox();
  // The replica's accounting from the allocator's: deferred tokens moved to token states.
  memory::ByteAccounting with_deferred(memory::ByteAccounting from_allocator) const;

  std::uint32_t index_;
  const SimOptions& options_;
  std::unique_ptr<memory::Allocator> allocator_;
  const cost::CostModel* cost_model_;
  PipelineClock* pipeline_ = nullptr;
  std::unique_ptr<Scheduler> scheduler_;
  Context ctx_;

  std::deque<RequestPool::Slot> waiting_;
  // SchedulerOptions::async_scheduling: requests that arrived while a step was in flight, in
  // arrival order. The next step's batch was decided without them; they join waiting_ once it
  // is (join_inbox), unless the engine had nothing else to decide on.
  std::vector<RequestPool::Slot> inbox_;
  std::vector<RequestPool::Slot> running_;
  std::deque<RequestPool::Slot> swapped_;
  std::vector<RequestPool::Slot> held_;
  std::vector<RequestPool::Slot> swapping_in_;
  std::vector<RequestPool::Slot> transferring_;  // prefill-only: handed off, KV still held
  bool prefill_only_ = false;
  bool lockstep_ = false;
  std::vector<RequestPool::Slot>
      pending_swap_ins_;  // issued in this pass; link time assigned after

  // The plans of the steps in flight, oldest at front_ (a ring; one plan without a batch queue),
  // and the one formed last.
  std::vector<StepPlan> plans_;
  std::size_t front_ = 0;
  std::size_t in_flight_ = 0;
  StepPlan* plan_ = nullptr;  // plans_' current
  bool queued_ = false;       // a batch queue: requests count their tokens in flight
  bool busy_ = false;
  TimeNs step_start_ns_ = 0;      // when the step in flight (or the last one) started
  TimeNs last_step_end_ns_ = -1;  // when the last step ended
  TimeNs step_swap_out_ns_ = 0;
  TimeNs now_ = 0;
  std::int64_t preemptions_this_pass_ = 0;

  std::int64_t capacity_slots_ = 0;
  memory::PrefixCacheStats warm_up_prefix_stats_;  // counted by warm_prefix, left out of stats
  // Σ (kv_tokens − kv_in_allocator) over requests on the GPU: token states the allocator still
  // counts as reservation (refresh_accounting moves them).
  std::int64_t deferred_tokens_ = 0;
  TimeNs link_free_ns_ = 0;  // when the PCIe link finishes its queued copies (swaps, loads)

  memory::ByteAccounting accounting_;
  memory::TimeWeightedAccounting memory_time_;
  ReplicaIntegrals integrals_;
  TimeNs integrated_to_ = 0;
  std::int64_t max_running_ = 0;
  std::int64_t max_waiting_ = 0;
  std::int64_t num_completed_ = 0;
  TimeNs pending_gap_ns_ = 0;           // length of the run of gaps not yet in the metrics
  std::int64_t pending_gap_count_ = 0;  // its count

  // A fast-forward run in progress (between begin_ and end_fast_forward). Requests are named by
  // their position in running_ at the beginning (`pos`: running order, which finishes keep);
  // their own fields lag, by `steps - synced[pos]`; the totals here are current.
  struct FastForward {
    bool active = false;
    std::int64_t num_seqs = 0;        // running, every one decoding
    std::int64_t context_tokens = 0;  // Σ computed over running, now
    GraphRun graph;  // how a step of num_seqs tokens runs: its CUDA-graph rows, or eagerly
    std::int64_t steps_left = 0;  // steps before the first that must be ordinary
    std::int64_t steps = 0;       // steps advanced so far
    TimeNs first_step_ns = 0;     // step 0's time (priced by begin_fast_forward)
    bool launch = false;          // the next step is to run in flight (advance_decode_step)
    bool in_flight = false;       // it runs: its end is an event
    TimeNs launch_ns = 0;         // its time
    memory::ByteAccounting from_allocator;  // the allocator's, as of its last call
    // The requests' events, in rings of buckets by step modulo the ring size R (a power of two
    // above how far ahead any grow can be, a block's slots, and at least kMinRing): grows[step &
    // mask] holds the requests whose scheduling grows them through the allocator at `step` (only
    // when the allocator promises such grows, Allocator::sure_tail_grows; otherwise steps_left
    // stops at the first), finishes[step & mask] those producing their last token at `step`
    // (only with `finishes`; otherwise steps_left stops there). Finishes R or more steps ahead
    // wait in `far` and enter their ring every R steps.
    enum Kind : std::uint8_t { kGrow = 0, kFinish = 1 };
    static constexpr std::size_t kMinRing = 64;
    std::vector<std::vector<std::uint32_t>> grows, finishes;
    std::vector<std::pair<std::int64_t, std::uint32_t>> far;  // (step, pos)
    std::uint64_t mask = 0;
    std::vector<std::uint32_t> due;  // this step's grows or finishes, in running order
    std::vector<std::pair<TimeNs, std::int64_t>> first_gaps;  // (previous token, requests)
    std::vector<RequestPool::Slot> slots;                     // per pos
    std::vector<std::int64_t> synced;  // per pos: the step its fields are as of
  };
  // A fast-forward step's start (false, nothing done, when its grows are not promised) and end.
  bool start_decode_step();
  void finish_decode_step(TimeNs step_ns);
  // start_step / finish_step of the step a run left to run in flight (advance_decode_step).
  std::optional<TimeNs> launch_in_flight(TimeNs now);
  void land_in_flight(TimeNs now);
  // The time of a pure-decode step of n requests holding `context` tokens (totals).
  TimeNs decode_step_ns(std::int64_t n, std::int64_t context, const GraphRun& graph) const;
  // How a step of n tokens runs (sim::cuda_graph_run): the CUDA-graph rows it adds, or eagerly.
  GraphRun graph_run(std::int64_t n, bool decode_only) const;
  // Brings request `pos`'s counters to the start of fast-forward step `step`.
  void sync_fast_forward(std::uint32_t pos, std::int64_t step);
  // Moves the events of `kind` at step `step` into ff_.due (running order).
  void pop_due(FastForward::Kind kind, std::int64_t step);
  // Schedules request `pos`'s event of `kind` at step `step` (finishes: any step ahead; grows:
  // fewer than the ring's size).
  void push_event(FastForward::Kind kind, std::int64_t step, std::uint32_t pos);
  // Finishes the requests in ff_.due, which produced their last token at now_.
  void finish_due();
  FastForward ff_;
};

}  // namespace kvsim::sim
