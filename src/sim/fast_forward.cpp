// Replica's fast forward over runs of pure-decode steps (declared in sim/replica.h).
//
// Why it is exact. In a qualifying step every running request decodes one token; no request
// finishes, is admitted, preempted or swapped; the batch is the same requests with every context
// one token longer than in the step before, priced from its totals (CostModel::
// prices_decode_totals: bit-identical times); from the second step on every request produced
// its previous token at the step's start, so each inter-token gap is the step time (the first
// step's gaps are taken from the requests' previous-token times, in runs, as finish_step notes
// them: after a prefill-only step the decoding requests waited a step). Most tokens go into
// room the request already holds (Allocator::in_place_room: the replica only counts the token,
// as try_grow would, and the allocator's accounting stays what it was). A request whose token
// goes past that room is brought up to date and grown through the allocator in that step, in
// running order, exactly as the scheduler's pass would grow it, and only when the allocator
// promises that all of the step's grows succeed (Allocator::sure_tail_grows; otherwise the run
// ends and an ordinary step grows or preempts). Each step then updates exactly what start_step
// and finish_step would (queue and memory integrals at the step's start and end, the step
// counters, the ITL samples as one add of n equal gaps), and the requests' own counters are
// brought up to date at the end, before the next ordinary step. The simulator runs a step here
// only when no event could come first (sim/simulator.cpp).

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>

#include "common/assert.h"
#include "sim/replica.h"

