#include "sim/replica.h"

#include <algorithm>
#include <cmath>

#include "common/assert.h"
#include "sim/pipeline_clock.h"
#include "sim/scheduler.h"

namespace kvsim::sim {

Replica::Replica(std::uint32_t index, const SimOptions& options,
                 std::unique_ptr<memory::Allocator> allocator, const cost::CostModel& cost_model,
                 Context context, PipelineClock* pipeline, std::int64_t batch_queue)
    : index_(index),
      options_(options),
      allocator_(std::move(allocator)),
      cost_model_(&cost_model),
      pipeline_(pipeline),
      scheduler_(make_scheduler(options)),
      ctx_(context),
      plans_(static_cast<std::size_t>(batch_queue)),
      plan_(plans_.data()),
      queued_(batch_queue > 1) {
  KVSIM_ASSERT(allocator_ != nullptr, "a replica has an allocator");
  KVSIM_ASSERT(batch_queue == 1 || (batch_queue > 1 && pipeline != nullptr &&
                                    options.scheduler.kind == SchedulerKind::kVllmV1 &&
                                    !options.scheduler.async_scheduling),
               "a batch queue is vLLM V1's, with pipeline stages, without async scheduling");
  KVSIM_ASSERT(allocator_->bytes_per_slot() > 0, "KV slots have a size");
  capacity_slots_ = allocator_->accounting(nullptr).capacity;
  refresh_accounting();
}

Replica::~Replica() = default;

void Replica::warm_prefix(std::uint64_t id, std::int64_t prompt_tokens,
                          std::span<const std::uint64_t> ids) {
  memory::SeqInfo info;
  info.id = id;
  info.prompt_tokens = prompt_tokens;
  info.final_tokens = prompt_tokens;
  info.block_content_ids = ids;
  if (allocator_->admit(info, prompt_tokens)) allocator_->free(id);
}

void Replica::end_warm_up() {
  warm_up_prefix_stats_ = allocator_->stats().prefix_cache;
  refresh_accounting();
}

memory::AllocatorStats Replica::allocator_stats() const {
  memory::AllocatorStats s = allocator_->stats();
  memory::PrefixCacheStats& p = s.prefix_cache;
  const memory::PrefixCacheStats& w = warm_up_prefix_stats_;
  p.queries -= w.queries;
  p.query_blocks -= w.query_blocks;
  p.hit_blocks -= w.hit_blocks;
  p.query_tokens -= w.query_tokens;
  p.hit_tokens -= w.hit_tokens;
  return s;
}

std::int64_t Replica::num_outstanding() const {
  return static_cast<std::int64_t>(waiting_.size() + inbox_.size() + running_.size() +
                                   swapped_.size() + swapping_in_.size());
}

double Replica::kv_usage() const {
  if (accounting_.capacity == 0) return 0.0;
  return static_cast<double>(accounting_.used()) / static_cast<double>(accounting_.capacity);
}

bool Replica::holds_nothing() const {
  return running_.empty() && swapping_in_.empty() && held_.empty() && transferring_.empty();
}

void Replica::release_transferred(RequestPool::Slot slot, TimeNs now) {
  advance_to(now);
  now_ = now;
  const auto it = std::find(transferring_.begin(), transferring_.end(), slot);
  KVSIM_ASSERT(it != transferring_.end(), "only a handed-off request completes a transfer");
  transferring_.erase(it);
  release_kv(request(slot));
  refresh_accounting();
}

memory::SeqInfo Replica::seq_info(const Request& r, bool with_prefix) const {
  memory::SeqInfo info;
  info.id = r.id;
  info.prompt_tokens = r.prompt_tokens;
  info.final_tokens = r.final_tokens();
  if (with_prefix) info.block_content_ids = r.block_ids;
  return info;
}

void Replica::refresh_accounting() {
  memory::SeqInfo head_info;
  const memory::SeqInfo* head = nullptr;
  if (!waiting_.empty()) {
    head_info = seq_info((*ctx_.pool)[waiting_.front()], options_.enable_prefix_caching);
    head = &head_info;
  }
  accounting_ = with_deferred(allocator_->byte_accounting(head));
  memory_time_.advance(now_, accounting_);  // checks that the five quantities add up
}

memory::ByteAccounting Replica::with_deferred(memory::ByteAccounting from_allocator) const {
  if (deferred_tokens_ > 0) {
    const Bytes moved = deferred_tokens_ * allocator_->in_place_token_bytes();
    from_allocator.token_states += moved;
    from_allocator.reservation -= moved;
  }
  return from_allocator;
}

void Replica::advance_to(TimeNs now) {
  KVSIM_ASSERT(now >= integrated_to_, "replica time never goes backwards");
  const TimeNs dt = now - integrated_to_;
  if (dt == 0) return;
  const auto w = static_cast<ReplicaIntegrals::U128>(dt);
  integrals_.running += static_cast<ReplicaIntegrals::U128>(running_.size()) * w;
  integrals_.waiting += static_cast<ReplicaIntegrals::U128>(num_waiting()) * w;
  integrals_.elapsed += dt;
  integrated_to_ = now;
}

void Replica::finish(TimeNs now) {
  advance_to(now);
  now_ = now;
  memory_time_.advance(now, accounting_);
}

void Replica::enqueue(RequestPool::Slot slot, TimeNs now) {
  advance_to(now);
  now_ = now;
  Request& r = request(slot);
  r.replica = index_;
  const std::int64_t max_len = options_.scheduler.max_model_len;
  if (r.prompt_tokens > max_len) return reject(slot, RejectReason::kPromptTooLong, now);
  if (r.final_tokens() > max_len) return reject(slot, RejectReason::kTooLong, now);
  // No amount of waiting or preemption would make it fit.
  if (!allocator_->fits_alone(seq_info(r, false))) {
    return reject(slot, RejectReason::kNeverFits, now);
  }
  r.state = RequestState::kWaiting;
  // The step that starts now, if one ended now, was decided when that one launched.
  const bool decided = options_.scheduler.async_scheduling && (busy_ || last_step_end_ns_ == now);
  if (decided) {
    inbox_.push_back(slot);
  } else {
    waiting_.push_back(slot);
  }
  max_waiting_ = std::max(max_waiting_, num_waiting());
  // A new head changes what counts as external fragmentation; an idle replica refreshes when
  // it next tries to start a step (at this same instant).
  if (!decided && busy_ && waiting_.size() == 1) refresh_accounting();
}

void Replica::join_inbox() {
  if (inbox_.empty()) return;
  waiting_.insert(waiting_.end(), inbox_.begin(), inbox_.end());
  inbox_.clear();
}

void Replica::reject(RequestPool::Slot slot, RejectReason reason, TimeNs now) {
  Request& r = request(slot);
  r.state = RequestState::kRejected;
  r.reject_reason = reason;
  r.finish_ns = now;
  ctx_.metrics->on_rejected(r);
  ctx_.sink->on_request_end(slot, false);
}

void Replica::reject_waiting_head(RejectReason reason) {
  KVSIM_ASSERT(!waiting_.empty(), "rejecting the head of a non-empty queue");
  const RequestPool::Slot slot = waiting_.front();
  waiting_.pop_front();
  reject(slot, reason, now_);
}

std::optional<TimeNs> Replica::start_step(TimeNs now) {
  KVSIM_ASSERT(!busy_, "room for a step in flight");
  if (launch_pending()) {
    if (const std::optional<TimeNs> end = launch_in_flight(now)) return end;
  }
  advance_to(now);
  now_ = now;
  plan_ = &plans_[(front_ + in_flight_) % plans_.size()];
  StepPlan& plan = *plan_;
  plan.clear();
  pending_swap_ins_.clear();
  Bytes swap_out_bytes = 0;
  // Async scheduling: an engine that had nothing to run when it decided this step waited for
  // input instead, and schedules what arrived as it comes.
  if (!inbox_.empty() && waiting_.empty() && swapped_.empty() && holds_nothing()) join_inbox();
  // A pass that only preempted (every running request lost its room) is followed by another,
  // which can admit or swap in at once. Two passes always suffice: the second starts with
  // nothing running, so it cannot preempt.
  for (int pass = 0; pass < 3; ++pass) {
    preemptions_this_pass_ = 0;
    scheduler_->schedule(*this);
    swap_out_bytes += plan.swap_out_bytes;
    if (plan.num_items() > 0 || preemptions_this_pass_ == 0) break;
    KVSIM_ASSERT(pass < 2, "a scheduling pass with nothing running cannot preempt");
    plan.clear();
  }
  // The inbox is seen from the next step's decision on.
  join_inbox();

  const TimeNs swap_out_ns = swap_out_bytes > 0 ? cost_model_->swap_time(swap_out_bytes) : 0;
  link_free_ns_ = std::max(link_free_ns_, now) + swap_out_ns;
  for (RequestPool::Slot slot : pending_swap_ins_) {
    Request& r = request(slot);
    link_free_ns_ += cost_model_->swap_time(r.swap_bytes);
    ctx_.metrics->swap_in_bytes += r.swap_bytes;
    ctx_.events->push(link_free_ns_, EventKind::kSwapInDone, index_, slot);
  }
  max_running_ = std::max(max_running_, num_running());
  refresh_accounting();
  if (plan.num_items() == 0) {
    // Nothing to run besides the steps in flight: the engine waits for the oldest.
    busy_ = in_flight_ > 0;
    return std::nullopt;
  }

  const cost::StepBatch& batch = plan.build_batch([this](const StepItem& item) {
    return item.context_tokens + item.num_tokens == request(item.request).prefill_target;
  });
  // Decode-only or not, the batch says; the graph (or none) pads it.
  plan.set_graph(graph_run(plan.num_tokens(), batch.prefills.empty()));
  // A pipeline books the batch on its stages after the swap-out copy (sim/pipeline_clock.h).
  // A lockstep rank's step is priced by the simulator with the other ranks' (its end unused).
  const TimeNs compute_ns = lockstep_ ? 0
                            : pipeline_
                                ? pipeline_->run(now + swap_out_ns, batch) - now - swap_out_ns
                                : cost_model_->step_time(batch);
  KVSIM_ASSERT(compute_ns >= 0, "step times are non-negative");
  // At least 1 ns so that simulated time always moves forward.
  const TimeNs step_ns = std::max<TimeNs>(1, compute_ns + swap_out_ns);
  Metrics& m = *ctx_.metrics;
  ++m.num_steps;
  m.num_sequence_steps += plan.num_items();
  m.num_step_tokens += plan.num_tokens();
  ++in_flight_;
  busy_ = in_flight_ == plans_.size();
  step_start_ns_ = now;
  step_swap_out_ns_ = swap_out_ns;
  return now + step_ns;
}

GraphRun Replica::graph_run(std::int64_t n, bool decode_only) const {
  return cuda_graph_run(n, decode_only, options_.scheduler);
}

void Replica::finish_step(TimeNs now) {
  if (ff_.in_flight) return land_in_flight(now);
  KVSIM_ASSERT(in_flight_ > 0, "a step is in flight");
  advance_to(now);
  now_ = now;
  const StepPlan& plan = plans_[front_];
  front_ = (front_ + 1) % plans_.size();
  --in_flight_;
  busy_ = false;
  last_step_end_ns_ = now;
  bool any_finished = false;
  for (const StepItem& item : plan.items()) {
    if (item.canceled || item.kind == StepItemKind::kPadding) continue;
    Request& r = request(item.request);
    if (queued_) r.in_flight_tokens -= static_cast<std::int32_t>(item.num_tokens);
    if (item.kind == StepItemKind::kPrefill) {
      KVSIM_ASSERT(r.state == RequestState::kPrefill, "a prefill item's request is in prefill");
      r.computed += item.num_tokens;
      KVSIM_ASSERT(r.computed <= r.prefill_target && r.computed <= r.kv_tokens,
                   "prefill stays within its target and its room");
      if (r.computed < r.prefill_target) continue;
      r.state = RequestState::kDecode;
    } else {
      KVSIM_ASSERT(r.state == RequestState::kDecode, "a decode item's request is decoding");
      r.computed += 1;
      KVSIM_ASSERT(r.computed <= r.kv_tokens, "decode writes into room it holds");
    }
    produce_token(item.request, now);
    if (prefill_only_ && r.state == RequestState::kDecode) r.state = RequestState::kTransferring;
    any_finished = any_finished || r.state == RequestState::kFinished ||
                   r.state == RequestState::kTransferring;
  }
  flush_token_gaps();
  if (any_finished) release_finished();
}

void Replica::release_finished() {
  const bool keep = scheduler_->keeps_finished();
  // Releases after the running list no longer refers to them.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const RequestPool::Slot slot = running_[i];
    if (request(slot).state == RequestState::kTransferring) {
      transferring_.push_back(slot);
      ctx_.sink->on_prefill_done(slot);
      continue;
    }
    if (request(slot).state != RequestState::kFinished) {
      running_[kept++] = slot;
      continue;
    }
    if (keep) {
      held_.push_back(slot);
    } else {
      release_kv(request(slot));
    }
    ctx_.sink->on_request_end(slot, keep);
  }
  running_.resize(kept);
}

