#include "sim/scheduler.h"

#include <algorithm>
#include <limits>

#include "common/assert.h"
#include "sim/replica.h"

namespace kvsim::sim {
namespace {

using Slot = RequestPool::Slot;

bool below_seq_limit(Replica& rep, const SchedulerOptions& opts) {
  return rep.num_running() + rep.num_swapping_in() < opts.max_num_seqs;
}

// Swapped requests come back FCFS while they fit (only in a pass without preemption).
void swap_in_fcfs(Replica& rep) {
  if (rep.preemptions_this_pass() > 0) return;
  while (!rep.swapped().empty() && rep.try_swap_in_head()) {
  }
}

// Admits waiting requests FCFS as whole prefills while they fit in memory, under the sequence
// limit and the token budget. With `first_may_exceed_budget` the first prefill of a step is
// admitted whatever its length (static batching has no chunking to fall back on).
void admit_whole_prefills(Replica& rep, const SchedulerOptions& opts, std::int64_t budget,
                          bool first_may_exceed_budget) {
  StepPlan& plan = rep.plan();
  while (!rep.waiting().empty() && below_seq_limit(rep, opts)) {
    const Slot slot = rep.waiting().front();
    const Request& r = rep.request(slot);
    const std::int64_t target = r.prompt_tokens + r.generated;
    std::int64_t cached = 0;
    const AdmitStatus status = rep.try_admit(slot, target, &cached);
    if (status == AdmitStatus::kNoRoom) break;
    if (status == AdmitStatus::kNeverFits) {
      rep.reject_waiting_head(RejectReason::kNeverFits);
      continue;
    }
    const std::int64_t new_tokens = target - std::min(cached, target - 1);
    const bool exempt = first_may_exceed_budget && plan.num_items() == 0;
    if (!exempt && plan.num_tokens() + new_tokens > budget) {
      rep.undo_admit(slot);
      break;
    }
    if (rep.start_running(slot, cached)) rep.plan_prefill(slot, new_tokens);
  }
}

// Admits waiting requests FCFS while budget and the sequence limit allow, each with a first
// chunk after its prefix-cache hit (capped by `chunk_cap` and the remaining budget); stops at the
// first that does not fit in memory.
void admit_prefill_chunks(Replica& rep, const SchedulerOptions& opts, std::int64_t budget,
                          std::int64_t chunk_cap) {
  StepPlan& plan = rep.plan();
  while (!rep.waiting().empty() && budget - plan.num_tokens() >= 1 && below_seq_limit(rep, opts)) {
    const Slot slot = rep.waiting().front();
    const Request& r = rep.request(slot);
    const std::int64_t target = r.prompt_tokens + r.generated;
    const std::int64_t cap = std::min(chunk_cap, budget - plan.num_tokens());
    // The first chunk starts after the prefix-cache hit: room for hit + chunk tokens.
    const std::int64_t first = std::min(target, rep.cached_prefix(slot, target) + cap);
    std::int64_t cached = 0;
    const AdmitStatus status = rep.try_admit(slot, first, &cached);
    if (status == AdmitStatus::kNoRoom) break;
    if (status == AdmitStatus::kNeverFits) {
      rep.reject_waiting_head(RejectReason::kNeverFits);
      continue;
    }
    // A request loading offloaded blocks runs once they arrive.
    if (!rep.start_running(slot, cached)) continue;
    const std::int64_t n = std::min(cap, r.kv_tokens - r.computed);
    if (n > 0) rep.plan_prefill(slot, n);
  }
}

std::int64_t chunk_cap_of(const SchedulerOptions& options) {
  return options.long_prefill_token_threshold > 0 ? options.long_prefill_token_threshold
                                                  : std::numeric_limits<std::int64_t>::max();
}

class VllmScheduler final : public Scheduler {
 public:
  explicit VllmScheduler(const SchedulerOptions& options)
      : opts_(options), budget_(effective_max_num_batched_tokens(options)) {}

