#pragma once
// Scheduling policies: each forms one replica's next engine step from its queues, through the
// Replica's primitives (admit, grow, preempt, plan). The allocator kind is independent of the
// policy, so "vLLM scheduling on a contiguous allocator" is a valid what-if.

#include <memory>

#include "sim/options.h"

namespace kvsim::sim {

class Replica;

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Fills replica.plan() (cleared by the caller) for the replica's next step. May admit,
  // grow, preempt, reject and swap requests. An empty plan means nothing can run now.
  virtual void schedule(Replica& replica) = 0;
  // Whether finished requests keep their KV until the scheduler releases them (static batching
  // holds a batch's memory until its longest request finishes).
  virtual bool keeps_finished() const { return false; }
};

// vllm: vLLM's default (V0) scheduler without chunked prefill. Each step is either prefill-only
// or decode-only: while no request is swapped out, waiting requests are admitted FCFS (up to
// max_num_seqs running and max_num_batched_tokens prompt tokens per step, only when the allocator
// takes the whole prompt); if none was admitted, every running request decodes one token, the
// newest running request being preempted whenever one cannot grow; then, if nothing was
// preempted, swapped requests are brought back FCFS.
std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerOptions& options);

// chunked-prefill: vLLM V0 with --enable-chunked-prefill (Sarathi-style). One token budget
// (max_num_batched_tokens) per step: first every running decode (one token each), then running
// partial prefills, then waiting requests FCFS while running < max_num_seqs, each prefill chunk
// capped by the remaining budget. With max_num_partial_prefills N > 1 each chunk also gets at
// most budget / (prefills that can run now, at most N), and at most max_long_partial_prefills
// prefills longer than long_prefill_token_threshold (default 4% of max_model_len) run at once:
// a waiting long one keeps its place while shorter ones behind it start. With prefix caching a
// partial chunk is cut to whole blocks (`block_size`), as vLLM V0 does. Room is taken per chunk;
// a request that cannot grow preempts the newest running one; no new admission in a step that
// preempted or while a request is swapped out.
std::unique_ptr<Scheduler> make_chunked_prefill_scheduler(const SchedulerOptions& options,
                                                          bool prefix_caching = false,
                                                          std::int64_t block_size = 1);

// vllm-v1: vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, 0.10). One token budget
// (max_num_batched_tokens) per step and no prefill/decode phases: first the running requests in
// their order (oldest first), each taking what it still needs — one token when decoding, the
// rest of its prompt capped by long_prefill_token_threshold and the remaining budget when
// prefilling (so a long prefill ahead of a decode can take the whole budget) — then, only if
// this pass preempted nobody, waiting requests FCFS while running < max_num_seqs, each starting
// after its prefix-cache hit with a chunk capped the same way. KV slots are taken per scheduled
// chunk; a request that cannot get them preempts (by recompute) the last running request,
// itself included, which goes back to the head of the waiting queue. With a batch queue
// (pipeline stages; Replica) the requests of the steps in flight are passed over, but for a
// prefill's chunks not yet scheduled (vLLM: nothing new to schedule until the output arrives).
std::unique_ptr<Scheduler> make_vllm_v1_scheduler(const SchedulerOptions& options);

// static: request-level batching (HF generate, FasterTransformer). When the previous batch has
// entirely finished, up to max_num_seqs waiting requests the allocator admits form a batch; one
// step computes all their prompts; then the whole batch decodes together until its longest
// request finishes: finished rows stay in the batch (computed as padding, their memory held), and
// nothing joins until the batch is done.
std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerOptions& options);

// The scheduler `sim.scheduler.kind` names, with its options (and, for chunked-prefill, the
// prefix caching and block size it aligns chunks to).
std::unique_ptr<Scheduler> make_scheduler(const SimOptions& sim);

}  // namespace kvsim::sim