namespace kvsim::sim {

bool Replica::begin_fast_forward(TimeNs now, TimeNs horizon, bool finishes) {
  const SchedulerOptions& so = options_.scheduler;
  const bool policy = so.kind == SchedulerKind::kVllm ||
                      so.kind == SchedulerKind::kChunkedPrefill ||
                      so.kind == SchedulerKind::kVllmV1;
  // A prefill-only replica (disaggregated serving) hands requests off after their first token.
  if (!policy || pipeline_ != nullptr || busy_ || prefill_only_ || running_.empty() ||
      !waiting_.empty() || !inbox_.empty() || !swapped_.empty() || !swapping_in_.empty() ||
      !held_.empty() || !transferring_.empty() || !cost_model_->prices_decode_totals()) {
    return false;
  }
  const auto n = static_cast<std::int64_t>(running_.size());
  // Every step schedules one token per running request: all of them only within the budget.
  if (n > effective_max_num_batched_tokens(so)) return false;
  // Without the allocator's promise, the run stops at the first grow past an in-place room.
  const bool grows = allocator_->sure_tail_grows() > 0;
  // A cost model that prices totals only past a context (a sparse attention's top-k) gets them
  // only when every request is past it; contexts only grow in a run.
  const std::int64_t min_context = cost_model_->decode_totals_min_context();
  std::int64_t steps = std::numeric_limits<std::int64_t>::max();
  std::int64_t context = 0;
  // A grow is at most a block's slots ahead: the in-place room ends within the tail block.
  std::int64_t ahead = options_.block_size + 1;
  // The first step's inter-token gaps, by runs of equal previous-token times in running order
  // (finish_step notes them so): after a prefill-only step the decoding requests' last tokens
  // are one step older than the new requests' first.
  ff_.first_gaps.clear();
  for (const RequestPool::Slot slot : running_) {
    const Request& r = request(slot);
    if (r.state != RequestState::kDecode || r.kv_tokens != r.computed) return false;
    if (r.computed < min_context) return false;
    // Step k (from 0) needs room for computed + k + 1 tokens and produces token generated + k + 1.
    if (!finishes) steps = std::min(steps, r.output_tokens - r.generated - 1);
    if (!grows) steps = std::min(steps, r.kv_in_place_end - r.computed);
    if (steps <= 0) return false;
    context += r.computed;
    ahead = std::max(ahead, r.kv_in_place_end - r.computed + 1);
    if (ff_.first_gaps.empty() || ff_.first_gaps.back().first != r.last_token_ns) {
      ff_.first_gaps.emplace_back(r.last_token_ns, 0);
    }
    ++ff_.first_gaps.back().second;
  }
  // Nothing is set up for a run whose first step would not end first.
  const GraphRun graph = graph_run(n, true);
  const TimeNs first_ns = decode_step_ns(n, context, graph);
  if (first_ns >= horizon - now) return false;
  ff_.active = true;
  ff_.launch = false;
  ff_.in_flight = false;
  ff_.num_seqs = n;
  ff_.context_tokens = context;
  ff_.graph = graph;
  ff_.first_step_ns = first_ns;
  ff_.steps_left = steps;
  ff_.steps = 0;
  ff_.from_allocator = allocator_->byte_accounting(nullptr);  // nothing waits: no head
  ff_.slots.assign(running_.begin(), running_.end());
  ff_.synced.assign(static_cast<std::size_t>(n), 0);
  const std::size_t size =
      std::bit_ceil(std::max(FastForward::kMinRing, static_cast<std::size_t>(ahead)));
  ff_.grows.resize(size);
  ff_.finishes.resize(size);
  for (std::size_t i = 0; i < size; ++i) {
    ff_.grows[i].clear();
    ff_.finishes[i].clear();
  }
  ff_.far.clear();
  ff_.mask = size - 1;
  for (std::uint32_t pos = 0; pos < static_cast<std::uint32_t>(n); ++pos) {
    const Request& r = request(ff_.slots[pos]);
    // The first step whose token does not fit in the room held in place; the step of the last.
    const std::int64_t grow = r.kv_in_place_end - r.computed;
    const std::int64_t last = r.output_tokens - r.generated - 1;
    if (grows && grow <= last && grow < steps) push_event(FastForward::kGrow, grow, pos);
    if (finishes && last < steps) push_event(FastForward::kFinish, last, pos);
  }
  now_ = now;
  return true;
}

TimeNs Replica::decode_step_ns(std::int64_t n, std::int64_t context, const GraphRun& graph) const {
  cost::StepBatch batch;
  batch.decode_totals = cost::DecodeTotals{n, context};
  batch.num_sampling = n;
  batch.num_padding_tokens = graph.padding_tokens;
  batch.eager = graph.eager;
  const TimeNs compute_ns = cost_model_->step_time(batch);
  KVSIM_ASSERT(compute_ns >= 0, "step times are non-negative");
  return std::max<TimeNs>(1, compute_ns);  // as start_step: time always moves forward
}

void Replica::sync_fast_forward(std::uint32_t pos, std::int64_t step) {
  Request& r = request(ff_.slots[pos]);
  const std::int64_t d = step - ff_.synced[pos];
  r.computed += d;
  r.generated += d;
  r.kv_tokens = r.computed;           // every earlier step's room was taken and its token computed
  if (d > 0) r.last_token_ns = now_;  // the end of step `step` − 1
  ff_.synced[pos] = step;
}

void Replica::push_event(FastForward::Kind kind, std::int64_t step, std::uint32_t pos) {
  const auto ring_size = static_cast<std::int64_t>(ff_.mask + 1);
  if (kind == FastForward::kFinish && step - ff_.steps >= ring_size) {
    ff_.far.emplace_back(step, pos);
    return;
  }
  KVSIM_ASSERT(step - ff_.steps < ring_size, "a grow is less than the ring ahead");
  auto& ring = kind == FastForward::kGrow ? ff_.grows : ff_.finishes;
  ring[static_cast<std::uint64_t>(step) & ff_.mask].push_back(pos);
}

void Replica::pop_due(FastForward::Kind kind, std::int64_t step) {
  ff_.due.clear();
  auto& ring = kind == FastForward::kGrow ? ff_.grows : ff_.finishes;
  ff_.due.swap(ring[static_cast<std::uint64_t>(step) & ff_.mask]);
  if (ff_.due.size() > 1) std::sort(ff_.due.begin(), ff_.due.end());
  if (kind != FastForward::kFinish || ((static_cast<std::uint64_t>(step) + 1) & ff_.mask) != 0) {
    return;
  }
  // The ring's steps are all taken: the far finishes of the next ring's worth of steps enter it.
  const std::int64_t next_end = step + 1 + static_cast<std::int64_t>(ff_.mask + 1);
  std::erase_if(ff_.far, [&](const std::pair<std::int64_t, std::uint32_t>& e) {
    if (e.first >= next_end) return false;
    ff_.finishes[static_cast<std::uint64_t>(e.first) & ff_.mask].push_back(e.second);
    return true;
  });
}

std::optional<TimeNs> Replica::advance_decode_step(TimeNs horizon, TimeNs straddle_limit) {
  KVSIM_ASSERT(ff_.active && !ff_.in_flight, "a fast-forward run is in progress");
  ff_.launch = false;
  if (ff_.steps_left == 0 || ff_.num_seqs == 0) return std::nullopt;
  const std::int64_t k = ff_.steps;
  const TimeNs step_ns =
      k == 0 ? ff_.first_step_ns : decode_step_ns(ff_.num_seqs, ff_.context_tokens, ff_.graph);
  const TimeNs start = now_;
  KVSIM_ASSERT(horizon >= start, "the horizon is not in the past");
  if (step_ns >= horizon - start) {
    // Its end would not come first: an ordinary step, unless it may run in flight (launch).
    ff_.launch = step_ns < straddle_limit - start;
    ff_.launch_ns = step_ns;
    return std::nullopt;
  }
  if (!start_decode_step()) return std::nullopt;
  finish_decode_step(step_ns);
  return now_;
}

bool Replica::start_decode_step() {
  // The requests this step grows through the allocator, in the scheduler's (running) order; the
  // run ends before the step unless the allocator promises every one of them.
  const std::int64_t k = ff_.steps;
  pop_due(FastForward::kGrow, k);
  if (!ff_.due.empty() &&
      allocator_->sure_tail_grows() < static_cast<std::int64_t>(ff_.due.size())) {
    return false;  // an ordinary step grows them (or preempts)
  }

  // start_step: the scheduler grows every request by one token, in place or (due) for real.
  const TimeNs start = now_;
  advance_to(start);
  step_start_ns_ = start;
  step_swap_out_ns_ = 0;
  link_free_ns_ = std::max(link_free_ns_, start);
  for (const std::uint32_t pos : ff_.due) {
    sync_fast_forward(pos, k);
    const RequestPool::Slot slot = ff_.slots[pos];
    const bool grown = try_grow(slot, 1);
    KVSIM_ASSERT(grown, "the allocator promised this grow");
    // The next step whose token does not fit, if the request is still running then.
    const Request& r = request(slot);
    const std::int64_t next = k + r.kv_in_place_end - r.computed;
    if (next <= k + r.output_tokens - r.generated - 1 && next < ff_.steps_left + k) {
      push_event(FastForward::kGrow, next, pos);
    }
  }
  if (!ff_.due.empty()) ff_.from_allocator = allocator_->byte_accounting(nullptr);
  deferred_tokens_ += ff_.num_seqs - static_cast<std::int64_t>(ff_.due.size());
  accounting_ = with_deferred(ff_.from_allocator);
  memory_time_.advance(start, accounting_);
  Metrics& m = *ctx_.metrics;
  ++m.num_steps;
  m.num_sequence_steps += ff_.num_seqs;
  m.num_step_tokens += ff_.num_seqs;
  // As start_step: a request whose swap-in completed between steps joined the running list
  // without a scheduling pass, so this may be the first step that counts it.
  max_running_ = std::max(max_running_, ff_.num_seqs);
  return true;
}

void Replica::finish_decode_step(TimeNs step_ns) {
  // finish_step: every request produces a token, step_ns after its previous one; those whose
  // last token it is finish.
  const std::int64_t k = ff_.steps;
  const TimeNs end = step_start_ns_ + step_ns;
  advance_to(end);
  now_ = end;
  Metrics& m = *ctx_.metrics;
  if (k == 0) {
    for (const auto& [last, count] : ff_.first_gaps) m.on_token_gaps(end - last, count);
  } else {
    m.on_token_gaps(step_ns, ff_.num_seqs);
  }
  ff_.context_tokens += ff_.num_seqs;
  --ff_.steps_left;
  ++ff_.steps;
  pop_due(FastForward::kFinish, k);
  if (!ff_.due.empty()) finish_due();
}

std::optional<TimeNs> Replica::launch_in_flight(TimeNs now) {
  KVSIM_ASSERT(ff_.active && ff_.launch && now == now_, "a launch follows its run at once");
  ff_.launch = false;
  if (!start_decode_step()) {
    end_fast_forward();
    return std::nullopt;  // the caller runs an ordinary step
  }
  ff_.in_flight = true;
  busy_ = true;
  return now + ff_.launch_ns;
}

void Replica::land_in_flight(TimeNs now) {
  KVSIM_ASSERT(ff_.active && ff_.in_flight && busy_ && now == step_start_ns_ + ff_.launch_ns,
               "the step in flight ends now");
  busy_ = false;
  last_step_end_ns_ = now;
  ff_.in_flight = false;
  finish_decode_step(ff_.launch_ns);
  end_fast_forward();
}

void Replica::finish_due() {
  const std::int64_t k = ff_.steps;  // the finished step's end: their counters as of step k
  for (const std::uint32_t pos : ff_.due) {
    sync_fast_forward(pos, k);
    Request& r = request(ff_.slots[pos]);
    KVSIM_ASSERT(r.generated == r.output_tokens, "a request finishes with its last token");
    r.state = RequestState::kFinished;
    r.finish_ns = now_;
    ++num_completed_;
    ctx_.metrics->on_finished(r);
    ff_.num_seqs -= 1;
    ff_.context_tokens -= r.computed;
  }
  ff_.graph = graph_run(ff_.num_seqs, true);
  // As finish_step: the running list drops them (order kept), then each releases its KV and
  // ends, in running order.
  std::erase_if(running_, [this](RequestPool::Slot s) {
    return request(s).state == RequestState::kFinished;
  });
  for (const std::uint32_t pos : ff_.due) {
    const RequestPool::Slot slot = ff_.slots[pos];
    release_kv(request(slot));
    ff_.synced[pos] = -1;  // gone
    ctx_.sink->on_request_end(slot, false);
  }
  ff_.from_allocator = allocator_->byte_accounting(nullptr);
}

void Replica::end_fast_forward() {
  KVSIM_ASSERT(ff_.active, "a fast-forward run is in progress");
  ff_.active = false;
  const std::int64_t k = ff_.steps;
  if (k == 0) return;
  for (std::uint32_t pos = 0; pos < static_cast<std::uint32_t>(ff_.slots.size()); ++pos) {
    if (ff_.synced[pos] < 0) continue;
    sync_fast_forward(pos, k);
    request(ff_.slots[pos]).last_token_ns = now_;
  }
}

}  // namespace kvsim::sim
