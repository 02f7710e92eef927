#include "sim/simulator.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/assert.h"
#include "common/error.h"
#include "common/rng.h"
#include "sim/event_queue.h"
#include "sim/pipeline_clock.h"
#include "sim/replica.h"
#include "sim/router.h"

namespace kvsim::sim {

const char* saturation_name(SaturationVerdict verdict) {
  return verdict == SaturationVerdict::kStable ? "stable" : "queue_growing";
}

void expand_prefix_blocks(const trace::RequestSpec& spec, std::int64_t block_size,
                          std::vector<std::uint64_t>& out) {
  out.clear();
  if (spec.prefix_hashes.empty() || spec.prefix_block_tokens <= 0 || block_size <= 0) return;
  const std::int64_t hashed_tokens =
      static_cast<std::int64_t>(spec.prefix_hashes.size()) * spec.prefix_block_tokens;
  // Hash blocks past the ones the prompt needs describe the output that follows it (trace::
  // RequestSpec::prefix_hashes): then the ids go on over the output's full blocks too.
  const bool covers_output =
      static_cast<std::int64_t>(spec.prefix_hashes.size()) > trace::prompt_hash_blocks(spec);
  const std::int64_t content_tokens =
      covers_output ? spec.prompt_tokens + spec.output_tokens : spec.prompt_tokens;
  const std::int64_t num_blocks = std::min(content_tokens, hashed_tokens) / block_size;
  for (std::int64_t k = 0; k < num_blocks; ++k) {
    const std::int64_t last_token = (k + 1) * block_size - 1;
    const std::uint64_t prefix =
        spec.prefix_hashes[static_cast<std::size_t>(last_token / spec.prefix_block_tokens)];
    out.push_back(hash_combine(prefix, static_cast<std::uint64_t>(k)));
  }
}

namespace {

// At most `max_points` evenly spaced samples: when full, every other point is dropped and the
// interval doubles, so memory stays bounded whatever the simulated duration.
class TimelineRecorder {
 public:
  explicit TimelineRecorder(std::int64_t max_points) : max_points_(max_points) {}
  bool enabled() const { return max_points_ > 0; }

  // Records the current state for every sample time before `t`.
  template <typename StateFn>
  void sample_until(TimeNs t, StateFn state) {
    if (!enabled()) return;
    while (next_ < t) {
      TimelinePoint p = state();
      p.t = next_;
      points_.push_back(p);
      next_ += interval_;
      if (static_cast<std::int64_t>(points_.size()) >= max_points_) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < points_.size(); i += 2) points_[kept++] = points_[i];
        points_.resize(kept);
        interval_ *= 2;
        next_ = points_.back().t + interval_;
      }
    }
  }
  // The next sample time (kTimeNever when disabled): its point is the state after every event
  // up to it.
  TimeNs next_sample() const { return enabled() ? next_ : kTimeNever; }
  std::vector<TimelinePoint> take() { return std::move(points_); }
  TimeNs interval() const { return interval_; }

 private:
  std::int64_t max_points_;
  TimeNs interval_ = kNsPerMs;
  TimeNs next_ = 0;
  std::vector<TimelinePoint> points_;
};

class Simulator final : public RequestSink {
 public:
  Simulator(const SimSetup& setup, trace::TraceReader& workload, SimObserver* observer)
      : setup_(setup),
        opts_(setup.options),
        workload_(workload),
        observer_(observer),
        metrics_(setup.options.slo),
        timeline_(setup.options.timeline_points) {}

  SimResult run();

  void on_request_end(RequestPool::Slot slot, bool keep) override {
    ++ended_;
    const std::uint32_t session = pool_[slot].session;
    if (observer_) observer_->on_request_end(pool_[slot]);
    if (!keep) pool_.release(slot);
    if (session != Request::kNoSession) end_turn(session);
    if (held_by_client_) send_held();
  }
  void on_release(RequestPool::Slot slot) override { pool_.release(slot); }
  void on_prefill_done(RequestPool::Slot slot) override;

 private:
  bool read_next();
  void build_replicas();
  // Runs events up to `limit`; returns whether it stopped there. `now` ends at the last event.
  bool run_events(TimeNs limit, TimeNs& now);
  void dispatch(const Event& e, TimeNs now);
  // The replicas of one pool, each a group of engines (its data-parallel ranks, each rank's
  // pipeline virtual engines adjacent): the prefill pool (disaggregated serving:
  // replicas_[0, first_decode()), empty otherwise) and the decode pool (every replica when
  // aggregated).
  struct EnginePool {
    std::size_t first = 0;      // its first engine in replicas_
    std::int64_t replicas = 0;  // groups of `engines` adjacent engines
    std::int64_t engines = 1;   // engines per replica: dp × virtual engines per rank
    std::int64_t dp = 1;        // data-parallel ranks per replica (each on GPUs of its own)
    bool lockstep = false;      // the ranks step together (SimSetup::DataParallel::lockstep)
    const cost::CostModel* cost_model = nullptr;  // lockstep: prices each rank's batch
    std::vector<char> busy;                       // lockstep: a replica's step is in flight

