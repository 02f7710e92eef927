// Replica's fast forward over runs of pure-decode steps (declared in sim/replica.h).
//
// Why it is exact. In a qualifying step every running request decodes one token into room it
// already holds (Allocator::in_place_room: the replica only counts the token, as try_grow
// would), so the allocator is not called and its accounting stays what it was; no request
// finishes, is admitted, preempted or swapped; the batch is the same requests with every context
// one token longer than in the step before, priced from its totals (CostModel::
// prices_decode_totals: bit-identical times); every request produced its previous token at the
// step's start, so each of the step's inter-token gaps is the step time. Each step then updates
// exactly what start_step and finish_step would (queue and memory integrals at the step's start
// and end, the step counters, the ITL samples as one add of n equal gaps), and the requests'
// own counters are brought up to date at the end, before the next ordinary step. The simulator
// runs a step here only when no event could come first (sim/simulator.cpp).

#include <algorithm>
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
  std::int64_t steps = std::numeric_limits<std::int64_t>::max();
  std::int64_t context = 0;
  for (const RequestPool::Slot slot : running_) {
    const Request& r = request(slot);
    if (r.state != RequestState::kDecode || r.last_token_ns != now || r.kv_tokens != r.computed) {
      return false;
    }
    // Step k (from 0) needs room for computed + k + 1 tokens and produces token generated + k + 1.
    steps = std::min({steps, r.kv_in_place_end - r.computed, r.output_tokens - r.generated - 1});
    if (steps <= 0) return false;
    context += r.computed;
  }
  ff_ = FastForward{};
  ff_.active = true;
  ff_.num_seqs = n;
  ff_.context_tokens = context;
  ff_.padding_tokens = so.cuda_graph_max_size > 0
                           ? cuda_graph_padded_tokens(n, so.cuda_graph_max_size,
                                                      effective_max_num_batched_tokens(so)) -
                                 n
                           : 0;
  ff_.steps_left = steps;
  ff_.from_allocator = allocator_->byte_accounting(nullptr);  // nothing waits: no head
  now_ = now;
  return true;
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

  // start_step: the scheduler grows every request by one token in place.
  advance_to(start);
  step_start_ns_ = start;
  link_free_ns_ = std::max(link_free_ns_, start);
  deferred_tokens_ += ff_.num_seqs;
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
  for (const RequestPool::Slot slot : running_) {
    Request& r = request(slot);
    r.computed += k;
    r.kv_tokens += k;  // deferred: counted in deferred_tokens_ already
    r.generated += k;
    r.last_token_ns = now_;
  }
}

}  // namespace kvsim::sim