  void schedule(Replica& rep) override {
    StepPlan& plan = rep.plan();
    if (rep.swapped().empty()) {
      admit_whole_prefills(rep, opts_, budget_, /*first_may_exceed_budget=*/false);
      if (plan.num_items() > 0) return;  // prefill-only step
    }
    auto& running = rep.running();
    for (std::size_t i = 0; i < running.size(); ++i) {
      if (plan.num_tokens() + 1 > budget_) break;
      const Slot slot = running[i];
      KVSIM_ASSERT(rep.request(slot).state == RequestState::kDecode,
                   "vllm: every running request is decoding");
      // When `slot` itself is preempted it was the newest: the loop ends.
      if (rep.make_room_or_preempt(slot, rep.request(slot).computed + 1)) rep.plan_decode(slot);
    }
    swap_in_fcfs(rep);
  }

 private:
  SchedulerOptions opts_;
  std::int64_t budget_;
};

// vLLM V0's partial prefills (--max-num-partial-prefills N, --max-long-partial-prefills L) as
// one scheduling pass sees them: each prefill chunk gets at most budget / (prefills that can run
// now, at most N), and no more than L prefills longer than the threshold run at once.
struct PartialPrefills {
  std::int64_t slot_budget = 0;
  std::int64_t long_prefills = 0;  // running or scheduled in this pass
};

class ChunkedPrefillScheduler final : public Scheduler {
 public:
  explicit ChunkedPrefillScheduler(const SchedulerOptions& options, bool prefix_caching,
                                   std::int64_t block_size)
      : opts_(options),
        budget_(effective_max_num_batched_tokens(options)),
        long_threshold_(long_prefill_threshold(options)),
        // vLLM V0 cuts a partial chunk to whole blocks when prefix caching is on.
        align_(prefix_caching ? std::max<std::int64_t>(1, block_size) : 1) {}

  void schedule(Replica& rep) override {
    StepPlan& plan = rep.plan();
    auto remaining = [&] { return budget_ - plan.num_tokens(); };
    auto& running = rep.running();
    PartialPrefills pp = partial_prefills(rep);
    // 1. Decodes, oldest first.
    for (std::size_t i = 0; i < running.size() && remaining() >= 1; ++i) {
      const Slot slot = running[i];
      const Request& r = rep.request(slot);
      if (r.state != RequestState::kDecode) continue;
      if (rep.make_room_or_preempt(slot, r.computed + 1)) rep.plan_decode(slot);
    }
    // 2. Prefills already under way.
    for (std::size_t i = 0; i < running.size() && remaining() >= 1; ++i) {
      const Slot slot = running[i];
      const Request& r = rep.request(slot);
      if (r.state != RequestState::kPrefill) continue;
      const std::int64_t n = chunk(r.prefill_target - r.computed, remaining(), pp.slot_budget);
      if (n == 0) break;
      if (rep.make_room_or_preempt(slot, r.computed + n)) rep.plan_prefill(slot, n);
    }
    swap_in_fcfs(rep);
    // 3. New requests, only in a pass that preempted nothing and with nothing left swapped out.
    if (rep.preemptions_this_pass() > 0 || !rep.swapped().empty()) return;
    admit_waiting(rep, pp);
  }

 private:
  static std::int64_t long_prefill_threshold(const SchedulerOptions& o) {
    // vLLM V0: 4% of max_model_len when partial prefills are on and no threshold is given.
    if (o.long_prefill_token_threshold > 0 || o.max_num_partial_prefills <= 1) {
      return o.long_prefill_token_threshold;
    }
    return o.max_model_len * 4 / 100;
  }

  bool is_long(std::int64_t new_tokens) const {
    return opts_.max_num_partial_prefills > 1 && new_tokens > long_threshold_;
  }