    std::size_t end() const { return first + static_cast<std::size_t>(replicas * engines); }
    // The replica engine `engine` (one of this pool's) belongs to, and that replica's first.
    std::size_t group_of(std::size_t engine) const {
      return (engine - first) / static_cast<std::size_t>(engines);
    }
    std::size_t group_first(std::size_t group) const {
      return first + group * static_cast<std::size_t>(engines);
    }
    // Virtual engines per data-parallel rank (vLLM V0: its pipeline stages; else 1): they share its
    // GPUs.
    std::int64_t rank_engines() const { return engines / dp; }
  };
  EnginePool& pool_of(std::size_t engine) { return engine < first_decode() ? prefill_ : decode_; }
  const EnginePool& pool_of(std::size_t engine) const {
    return engine < first_decode() ? prefill_ : decode_;
  }
  // Sets up `pool` from `dp` (the first engine and replicas set): `rank_engines` virtual engines
  // per data-parallel rank.
  void set_pool(EnginePool& pool, const SimSetup::DataParallel& dp, std::int64_t rank_engines,
                const cost::CostModel* cost_model);
  void start_steps(TimeNs now);  // on every replica marked since the last call that is idle
  // Lockstep data parallelism (SimSetup::DataParallel): the engines of replica `group` of `pool`
  // start one step together, which ends when the slowest rank's does.
  void start_lockstep_step(EnginePool& pool, std::size_t group, TimeNs now);
  // After a lone step end of `replica` at `now`: its next pure-decode steps whose ends would be
  // the next events anyway (before any queued event, timeline sample or the time limit) are
  // applied at once (Replica::begin_fast_forward). `now` moves to the last one's end, where
  // start_steps then starts the next step as usual.
  void fast_forward(std::uint32_t replica, TimeNs limit, TimeNs& now);
  void count_batch(TimeNs now);  // one instant's events done: progress every so often
  void count_unfinished(SimResult& result, TimeNs end, bool hit_limit);
  void collect_replicas(SimResult& result) const;  // capacity, memory and load over time
  void on_arrival(TimeNs now);
  // A request is sent (its arrival_ns): it enters the front end, or joins at once. `session`:
  // its serial session's index (Request::kNoSession without one).
  void admit(const trace::RequestSpec& spec, std::uint32_t session, TimeNs now);
  // Serial sessions: the index of next_'s session record (a session starting takes a free one).
  std::uint32_t session_of_next();
  // Serial sessions: a session's request has ended; its next waiting request is sent at its own
  // time, or just after now if that has passed (send_held's rule).
  void end_turn(std::uint32_t session);
  void on_session_turn(const Event& e, TimeNs now);
  // Schedules the arrival of next_: now, or held until a closed-loop client is free.
  void schedule_next();
  void send_held();  // a client is free: the held request goes out at max(its time, now_ + 1)
  void mark(std::uint32_t replica);
  // Disaggregated serving: a prompt's KV has reached the decode pool; it joins a decode replica.
  void on_kv_transfer_done(const Event& e, TimeNs now);
  // A request reaches the engines: routed by what the routers see now, queued at its engine.
  void join(RequestPool::Slot slot, const trace::RequestSpec& spec, TimeNs now);
  // A request has passed the front end (the first of in_frontend_): it joins.
  void on_frontend_done(const Event& e, TimeNs now);
  // What the router sees of each replica of `pool` (its engines' unfinished requests summed,
  // their KV use averaged), into `loads`.
  void measure_loads(const EnginePool& pool, std::vector<ReplicaLoad>& loads) const;
  // The decode replicas start at this index (the prefill replicas come first).
  std::uint32_t first_decode() const { return static_cast<std::uint32_t>(decode_.first); }
  // The engine of replica `group` of `pool` a new request joins: with data-parallel ranks, the
  // rank with the lowest 4 × waiting + running (vLLM's balancer; its virtual engines' summed);
  // with virtual engines (pipeline parallelism), the rank's engine with the fewest unfinished
  // requests, as vLLM V0. The lowest of equals.
  std::uint32_t engine_for(const EnginePool& pool, std::size_t group) const;
  // The (decode) engine a request joins: the router picks a replica from their loads,
  // engine_for the engine within it.
  std::uint32_t route_to_engine(const trace::RequestSpec& spec);
  TimelinePoint current_state() const;

  const SimSetup& setup_;
  const SimOptions& opts_;
  trace::TraceReader& workload_;
  SimObserver* observer_;
  Metrics metrics_;
  RequestPool pool_;
  EventQueue events_;
  // One per engine: the prefill pool's, then the decode pool's; a pool's replica r has its
  // engines at [first + r × engines, ...).
  std::vector<std::unique_ptr<Replica>> replicas_;
  EnginePool prefill_, decode_;
  bool any_lockstep_ = false;                // a pool's ranks step together
  std::vector<cost::StepBatch> dp_batches_;  // lockstep: each rank's batch as priced
  // Disaggregated serving: the prefill replicas' router and when each prefill engine's outgoing
  // link is free.
  std::unique_ptr<Router> prefill_router_;
  std::vector<ReplicaLoad> prefill_loads_;
  std::vector<TimeNs> send_free_;
  std::vector<std::unique_ptr<PipelineClock>> clocks_;  // one per rank with a pipeline
  std::unique_ptr<Router> router_;
  std::vector<ReplicaLoad> loads_;
  std::vector<std::uint32_t> dirty_;
  std::vector<char> is_dirty_;
  TimelineRecorder timeline_;
  // Requests sent but still in the front end (SimOptions::frontend_latency_ns), with what the
  // routers will see of them, in send order: every one spends the same time there, so they
  // leave in this order too.
  std::deque<std::pair<RequestPool::Slot, trace::RequestSpec>> in_frontend_;

