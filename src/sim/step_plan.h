#pragma once
// What one engine step of one replica computes: the scheduler fills it, the replica applies it
// when the step ends. Its buffers are reused from step to step (no allocation once warm).

#include <cstdint>
#include <vector>

#include "common/units.h"
#include "cost/cost_model.h"
#include "sim/options.h"
#include "sim/request.h"

namespace kvsim::sim {

enum class StepItemKind : std::uint8_t {
  kPrefill,  // num_tokens prompt tokens (a chunk or the whole remainder)
  kDecode,   // one token
  kPadding,  // static batching: a finished sequence still occupying its batch row (no output)
};

struct StepItem {
  RequestPool::Slot request = 0;
  StepItemKind kind = StepItemKind::kDecode;
  bool canceled = false;  // its request was preempted later in the same scheduling pass
  std::int64_t num_tokens = 0;
  std::int64_t context_tokens = 0;  // tokens already in the request's KV cache before this step
};

class StepPlan {
 public:
  void clear();
  void add(RequestPool::Slot request, StepItemKind kind, std::int64_t num_tokens,
           std::int64_t context_tokens);
  // Cancels every item of `request`; returns the tokens given back to the step budget.
  std::int64_t cancel(RequestPool::Slot request);

  const std::vector<StepItem>& items() const { return items_; }
  // Live (not canceled) items.
  std::int64_t num_items() const { return num_items_; }
  // Tokens of the live prefill and decode items (padding excluded): the step's token budget use.
  std::int64_t num_tokens() const { return num_tokens_; }

  // The cost model's view, built from the live items by build_batch(). `prefill_done(i)` says
  // whether live prefill item i completes its request's prefill (it then samples a token).
  template <typename PrefillDone>
  const cost::StepBatch& build_batch(PrefillDone prefill_done);
  // How the built batch runs: the rows a CUDA graph adds (cost::StepBatch::num_padding_tokens),
  // or eagerly (cost::StepBatch::eager).
  void set_graph(const GraphRun& graph) {
    batch_.num_padding_tokens = graph.padding_tokens;
    batch_.eager = graph.eager;
  }
  // The batch the last build_batch() built (its spans point into this plan until clear()).
  const cost::StepBatch& batch() const { return batch_; }

  Bytes swap_out_bytes = 0;  // KV copied to host memory by preemptions in this step

 private:
  std::vector<StepItem> items_;
  std::int64_t num_items_ = 0;
  std::int64_t num_tokens_ = 0;
  std::vector<cost::PrefillChunk> prefills_;
  std::vector<std::int64_t> decode_contexts_;
  cost::StepBatch batch_;
};

template <typename PrefillDone>
const cost::StepBatch& StepPlan::build_batch(PrefillDone prefill_done) {
  prefills_.clear();
  decode_contexts_.clear();
  std::int64_t sampling = 0;
  for (const StepItem& item : items_) {
    if (item.canceled) continue;
    if (item.kind == StepItemKind::kPrefill) {
      prefills_.push_back(cost::PrefillChunk{item.num_tokens, item.context_tokens});
      if (prefill_done(item)) ++sampling;
    } else {
      decode_contexts_.push_back(item.context_tokens);
      ++sampling;
    }
  }
  batch_.prefills = prefills_;
  batch_.decode_context_tokens = decode_contexts_;
  batch_.num_sampling = sampling;
  set_graph({});
  return batch_;
}

}  // namespace kvsim::sim