void Replica::produce_token(RequestPool::Slot slot, TimeNs now) {
  Request& r = request(slot);
  ++r.generated;
  if (r.first_token_ns < 0) {
    r.first_token_ns = now;
  } else {
    note_token_gap(now - r.last_token_ns);
  }
  r.last_token_ns = now;
  if (r.generated < r.output_tokens) return;
  r.state = RequestState::kFinished;
  r.finish_ns = now;
  ++num_completed_;
  ctx_.metrics->on_finished(r);
}

void Replica::note_token_gap(TimeNs gap_ns) {
  if (pending_gap_count_ > 0 && gap_ns == pending_gap_ns_) {
    ++pending_gap_count_;
    return;
  }
  flush_token_gaps();
  pending_gap_ns_ = gap_ns;
  pending_gap_count_ = 1;
}

void Replica::flush_token_gaps() {
  if (pending_gap_count_ == 0) return;
  ctx_.metrics->on_token_gaps(pending_gap_ns_, pending_gap_count_);
  pending_gap_count_ = 0;
}

void Replica::finish_swap_in(RequestPool::Slot slot, TimeNs now) {
  advance_to(now);
  now_ = now;
  Request& r = request(slot);
  KVSIM_ASSERT(r.state == RequestState::kSwappingIn || r.state == RequestState::kLoading,
               "only a swapping-in or loading request completes a copy");
  r.state = r.computed < r.prefill_target ? RequestState::kPrefill : RequestState::kDecode;
  swapping_in_.erase(std::find(swapping_in_.begin(), swapping_in_.end(), slot));
  running_.push_back(slot);
}