  trace::RequestSpec next_;  // the next request to arrive (when have_next_)
  bool have_next_ = false;
  TimeNs last_arrival_ns_ = 0;
  std::int64_t ended_ = 0;
  std::int64_t outstanding_at_last_arrival_ = 0;
  TimeNs now_ = 0;               // the time of the events being dispatched
  std::uint64_t batches_ = 0;    // instants whose events have been dispatched
  bool held_by_client_ = false;  // next_ waits for a closed-loop client (max_concurrency)
  // Serial sessions (SimOptions::serial_sessions): per session with a request out (sent, or due
  // to be sent by a kSessionTurn event), the ones read since, waiting for it in order; `waiting_`
  // counts those over all sessions (a closed loop's clients are busy with them). A session with
  // nothing out holds no record: its record (and index) is reused by the next session to start,
  // so memory follows the sessions active at once, not every session id of the workload.
  struct Session {
    std::string id;  // its key in session_index_
    bool out = false;
    std::deque<trace::RequestSpec> waiting;
  };
  std::unordered_map<std::string, std::uint32_t> session_index_;
  std::vector<Session> sessions_;
  std::vector<std::uint32_t> free_sessions_;  // indexes of records no session holds
  std::int64_t waiting_ = 0;
};

bool Simulator::read_next() {
  have_next_ = workload_.next(next_);
  if (!have_next_) return false;
  // Built only for an error: this runs once per request.
  const auto where = [this] { return "request " + std::to_string(next_.id); };
  if (next_.prompt_tokens < 1) {
    throw Error(ErrorLocation{workload_.describe(), 0, 0, "prompt_tokens"},
                where() + ": expected a positive prompt length, got " +
                    std::to_string(next_.prompt_tokens));
  }
  if (next_.output_tokens < 1) {
    throw Error(ErrorLocation{workload_.describe(), 0, 0, "output_tokens"},
                where() + ": expected a positive output length, got " +
                    std::to_string(next_.output_tokens));
  }
  if (next_.arrival_ns < last_arrival_ns_) {
    throw Error(ErrorLocation{workload_.describe(), 0, 0, "arrival"},
                where() + ": arrivals must not go backwards (" + std::to_string(next_.arrival_ns) +
                    " ns after " + std::to_string(last_arrival_ns_) + " ns)");
  }
  last_arrival_ns_ = next_.arrival_ns;
  return true;
}

void Simulator::mark(std::uint32_t replica) {
  if (is_dirty_[replica]) return;
  is_dirty_[replica] = 1;
  dirty_.push_back(replica);
}

void Simulator::admit(const trace::RequestSpec& spec, std::uint32_t session, TimeNs now) {
  const RequestPool::Slot slot = pool_.acquire();
  Request& r = pool_[slot];
  r.id = spec.id;
  r.prompt_tokens = spec.prompt_tokens;
  r.output_tokens = spec.output_tokens;
  r.arrival_ns = spec.arrival_ns;
  r.session = session;
  if (opts_.enable_prefix_caching) expand_prefix_blocks(spec, opts_.block_size, r.block_ids);
  ++metrics_.arrived;
  if (opts_.frontend_latency_ns > 0) {
    in_frontend_.emplace_back(slot, spec);
    events_.push(now + opts_.frontend_latency_ns, EventKind::kFrontendDone, 0, slot);
  } else {
    join(slot, spec, now);
  }
}

std::uint32_t Simulator::session_of_next() {
  const auto [it, added] = session_index_.try_emplace(next_.session_id, 0);
  if (added) {
    if (free_sessions_.empty()) {
      KVSIM_ASSERT(sessions_.size() < Request::kNoSession, "session indexes exhausted");
      free_sessions_.push_back(static_cast<std::uint32_t>(sessions_.size()));
      sessions_.emplace_back();
    }
    it->second = free_sessions_.back();
    free_sessions_.pop_back();
    sessions_[it->second].id = next_.session_id;
  }
  return it->second;
}

void Simulator::end_turn(std::uint32_t session) {
  Session& s = sessions_[session];
  if (s.waiting.empty()) {  // idle: its record is free for the next session to start
    s.out = false;
    session_index_.erase(s.id);
    free_sessions_.push_back(session);
    return;
  }
  // Still out: its next request is due (held by the event, not yet admitted).
  TimeNs& at = s.waiting.front().arrival_ns;
  at = std::max(at, now_ + 1);
  events_.push(at, EventKind::kSessionTurn, session);
}

void Simulator::on_session_turn(const Event& e, TimeNs now) {
  Session& s = sessions_[e.replica];
  const trace::RequestSpec spec = std::move(s.waiting.front());
  s.waiting.pop_front();
  --waiting_;
  admit(spec, e.replica, now);
}

void Simulator::on_arrival(TimeNs now) {
  if (opts_.serial_sessions && !next_.session_id.empty()) {
    const std::uint32_t session = session_of_next();
    Session& s = sessions_[session];
    if (s.out) {
      s.waiting.push_back(next_);  // sent when the session's request before it ends
      ++waiting_;
    } else {
      s.out = true;
      admit(next_, session, now);
    }
  } else {
    admit(next_, Request::kNoSession, now);
  }
  if (read_next()) {
    schedule_next();
  } else {
    outstanding_at_last_arrival_ = static_cast<std::int64_t>(pool_.num_live());
  }
}