  // The pass's per-prefill budget from the running prefills and the waiting requests that
  // could join them (long ones only while fewer than max_long_partial_prefills run).
  PartialPrefills partial_prefills(Replica& rep) const {
    if (opts_.max_num_partial_prefills <= 1) return {budget_, 0};
    std::int64_t prefills = 0, long_running = 0, long_waiting = 0;
    for (Slot slot : rep.running()) {
      const Request& r = rep.request(slot);
      if (r.state != RequestState::kPrefill) continue;
      ++prefills;
      if (is_long(r.prefill_target - r.computed)) ++long_running;
    }
    for (Slot slot : rep.waiting()) {
      if (prefills >= opts_.max_num_partial_prefills) break;
      const Request& r = rep.request(slot);
      if (is_long(r.prompt_tokens + r.generated)) {
        if (long_running + long_waiting >= opts_.max_long_partial_prefills) continue;
        ++long_waiting;
      }
      ++prefills;
    }
    const std::int64_t schedulable = std::min(prefills, opts_.max_num_partial_prefills);
    return {schedulable > 0 ? budget_ / schedulable : budget_, long_running};
  }

  // Tokens of a prefill with `new_tokens` left to compute this step: within the budget left and
  // the slot budget, a partial chunk cut to whole blocks under prefix caching (vLLM V0).
  std::int64_t chunk(std::int64_t new_tokens, std::int64_t remaining,
                     std::int64_t slot_budget) const {
    const std::int64_t limit = std::min(remaining, slot_budget) / align_ * align_;
    return std::min({new_tokens, limit, slot_budget});
  }

  // Waiting requests FCFS; with partial prefills a long one that would exceed
  // max_long_partial_prefills keeps its place while shorter ones behind it go ahead.
  void admit_waiting(Replica& rep, PartialPrefills& pp) const {
    const StepPlan& plan = rep.plan();
    auto& waiting = rep.waiting();
    std::size_t i = 0;
    while (i < waiting.size() && budget_ - plan.num_tokens() >= 1 && below_seq_limit(rep, opts_)) {
      const Slot slot = waiting[i];
      const Request& r = rep.request(slot);
      const std::int64_t target = r.prompt_tokens + r.generated;
      if (is_long(target) && pp.long_prefills >= opts_.max_long_partial_prefills) {
        ++i;
        continue;
      }
      const std::int64_t hit = std::min(rep.cached_prefix(slot, target), target - 1);
      const std::int64_t n = chunk(target - hit, budget_ - plan.num_tokens(), pp.slot_budget);
      if (n == 0) break;
      std::int64_t cached = 0;
      const AdmitStatus status = rep.try_admit(slot, hit + n, &cached);
      if (status == AdmitStatus::kNoRoom || (status == AdmitStatus::kNeverFits && i > 0)) break;
      if (status == AdmitStatus::kNeverFits) {
        rep.reject_waiting_head(RejectReason::kNeverFits);
        continue;
      }
      const bool runs_now = rep.start_running(slot, cached);
      if (is_long(target)) ++pp.long_prefills;
      if (!runs_now) continue;  // loading offloaded blocks: it runs once they arrive
      const std::int64_t tokens = std::min(n, r.kv_tokens - r.computed);
      if (tokens > 0) rep.plan_prefill(slot, tokens);
    }
  }

  SchedulerOptions opts_;
  std::int64_t budget_;
  std::int64_t long_threshold_;
  std::int64_t align_;
};

class VllmV1Scheduler final : public Scheduler {
 public:
  explicit VllmV1Scheduler(const SchedulerOptions& options)
      : opts_(options),
        budget_(effective_max_num_batched_tokens(options)),
        chunk_cap_(chunk_cap_of(options)) {}