AdmitStatus Replica::try_admit(RequestPool::Slot slot, std::int64_t num_tokens,
                               std::int64_t* cached_tokens) {
  Request& r = request(slot);
  KVSIM_ASSERT(r.state == RequestState::kWaiting && r.kv_tokens == 0,
               "admitting a waiting request");
  KVSIM_ASSERT(num_tokens >= 1, "admission makes room for at least one token");
  const auto result = allocator_->admit(seq_info(r, options_.enable_prefix_caching), num_tokens);
  if (!result) return holds_nothing() ? AdmitStatus::kNeverFits : AdmitStatus::kNoRoom;
  r.kv_tokens = num_tokens;
  r.kv_in_allocator = num_tokens;
  r.load_bytes = result->loaded_bytes;
  note_told(r);
  // Transferred KV (disaggregated serving) is present like a prefix-cache hit.
  *cached_tokens =
      std::clamp<std::int64_t>(std::max(result->cached_tokens, r.kv_received), 0, num_tokens);
  return AdmitStatus::kAdmitted;
}

std::int64_t Replica::cached_prefix(RequestPool::Slot slot, std::int64_t num_tokens) const {
  const Request& r = (*ctx_.pool)[slot];
  const std::int64_t received = std::min(r.kv_received, num_tokens);
  if (!options_.enable_prefix_caching) return received;
  return std::max(received, allocator_->cached_prefix_tokens(seq_info(r, true), num_tokens));
}