void Simulator::schedule_next() {
  if (opts_.max_concurrency > 0) {
    if (metrics_.arrived + waiting_ - ended_ >= opts_.max_concurrency) {
      held_by_client_ = true;
      return;
    }
    // A closed loop runs behind the stream's own times: a request due earlier goes out now.
    next_.arrival_ns = std::max(next_.arrival_ns, now_);
  }
  events_.push(next_.arrival_ns, EventKind::kArrival);
}

void Simulator::send_held() {
  if (metrics_.arrived + waiting_ - ended_ >= opts_.max_concurrency) return;
  held_by_client_ = false;
  // Sent once the client has the answer that freed it (or at its own time, if later): TTFT and
  // E2E count from there, as the benchmark client measures them. The engine has already decided
  // its next step by then (vLLM schedules it as soon as it has processed the outputs that reach
  // the client), so the request arrives 1 ns after the step that starts now.
  next_.arrival_ns = std::max(next_.arrival_ns, now_ + 1);
  events_.push(next_.arrival_ns, EventKind::kArrival);
}

void Simulator::on_prefill_done(RequestPool::Slot slot) {
  const Request& r = pool_[slot];
  const std::size_t from = r.replica;
  // The tokens whose KV exists: the prompt (and any output recomputed with it).
  const auto bytes = static_cast<Bytes>(r.computed) * setup_.prefill.bytes_per_token;
  const TimeNs send_ns = std::llround(
      (setup_.prefill.latency_s + static_cast<double>(bytes) / setup_.prefill.bandwidth) * 1e9);
  send_free_[from] = std::max(send_free_[from], now_) + send_ns;
  metrics_.kv_transfer_bytes += bytes;
  events_.push(send_free_[from], EventKind::kKvTransferDone, r.replica, slot);
}

void Simulator::join(RequestPool::Slot slot, const trace::RequestSpec& spec, TimeNs now) {
  std::uint32_t target = 0;
  if (prefill_.replicas > 0) {
    measure_loads(prefill_, prefill_loads_);
    target = engine_for(prefill_, prefill_router_->route(spec, prefill_loads_));
  } else {
    target = route_to_engine(spec);
  }
  mark(target);
  replicas_[target]->enqueue(slot, now);
}

void Simulator::on_frontend_done(const Event& e, TimeNs now) {
  KVSIM_ASSERT(!in_frontend_.empty() && in_frontend_.front().first == e.request,
               "the front end passes requests on in the order they were sent");
  join(e.request, in_frontend_.front().second, now);
  in_frontend_.pop_front();
}

void Simulator::on_kv_transfer_done(const Event& e, TimeNs now) {
  replicas_[e.replica]->release_transferred(e.request, now);
  mark(e.replica);
  Request& r = pool_[e.request];
  metrics_.kv_transfer.add(now - r.first_token_ns);
  r.kv_received = r.computed;
  trace::RequestSpec spec;  // the decode router sees its lengths, not its prefix
  spec.id = r.id;
  spec.prompt_tokens = r.prompt_tokens;
  spec.output_tokens = r.output_tokens;
  const std::uint32_t target = route_to_engine(spec);
  mark(target);
  replicas_[target]->enqueue(e.request, now);
}

void Simulator::measure_loads(const EnginePool& pool, std::vector<ReplicaLoad>& loads) const {
  for (std::size_t g = 0; g < loads.size(); ++g) {
    ReplicaLoad load;
    for (std::int64_t e = 0; e < pool.engines; ++e) {
      const Replica& rep = *replicas_[pool.group_first(g) + static_cast<std::size_t>(e)];
      load.outstanding += rep.num_outstanding();
      load.kv_usage += rep.kv_usage() / static_cast<double>(pool.engines);
    }
    loads[g] = load;
  }
}

std::uint32_t Simulator::route_to_engine(const trace::RequestSpec& spec) {
  std::size_t group = 0;
  if (loads_.size() > 1) {
    measure_loads(decode_, loads_);
    group = router_->route(spec, loads_);
  }
  return engine_for(decode_, group);
}

std::uint32_t Simulator::engine_for(const EnginePool& pool, std::size_t group) const {
  const auto per_rank = static_cast<std::uint32_t>(pool.rank_engines());
  auto first = static_cast<std::uint32_t>(pool.group_first(group));
  if (pool.dp > 1) {
    const auto rank_score = [&](std::uint32_t rank_first) {
      std::int64_t score = 0;
      for (std::uint32_t i = rank_first; i < rank_first + per_rank; ++i) {
        score += 4 * replicas_[i]->num_waiting() + replicas_[i]->num_running();
      }
      return score;
    };
    std::uint32_t best = first;
    std::int64_t best_score = rank_score(first);
    for (std::int64_t r = 1; r < pool.dp; ++r) {
      const auto rank_first = static_cast<std::uint32_t>(first + r * per_rank);
      if (const std::int64_t score = rank_score(rank_first); score < best_score) {
        best = rank_first;
        best_score = score;
      }
    }
    first = best;
  }
  std::uint32_t best = first;
  for (std::uint32_t i = first + 1; i < first + per_rank; ++i) {
    if (replicas_[i]->num_outstanding() < replicas_[best]->num_outstanding()) best = i;
  }
  return best;
}