  void schedule(Replica& rep) override {
    StepPlan& plan = rep.plan();
    auto& running = rep.running();
    // 1. Running requests in order, decoding or prefilling alike. When `slot` itself is
    // preempted it was the last running request: the loop ends.
    for (std::size_t i = 0; i < running.size() && budget_ - plan.num_tokens() >= 1; ++i) {
      const Slot slot = running[i];
      const Request& r = rep.request(slot);
      // With a batch queue, tokens already scheduled in a step in flight (Replica's
      // batch_queue): a decode waits for its token, a prefill takes its next chunk.
      const std::int64_t scheduled = r.computed + r.in_flight_tokens;
      if (r.state == RequestState::kDecode) {
        if (r.in_flight_tokens > 0) continue;
        if (rep.make_room_or_preempt(slot, r.computed + 1)) rep.plan_decode(slot);
        continue;
      }
      const std::int64_t n =
          std::min({r.prefill_target - scheduled, chunk_cap_, budget_ - plan.num_tokens()});
      if (n == 0) continue;  // its whole prompt is in steps in flight
      if (rep.make_room_or_preempt(slot, scheduled + n)) rep.plan_prefill(slot, n);
    }
    // 2. Waiting requests, only in a pass that preempted nobody.
    if (rep.preemptions_this_pass() > 0) return;
    admit_prefill_chunks(rep, opts_, budget_, chunk_cap_);
  }

 private:
  SchedulerOptions opts_;
  std::int64_t budget_;
  std::int64_t chunk_cap_;
};

class StaticScheduler final : public Scheduler {
 public:
  explicit StaticScheduler(const SchedulerOptions& options)
      : opts_(options), budget_(effective_max_num_batched_tokens(options)) {}

  bool keeps_finished() const override { return true; }

  void schedule(Replica& rep) override {
    auto& running = rep.running();
    if (!running.empty() || rep.num_swapping_in() > 0) {
      // The batch decodes together; finished rows ride along as padding.
      for (std::size_t i = 0; i < running.size(); ++i) {
        const Slot slot = running[i];
        if (rep.make_room_or_preempt(slot, rep.request(slot).computed + 1)) rep.plan_decode(slot);
      }
      if (rep.plan().num_items() > 0) {
        for (Slot slot : rep.held()) rep.plan_padding(slot);
      }
      return;
    }
    // The batch is over: its memory is released and the next one forms.
    rep.release_held();
    swap_in_fcfs(rep);
    if (!rep.swapped().empty() || rep.num_swapping_in() > 0) return;
    admit_whole_prefills(rep, opts_, budget_, /*first_may_exceed_budget=*/true);
  }

 private:
  SchedulerOptions opts_;
  std::int64_t budget_;
};

}  // namespace

std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerOptions& options) {
  return std::make_unique<VllmScheduler>(options);
}
std::unique_ptr<Scheduler> make_chunked_prefill_scheduler(const SchedulerOptions& options,
                                                          bool prefix_caching,
                                                          std::int64_t block_size) {
  return std::make_unique<ChunkedPrefillScheduler>(options, prefix_caching, block_size);
}
std::unique_ptr<Scheduler> make_vllm_v1_scheduler(const SchedulerOptions& options) {
  return std::make_unique<VllmV1Scheduler>(options);
}
std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerOptions& options) {
  return std::make_unique<StaticScheduler>(options);
}

std::unique_ptr<Scheduler> make_scheduler(const SimOptions& sim) {
  const SchedulerOptions& options = sim.scheduler;
  switch (options.kind) {
    case SchedulerKind::kVllm:
      return make_vllm_scheduler(options);
    case SchedulerKind::kChunkedPrefill:
      return make_chunked_prefill_scheduler(options, sim.enable_prefix_caching, sim.block_size);
    case SchedulerKind::kStatic:
      return make_static_scheduler(options);
    case SchedulerKind::kVllmV1:
      return make_vllm_v1_scheduler(options);
  }
  KVSIM_ASSERT(false, "unknown scheduler kind");
  return nullptr;
}

}  // namespace kvsim::sim