void Replica::undo_admit(RequestPool::Slot slot) {
  release_kv(request(slot));
}

void Replica::release_kv(Request& r) {
  allocator_->free(r.id);
  deferred_tokens_ -= r.kv_tokens - r.kv_in_allocator;
  r.kv_tokens = 0;
  r.kv_in_allocator = 0;
  r.kv_in_place_end = 0;
  r.load_bytes = 0;
}

void Replica::note_told(Request& r) {
  const std::optional<std::int64_t> room = allocator_->in_place_room(r.id);
  r.kv_in_place_end = r.kv_in_allocator + room.value_or(0);
}

void Replica::tell_allocator(Request& r) {
  const std::int64_t deferred = r.kv_tokens - r.kv_in_allocator;
  if (deferred == 0) return;
  const bool grown = allocator_->grow(r.id, deferred);
  KVSIM_ASSERT(grown, "deferred tokens fit in the room held in place");
  deferred_tokens_ -= deferred;
  r.kv_in_allocator = r.kv_tokens;
}

void Replica::requeue_for_recompute(RequestPool::Slot slot) {
  Request& r = request(slot);
  release_kv(r);
  r.computed = 0;
  r.kv_received = 0;  // a disaggregated request's transferred KV is gone too
  r.state = RequestState::kWaiting;
  waiting_.push_front(slot);
}