TimelinePoint Simulator::current_state() const {
  TimelinePoint p;
  memory::ByteAccounting sum;
  for (const auto& rep : replicas_) {
    const memory::ByteAccounting& a = rep->accounting();
    p.running += rep->num_running();
    p.waiting += rep->num_waiting() + rep->num_swapped();
    sum.token_states += a.token_states;
    sum.reservation += a.reservation;
    sum.internal_fragmentation += a.internal_fragmentation;
    sum.external_fragmentation += a.external_fragmentation;
    sum.free += a.free;
  }
  // A replica's pipeline engines share its GPUs, its data-parallel ranks hold GPUs of their own;
  // prefill replicas count as replicas.
  const auto n =
      static_cast<Bytes>(decode_.replicas * decode_.dp + prefill_.replicas * prefill_.dp);
  p.used_bytes = sum.used() / n;
  p.reserved_bytes = sum.reservation / n;
  p.free_bytes = (sum.free + sum.external_fragmentation) / n;
  p.token_state_bytes = sum.token_states / n;
  p.internal_fragmentation_bytes = sum.internal_fragmentation / n;
  p.external_fragmentation_bytes = sum.external_fragmentation / n;
  return p;
}

void Simulator::set_pool(EnginePool& pool, const SimSetup::DataParallel& dp,
                         std::int64_t rank_engines, const cost::CostModel* cost_model) {
  KVSIM_ASSERT(dp.size >= 1 && rank_engines >= 1, "ranks and engines per rank");
  KVSIM_ASSERT(!dp.lockstep || dp.size == 1 || rank_engines == 1,
               "ranks in lockstep without pipeline parallelism");
  pool.engines = dp.size * rank_engines;
  pool.dp = dp.size;
  pool.lockstep = dp.lockstep && dp.size > 1;
  pool.cost_model = cost_model;
  pool.busy.assign(static_cast<std::size_t>(pool.replicas), 0);
  any_lockstep_ = any_lockstep_ || (pool.lockstep && pool.replicas > 0);
  if (pool.lockstep && static_cast<std::int64_t>(dp_batches_.size()) < dp.size) {
    dp_batches_.resize(static_cast<std::size_t>(dp.size));
  }
}

void Simulator::build_replicas() {
  const Replica::Context ctx{&pool_, &metrics_, &events_, this};
  // Disaggregated: the prefill replicas come first, each one engine or a group of data-parallel
  // ranks (never a pipeline), prefill-only.
  prefill_.replicas = setup_.prefill.num_replicas;
  set_pool(prefill_, setup_.prefill.data_parallel, 1, setup_.prefill.cost_model);
  for (std::size_t i = 0; i < prefill_.end(); ++i) {
    replicas_.push_back(std::make_unique<Replica>(static_cast<std::uint32_t>(i), opts_,
                                                  setup_.prefill.make_allocator(),
                                                  *setup_.prefill.cost_model, ctx));
    replicas_.back()->set_prefill_only();
    if (prefill_.lockstep) replicas_.back()->set_lockstep();
  }
  if (prefill_.replicas > 0) {
    prefill_router_ = std::make_unique<Router>(
        opts_.router, prefill_.replicas, replicas_.front()->capacity_slots() * prefill_.engines);
    prefill_loads_.resize(static_cast<std::size_t>(prefill_.replicas));
    send_free_.assign(prefill_.end(), 0);
  }
  decode_.first = prefill_.end();
  decode_.replicas = opts_.num_replicas;
  // Pipeline stages: each rank runs virtual engines (vLLM V0) or one engine with a batch queue
  // (vLLM V1) on them.
  const std::int64_t stages = setup_.pipeline ? setup_.pipeline->num_stages() : 1;
  const std::int64_t batch_queue = pipeline_batch_queue(opts_.scheduler, stages);
  set_pool(decode_, setup_.data_parallel, pipeline_virtual_engines(opts_.scheduler, stages),
           setup_.cost_model);
  for (std::int64_t i = 0; i < decode_.replicas * decode_.engines; ++i) {
    PipelineClock* clock = nullptr;
    if (setup_.pipeline) {
      // Each data-parallel rank's virtual engines share its stages.
      if (i % decode_.rank_engines() == 0) {
        clocks_.push_back(std::make_unique<PipelineClock>(*setup_.pipeline));
      }
      clock = clocks_.back().get();
    }
    replicas_.push_back(std::make_unique<Replica>(static_cast<std::uint32_t>(decode_.first + i),
                                                  opts_, setup_.make_allocator(),
                                                  *setup_.cost_model, ctx, clock, batch_queue));
    if (decode_.lockstep) replicas_.back()->set_lockstep();
  }
  if (setup_.warm_prefixes != nullptr && opts_.warm_prefix_cache && opts_.enable_prefix_caching) {
    std::vector<std::uint64_t> ids;
    trace::RequestSpec spec;
    // A replica's engines (pipeline virtual engines, data-parallel ranks) keep a prefix cache
    // each, and the earlier run sent each request to one of them: prompt k warms engine k mod E of
    // every replica, in either pool.
    for (std::uint64_t k = 0; setup_.warm_prefixes->next(spec); ++k) {
      expand_prefix_blocks(spec, opts_.block_size, ids);
      for (std::size_t i = 0; i < replicas_.size(); ++i) {
        const EnginePool& pool = pool_of(i);
        const auto engines = static_cast<std::uint64_t>(pool.engines);
        if ((i - pool.first) % engines != k % engines) continue;
        replicas_[i]->warm_prefix(spec.id, spec.prompt_tokens, ids);
      }
    }
    for (auto& rep : replicas_) rep->end_warm_up();
  }
  const std::int64_t capacity = replicas_[first_decode()]->capacity_slots() * decode_.engines;
  router_ = std::make_unique<Router>(opts_.router, opts_.num_replicas, capacity);
  loads_.resize(static_cast<std::size_t>(opts_.num_replicas));
  is_dirty_.assign(replicas_.size(), 0);
}

