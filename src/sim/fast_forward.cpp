// Replica's fast forward over runs of pure-decode steps (declared in sim/replica.h).
//
// Why it is exact. In a qualifying step every running request decodes one token; no request
// finishes, is admitted, preempted or swapped; the batch is the same requests with every context
// one token longer than in the step before, priced from its totals (CostModel::
// prices_decode_totals: bit-identical times); every request produced its previous token at the
// step's start, so each of the step's inter-token gaps is the step time. Most tokens go into
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
#include <functional>
#include <limits>

#include "common/assert.h"
#include "sim/replica.h"

namespace kvsim::sim {

bool Replica::begin_fast_forward(TimeNs now, TimeNs horizon) {
  const SchedulerOptions& so = options_.scheduler;
  const bool policy = so.kind == SchedulerKind::kVllm ||
                      so.kind == SchedulerKind::kChunkedPrefill ||
                      so.kind == SchedulerKind::kVllmV1;
  // A prefill-only replica (disaggregated serving) hands requests off after their first token.
  if (!policy || pipeline_ != nullptr || busy_ || prefill_only_ || running_.empty() ||
      !waiting_.empty() || !swapped_.empty() || !swapping_in_.empty() || !held_.empty() ||
      !transferring_.empty() || !cost_model_->prices_decode_totals()) {
    return false;
  }
  if (now - step_start_ns_ >= horizon - now) return false;  // the guess: see replica.h
  const auto n = static_cast<std::int64_t>(running_.size());
  // Every step schedules one token per running request: all of them only within the budget.
  if (n > effective_max_num_batched_tokens(so)) return false;
  // Without the allocator's promise, the run stops at the first grow past an in-place room.
  const bool grows = allocator_->sure_tail_grows() > 0;
  std::int64_t steps = std::numeric_limits<std::int64_t>::max();
  std::int64_t context = 0;
  for (const RequestPool::Slot slot : running_) {
    const Request& r = request(slot);
    if (r.state != RequestState::kDecode || r.last_token_ns != now || r.kv_tokens != r.computed) {
      return false;
    }
    // Step k (from 0) needs room for computed + k + 1 tokens and produces token generated + k + 1.
    steps = std::min(steps, r.output_tokens - r.generated - 1);
    if (!grows) steps = std::min(steps, r.kv_in_place_end - r.computed);
    if (steps <= 0) return false;
    context += r.computed;
  }
  ff_.active = true;
  ff_.num_seqs = n;
  ff_.context_tokens = context;
  ff_.padding_tokens = so.cuda_graph_max_size > 0
                           ? cuda_graph_padded_tokens(n, so.cuda_graph_max_size,
                                                      effective_max_num_batched_tokens(so)) -
                                 n
                           : 0;
  ff_.steps_left = steps;
  ff_.steps = 0;
  ff_.from_allocator = allocator_->byte_accounting(nullptr);  // nothing waits: no head
  ff_.grows.clear();
  ff_.synced.assign(static_cast<std::size_t>(n), 0);
  if (grows) {
    for (std::size_t i = 0; i < running_.size(); ++i) {
      const Request& r = request(running_[i]);
      // The first step whose token does not fit in the room held in place.
      const std::int64_t k = r.kv_in_place_end - r.computed;
      if (k < steps) ff_.grows.emplace_back(k, static_cast<std::uint32_t>(i));
    }
    std::make_heap(ff_.grows.begin(), ff_.grows.end(), std::greater<>());
  }
  now_ = now;
  return true;
}

void Replica::sync_fast_forward(std::size_t i, std::int64_t step) {
  Request& r = request(running_[i]);
  const std::int64_t d = step - ff_.synced[i];
  r.computed += d;
  r.generated += d;
  r.kv_tokens = r.computed;           // every earlier step's room was taken and its token computed
  if (d > 0) r.last_token_ns = now_;  // the end of step `step` − 1
  ff_.synced[i] = step;
}

std::optional<TimeNs> Replica::advance_decode_step(TimeNs horizon) {
  KVSIM_ASSERT(ff_.active, "a fast-forward run is in progress");
  if (ff_.steps_left == 0) return std::nullopt;
  cost::StepBatch batch;
  batch.decode_totals = cost::DecodeTotals{ff_.num_seqs, ff_.context_tokens};
  batch.num_sampling = ff_.num_seqs;
  batch.num_padding_tokens = ff_.padding_tokens;
  const TimeNs compute_ns = cost_model_->step_time(batch);
  KVSIM_ASSERT(compute_ns >= 0, "step times are non-negative");
  const TimeNs step_ns = std::max<TimeNs>(1, compute_ns);
  const TimeNs start = now_;
  KVSIM_ASSERT(horizon >= start, "the horizon is not in the past");
  if (step_ns >= horizon - start) return std::nullopt;  // its end would not come first

  // The requests this step grows through the allocator, in the scheduler's (running) order; the
  // run ends before the step unless the allocator promises every one of them.
  const std::int64_t k = ff_.steps;
  ff_.due.clear();
  while (!ff_.grows.empty() && ff_.grows.front().first == k) {
    std::pop_heap(ff_.grows.begin(), ff_.grows.end(), std::greater<>());
    ff_.due.push_back(ff_.grows.back().second);
    ff_.grows.pop_back();
  }
  if (!ff_.due.empty() &&
      allocator_->sure_tail_grows() < static_cast<std::int64_t>(ff_.due.size())) {
    return std::nullopt;  // an ordinary step grows them (or preempts)
  }

  // start_step: the scheduler grows every request by one token, in place or (due) for real.
  advance_to(start);
  step_start_ns_ = start;
  link_free_ns_ = std::max(link_free_ns_, start);
  for (const std::uint32_t i : ff_.due) {
    sync_fast_forward(i, k);
    Request& r = request(running_[i]);
    const bool grown = try_grow(running_[i], 1);
    KVSIM_ASSERT(grown, "the allocator promised this grow");
    // The next step whose token does not fit.
    const std::int64_t next = k + r.kv_in_place_end - r.computed;
    if (next < ff_.steps_left + k) {
      ff_.grows.emplace_back(next, i);
      std::push_heap(ff_.grows.begin(), ff_.grows.end(), std::greater<>());
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

  // finish_step: every request produces a token, step_ns after its previous one.
  const TimeNs end = start + step_ns;
  advance_to(end);
  now_ = end;
  m.on_token_gaps(step_ns, ff_.num_seqs);
  ff_.context_tokens += ff_.num_seqs;
  --ff_.steps_left;
  ++ff_.steps;
  return end;
}

void Replica::end_fast_forward() {
  KVSIM_ASSERT(ff_.active, "a fast-forward run is in progress");
  ff_.active = false;
  const std::int64_t k = ff_.steps;
  if (k == 0) return;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    sync_fast_forward(i, k);
    request(running_[i]).last_token_ns = now_;
  }
}

}  // namespace kvsim::sim