bool Replica::start_running(RequestPool::Slot slot, std::int64_t cached_tokens) {
  // FCFS, except that vLLM V0's partial prefills may let a short request pass a long one.
  const auto it = std::find(waiting_.begin(), waiting_.end(), slot);
  KVSIM_ASSERT(it != waiting_.end(), "an admitted request was waiting");
  waiting_.erase(it);
  Request& r = request(slot);
  if (r.load_bytes == 0) running_.push_back(slot);
  r.state = RequestState::kPrefill;
  r.prefill_target = r.prompt_tokens + r.generated;
  // The last prompt token is always computed (its logits give the next token).
  const std::int64_t hit = std::min(cached_tokens, r.prefill_target);
  r.computed = std::min(hit, r.prefill_target - 1);
  r.cached_tokens += std::max<std::int64_t>(0, hit - r.kv_received);  // prefix-cache hits only
  r.kv_received = 0;
  if (r.first_scheduled_ns < 0) {
    r.first_scheduled_ns = now_;
    ctx_.metrics->on_first_scheduled(r);
  }
  if (r.load_bytes == 0) return true;
  start_load(slot);
  return false;
}

void Replica::start_load(RequestPool::Slot slot) {
  Request& r = request(slot);
  const double bandwidth = options_.kv_offload_bandwidth_bytes_per_s;
  const TimeNs load_ns = bandwidth > 0
                             ? std::llround(static_cast<double>(r.load_bytes) * 1e9 / bandwidth)
                             : cost_model_->swap_time(r.load_bytes);
  // Host → device on the replica's PCIe link, after the copies already queued there.
  link_free_ns_ = std::max(link_free_ns_, now_) + load_ns;
  Metrics& m = *ctx_.metrics;
  ++m.offload_loads;
  m.offload_load_bytes += r.load_bytes;
  m.offload_load_ns += load_ns;
  r.load_bytes = 0;
  r.state = RequestState::kLoading;
  swapping_in_.push_back(slot);
  ctx_.events->push(link_free_ns_, EventKind::kSwapInDone, index_, slot);
}

bool Replica::try_grow(RequestPool::Slot slot, std::int64_t num_tokens) {
  if (num_tokens == 0) return true;
  Request& r = request(slot);
  if (r.kv_tokens + num_tokens <= r.kv_in_place_end) {
    // Within the tail it holds: counted here, told to the allocator at its next real growth.
    r.kv_tokens += num_tokens;
    deferred_tokens_ += num_tokens;
    return true;
  }
  const std::int64_t deferred = r.kv_tokens - r.kv_in_allocator;
  if (!allocator_->grow(r.id, deferred + num_tokens)) return false;
  deferred_tokens_ -= deferred;
  r.kv_tokens += num_tokens;
  r.kv_in_allocator = r.kv_tokens;
  note_told(r);
  return true;
}