void Simulator::dispatch(const Event& e, TimeNs now) {
  switch (e.kind) {
    case EventKind::kArrival:
      on_arrival(now);
      break;
    case EventKind::kStepEnd:
      replicas_[e.replica]->finish_step(now);
      mark(e.replica);
      if (EnginePool& pool = pool_of(e.replica); pool.lockstep) {
        // Every rank may step again, the ones that ran a dummy batch included.
        const std::size_t g = pool.group_of(e.replica);
        pool.busy[g] = 0;
        for (std::int64_t r = 0; r < pool.engines; ++r) {
          mark(static_cast<std::uint32_t>(pool.group_first(g) + static_cast<std::size_t>(r)));
        }
      }
      break;
    case EventKind::kSwapInDone:
      replicas_[e.replica]->finish_swap_in(e.request, now);
      mark(e.replica);
      break;
    case EventKind::kKvTransferDone:
      on_kv_transfer_done(e, now);
      break;
    case EventKind::kFrontendDone:
      on_frontend_done(e, now);
      break;
    case EventKind::kSessionTurn:
      on_session_turn(e, now);
      break;
  }
}

void Simulator::start_steps(TimeNs now) {
  std::sort(dirty_.begin(), dirty_.end());
  // Lockstep: the group tried last, by its first engine (its ranks are adjacent).
  std::size_t last_group_first = SIZE_MAX;
  for (std::uint32_t i : dirty_) {
    is_dirty_[i] = 0;
    Replica& rep = *replicas_[i];
    if (EnginePool& pool = pool_of(i); pool.lockstep) {
      // Every rank of an idle group is idle; its lowest marked rank starts the group's step.
      const std::size_t g = pool.group_of(i);
      const std::size_t first = pool.group_first(g);
      if (first != last_group_first && !pool.busy[g]) start_lockstep_step(pool, g, now);
      last_group_first = first;
      continue;
    }
    // With a batch queue, steps start until it is full or the scheduler finds nothing more.
    while (!rep.busy()) {
      const std::optional<TimeNs> end = rep.start_step(now);
      if (!end) break;
      events_.push(*end, EventKind::kStepEnd, i);
      if (observer_) observer_->on_step(StepEvent{i, now, *end, &rep.plan().batch()});
    }
  }
  dirty_.clear();
}

void Simulator::start_lockstep_step(EnginePool& pool, std::size_t group, TimeNs now) {
  const std::size_t first = pool.group_first(group);
  const std::int64_t dp = pool.dp;
  // Each rank forms its batch as it would alone.
  std::int64_t max_tokens = 0;
  bool any = false;
  bool eager = false;  // one rank without its CUDA graph: every rank runs eagerly (vLLM agrees)
  for (std::int64_t r = 0; r < dp; ++r) {
    Replica& rep = *replicas_[first + static_cast<std::size_t>(r)];
    KVSIM_ASSERT(!rep.busy(), "the ranks of a lockstep group are idle together");
    if (rep.start_step(now)) {
      any = true;
      max_tokens = std::max(max_tokens, cost::batch_tokens(rep.plan().batch()));
      eager = eager || rep.plan().batch().eager;
    }
  }
  if (!any) return;
  // vLLM's dummy batch on an idle rank: one token, no sampling.
  static constexpr std::int64_t kDummyContext[1] = {0};
  cost::StepBatch dummy;
  dummy.decode_context_tokens = kDummyContext;
  // With CUDA graphs every rank runs the most tokens any rank runs (vLLM's DP padding).
  const bool pad = opts_.scheduler.cuda_graph_max_size > 0;
  std::int64_t group_tokens = 0;
  for (std::int64_t r = 0; r < dp; ++r) {
    Replica& rep = *replicas_[first + static_cast<std::size_t>(r)];
    cost::StepBatch& b = dp_batches_[static_cast<std::size_t>(r)];
    b = rep.busy() ? rep.plan().batch() : dummy;
    if (pad) b.num_padding_tokens += max_tokens - cost::batch_tokens(b);
    b.eager = eager;
    group_tokens += cost::batch_tokens(b);
  }
  // The step lasts as long as the slowest rank's (its swap-out copy first).
  TimeNs end = now + 1;
  for (std::int64_t r = 0; r < dp; ++r) {
    const Replica& rep = *replicas_[first + static_cast<std::size_t>(r)];
    cost::StepBatch& b = dp_batches_[static_cast<std::size_t>(r)];
    b.moe_group_tokens = group_tokens;
    const TimeNs t = pool.cost_model->step_time(b) + (rep.busy() ? rep.step_swap_out_ns() : 0);
    end = std::max(end, now + t);
  }
  for (std::int64_t r = 0; r < dp; ++r) {
    const auto i = static_cast<std::uint32_t>(first + static_cast<std::size_t>(r));
    if (!replicas_[i]->busy()) continue;
    events_.push(end, EventKind::kStepEnd, i);
    if (observer_) {
      observer_->on_step(StepEvent{i, now, end, &dp_batches_[static_cast<std::size_t>(r)]});
    }
  }
  pool.busy[group] = 1;
}