bool Replica::make_room_or_preempt(RequestPool::Slot slot, std::int64_t total_tokens) {
  const std::int64_t need = total_tokens - request(slot).kv_tokens;
  if (need <= 0) return true;
  while (!try_grow(slot, need)) {
    if (preempt_newest() == slot) return false;
  }
  return true;
}

RequestPool::Slot Replica::preempt_newest() {
  KVSIM_ASSERT(!running_.empty(), "preemption needs a running request");
  const RequestPool::Slot slot = running_.back();
  running_.pop_back();
  // Its items in the plan being formed give their tokens back; those in steps already in flight
  // (a batch queue's) are computed for nothing.
  for (std::size_t k = 0; k <= in_flight_; ++k) plans_[(front_ + k) % plans_.size()].cancel(slot);
  ++preemptions_this_pass_;
  Request& r = request(slot);
  r.in_flight_tokens = 0;
  ++r.num_preemptions;
  Metrics& m = *ctx_.metrics;
  if (options_.scheduler.preemption == PreemptionMode::kSwap) {
    tell_allocator(r);
    if (const auto bytes = allocator_->swap_out(r.id)) {
      // kv_tokens stays: the room it needs back on the GPU.
      r.swap_bytes = *bytes;
      plan_->swap_out_bytes += *bytes;
      m.swap_out_bytes += *bytes;
      ++m.preemptions_swap;
      r.state = RequestState::kSwapped;
      swapped_.push_back(slot);
      return slot;
    }
  }
  ++m.preemptions_recompute;
  requeue_for_recompute(slot);
  max_waiting_ = std::max(max_waiting_, num_waiting());
  return slot;
}

bool Replica::try_swap_in_head() {
  KVSIM_ASSERT(!swapped_.empty(), "swapping in needs a swapped request");
  if (num_running() + num_swapping_in() >= options_.scheduler.max_num_seqs) return false;
  const RequestPool::Slot slot = swapped_.front();
  Request& r = request(slot);
  const auto bytes = allocator_->swap_in(r.id);
  if (!bytes) {
    if (!holds_nothing()) return false;
    // Refused with nothing else on the GPU: it never will come back this way. It recomputes
    // instead (and the pass is rerun, as after a preemption, so that it can be admitted now).
    swapped_.pop_front();
    requeue_for_recompute(slot);
    ++preemptions_this_pass_;
    return true;
  }
  r.swap_bytes = *bytes;
  note_told(r);
  swapped_.pop_front();
  r.state = RequestState::kSwappingIn;
  swapping_in_.push_back(slot);
  pending_swap_ins_.push_back(slot);
  return true;
}

void Replica::release_held() {
  for (RequestPool::Slot slot : held_) {
    release_kv(request(slot));
    ctx_.sink->on_release(slot);
  }
  held_.clear();
}

void Replica::plan_prefill(RequestPool::Slot slot, std::int64_t num_tokens) {
  Request& r = request(slot);
  const std::int64_t context = r.computed + r.in_flight_tokens;
  KVSIM_ASSERT(num_tokens >= 1 && context + num_tokens <= r.kv_tokens,
               "a prefill chunk fits in the room taken for it");
  if (queued_) r.in_flight_tokens += static_cast<std::int32_t>(num_tokens);
  plan_->add(slot, StepItemKind::kPrefill, num_tokens, context);
}

void Replica::plan_decode(RequestPool::Slot slot) {
  Request& r = request(slot);
  KVSIM_ASSERT(r.state == RequestState::kDecode && r.computed + 1 <= r.kv_tokens,
               "a decode has its last token and room for the next");
  if (queued_) r.in_flight_tokens = 1;
  plan_->add(slot, StepItemKind::kDecode, 1, r.computed);
}

void Replica::plan_padding(RequestPool::Slot slot) {
  plan_->add(slot, StepItemKind::kPadding, 1, request(slot).computed);
}

}  // namespace kvsim::sim