void Simulator::fast_forward(std::uint32_t replica, TimeNs limit, TimeNs& now) {
  // A step may be applied here only if its end would be popped alone next: strictly before the
  // next queued event, and at or before the limit. Strictly before the next timeline sample too,
  // so that no sample falls between two of the steps (each sample is the state after the events
  // up to its time).
  const TimeNs after_limit = limit == kTimeNever ? kTimeNever : limit + 1;
  const TimeNs horizon = std::min(
      {events_.empty() ? kTimeNever : events_.top().time, timeline_.next_sample(), after_limit});
  Replica& rep = *replicas_[replica];
  // A request that finishes in the run schedules nothing unless a client waits to send, or a
  // session's request waits for the one before it (serial sessions).
  if (!rep.begin_fast_forward(now, horizon, !held_by_client_ && waiting_ == 0)) return;
  std::uint64_t elided = 0;
  // A step that would end after the horizon may still run in flight (its end an ordinary
  // event) when it ends before the next timeline sample and within the limit.
  const TimeNs straddle_limit = std::min(timeline_.next_sample(), after_limit);
  while (const std::optional<TimeNs> end = rep.advance_decode_step(horizon, straddle_limit)) {
    count_batch(now);  // the instant the step started at is done
    now = *end;
    ++elided;
  }
  if (!rep.launch_pending()) rep.end_fast_forward();  // else start_steps launches its next step
  now_ = now;
  events_.count_elided(elided);  // the step ends not pushed
}

void Simulator::count_batch(TimeNs now) {
  if (observer_ && (++batches_ & 0x3fff) == 0) {
    observer_->on_progress(
        SimProgress{now, metrics_.arrived, ended_, static_cast<std::int64_t>(pool_.num_live())});
  }
}

bool Simulator::run_events(TimeNs limit, TimeNs& now) {
  while (!events_.empty()) {
    const TimeNs t = events_.top().time;
    if (t > limit) return true;
    timeline_.sample_until(t, [this] { return current_state(); });
    now = t;
    now_ = t;
    const Event first = events_.pop();
    dispatch(first, now);
    bool alone = true;
    while (!events_.empty() && events_.top().time == t) {
      dispatch(events_.pop(), now);
      alone = false;
    }
    if (alone && first.kind == EventKind::kStepEnd && opts_.fast_forward && !any_lockstep_ &&
        (observer_ == nullptr || !observer_->wants_steps())) {
      fast_forward(first.replica, limit, now);
    }
    start_steps(now);
    count_batch(now);
  }
  return false;
}

void Simulator::count_unfinished(SimResult& result, TimeNs end, bool hit_limit) {
  // Requests never admitted by the time limit waited at least until then.
  for (const auto& rep : replicas_) {
    rep->for_each_unfinished([&](RequestPool::Slot slot) {
      ++result.requests_unfinished;
      const Request& r = pool_[slot];
      if (r.first_scheduled_ns < 0) metrics_.queue_trend.add(r.arrival_ns, end - r.arrival_ns);
      if (observer_) observer_->on_request_end(r);
    });
  }
  for (const auto& [slot, spec] : in_frontend_) {  // sent, not yet at an engine
    ++result.requests_unfinished;
    const Request& r = pool_[slot];
    metrics_.queue_trend.add(r.arrival_ns, end - r.arrival_ns);
    if (observer_) observer_->on_request_end(r);
  }
  // Requests read but never sent, counted so that completed + rejected + unfinished is every
  // request read: each session's turns still waiting for the turn before them (serial sessions),
  // and the request read ahead for the next arrival. Those due by the end (the waiting turns, and
  // the read-ahead one if a closed-loop client held it) are reported as waiting, with no engine
  // and no send time; the read-ahead one due after the limit is not.
  result.requests_unfinished += waiting_ + (hit_limit && have_next_ ? 1 : 0);
  if (observer_ == nullptr) return;
  const auto report_unsent = [this](const trace::RequestSpec& spec) {
    Request r;
    r.id = spec.id;
    r.prompt_tokens = spec.prompt_tokens;
    r.output_tokens = spec.output_tokens;
    r.arrival_ns = -1;
    observer_->on_request_end(r);
  };
  for (const Session& session : sessions_) {
    for (const trace::RequestSpec& spec : session.waiting) report_unsent(spec);
  }
  if (hit_limit && have_next_ && next_.arrival_ns <= end) report_unsent(next_);
}

void Simulator::collect_replicas(SimResult& result) const {
  result.num_replicas = opts_.num_replicas;
  result.offload_enabled = opts_.kv_offload_bytes > 0;
  // A replica's engines together hold its KV cache; pipeline engines share the same GPUs,
  // data-parallel ranks hold GPUs of their own. Disaggregated: a decode replica's.
  const Replica& one = *replicas_[first_decode()];
  result.capacity_slots = one.capacity_slots() * decode_.engines;
  result.bytes_per_slot = one.bytes_per_slot();
  result.capacity_bytes = one.accounting().capacity * static_cast<Bytes>(decode_.rank_engines());
  // A replica's peaks: the largest of its data-parallel ranks' (each its own GPUs and batch),
  // a rank's the sum of its pipeline engines' (an upper bound when they peak apart).
  Bytes group_peak = 0, rank_peak = 0;
  std::int64_t group_running = 0, group_waiting = 0, rank_running = 0, rank_waiting = 0;
  std::int64_t group_completed = 0;
  ReplicaIntegrals sum;        // the decode (or only) replicas' engines
  TimeNs prefill_elapsed = 0;  // disaggregated: the prefill replicas' engines (none pipelined)
  memory::TimeWeightedAccounting::Int128 ts = 0, rs = 0, in = 0, ex = 0, fr = 0;
  for (const auto& rep : replicas_) {
    const ReplicaIntegrals& g = rep->integrals();
    sum.running += g.running;
    sum.waiting += g.waiting;
    const EnginePool& pool = pool_of(rep->index());
    const bool prefill = &pool == &prefill_;
    (prefill ? prefill_elapsed : sum.elapsed) += g.elapsed;
    const memory::TimeWeightedAccounting& mt = rep->memory_over_time();
    ts += mt.token_states_integral();
    rs += mt.reservation_integral();
    in += mt.internal_fragmentation_integral();
    ex += mt.external_fragmentation_integral();
    fr += mt.free_integral();
    // Per replica, as the means are: its engines' completions summed; their peaks (bytes,
    // batch, queue) as above.
    rank_peak += mt.peak_used_bytes();
    rank_running += rep->max_running();
    rank_waiting += rep->max_waiting();
    group_completed += rep->num_completed();
    const std::size_t in_pool = rep->index() - pool.first + 1;
    if (in_pool % static_cast<std::size_t>(pool.rank_engines()) == 0) {
      group_peak = std::max(group_peak, rank_peak);
      group_running = std::max(group_running, rank_running);
      group_waiting = std::max(group_waiting, rank_waiting);
      rank_peak = 0;
      rank_running = 0;
      rank_waiting = 0;
    }
    if (in_pool % static_cast<std::size_t>(pool.engines) == 0) {
      result.peak_used_bytes = std::max(result.peak_used_bytes, group_peak);
      result.max_running = std::max(result.max_running, group_running);
      result.max_waiting = std::max(result.max_waiting, group_waiting);
      result.completed_per_replica.push_back(group_completed);
      group_peak = 0;
      group_running = 0;
      group_waiting = 0;
      group_completed = 0;
    }
    const memory::AllocatorStats stats = rep->allocator_stats();
    const memory::PrefixCacheStats& pc = stats.prefix_cache;
    result.prefix_query_tokens += pc.query_tokens;
    result.prefix_hit_tokens += pc.hit_tokens;
    result.prefix_cpu_hit_tokens += pc.cpu_hit_tokens;
    result.offload += stats.offload;
  }
  const auto total = ts + rs + in + ex + fr;
  if (total > 0) {
    const auto frac = [&](memory::TimeWeightedAccounting::Int128 v) {
      return static_cast<double>(v) / static_cast<double>(total);
    };
    result.fraction = MemoryFractions{frac(ts), frac(rs), frac(in), frac(ex), frac(fr)};
  } else {
    // No time passed: the cache was free throughout.
    result.fraction.free = 1.0;
  }
  if (sum.elapsed + prefill_elapsed > 0) {
    // Per replica (every pipeline engine's elapsed time is the replica's), per data-parallel
    // rank: a rank's batch is its own, as max_running's.
    const double elapsed =
        static_cast<double>(prefill_elapsed) +
        static_cast<double>(sum.elapsed) / static_cast<double>(decode_.rank_engines());
    result.mean_running = static_cast<double>(sum.running) / elapsed;
    result.mean_waiting = static_cast<double>(sum.waiting) / elapsed;
  }
  result.num_prefix_routed = router_->num_prefix_routed();
}

SimResult Simulator::run() {
  validate_options(opts_);
  KVSIM_ASSERT(setup_.cost_model != nullptr && setup_.make_allocator, "a complete setup");
  build_replicas();
  if (read_next()) schedule_next();
  const TimeNs limit = opts_.time_limit_ns > 0 ? opts_.time_limit_ns : kTimeNever;
  TimeNs now = 0;
  const bool hit_limit = run_events(limit, now);
  const TimeNs end = hit_limit ? limit : now;
  timeline_.sample_until(end + 1, [this] { return current_state(); });
  for (auto& rep : replicas_) rep->finish(end);

  SimResult result;
  result.hit_time_limit = hit_limit;
  result.duration_ns = end;
  result.num_events = events_.num_pushed();
  if (!hit_limit) {
    KVSIM_ASSERT(pool_.num_live() == 0, "a drained run leaves no live request");
    KVSIM_ASSERT(metrics_.arrived == metrics_.completed + metrics_.rejected(),
                 "every request ends exactly once");
    KVSIM_ASSERT(waiting_ == 0, "a drained run leaves no session's request waiting");
  }
  count_unfinished(result, end, hit_limit);
  collect_replicas(result);
  result.queue_delay_slope = metrics_.queue_trend.slope();
  const bool growing = metrics_.queue_trend.count() >= kSaturationMinRequests &&
                       result.queue_delay_slope > kSaturationSlope;
  result.saturation = growing ? SaturationVerdict::kQueueGrowing : SaturationVerdict::kStable;
  result.outstanding_at_end_of_arrivals = outstanding_at_last_arrival_;
  if (timeline_.enabled()) {
    result.timeline_interval_ns = timeline_.interval();
    result.timeline = timeline_.take();
  }
  result.metrics = std::move(metrics_);
  return result;
}

}  // namespace

SimResult simulate(const SimSetup& setup, trace::TraceReader& workload, SimObserver* observer) {
  Simulator simulator(setup, workload, observer);
  return simulator.run();
}

}  // namespace kvsim::sim
