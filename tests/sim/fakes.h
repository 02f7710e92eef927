#pragma once
// Test doubles for the simulator: a counting paged allocator, a fixed-cost model and a workload
// from a vector. Small and exact, so tests can assert hand-computed numbers.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/assert.h"
#include "common/rng.h"
#include "cost/cost_model.h"
#include "memory/allocator.h"
#include "trace/request.h"

namespace kvsim::test {

// What a FakeAllocator saw, kept after the allocator is gone.
struct AllocStats {
  std::int64_t peak_used_blocks = 0;
  std::int64_t used_blocks_at_end = -1;  // set when the allocator is destroyed
};

// Blocks of `block_size` slots. reserve_final: admission takes the sequence's final length at
// once (an oracle-style contiguous reservation without placement) and grow never needs more.
// Prefix "caching": leading content ids seen before count as cached tokens, whole blocks and
// fewer than the prompt (memory is still allocated per sequence; enough to exercise the
// simulator's compute-skipping path). Swap: whole blocks to a CPU pool of cpu_swap_bytes.
// Checks its own invariants on every call: never more blocks than capacity, no unknown ids.
class FakeAllocator final : public memory::Allocator {
 public:
  struct Options {
    std::int64_t num_blocks = 100;
    std::int64_t block_size = 16;
    std::int64_t watermark_blocks = 0;  // admission and swap-in keep this many blocks free
    bool reserve_final = false;
    Bytes bytes_per_slot = 1000;
    Bytes cpu_swap_bytes = 0;
    bool refuse_swap_in = false;  // swap_in always fails (a pathological allocator)
  };
  explicit FakeAllocator(Options o, std::shared_ptr<AllocStats> record = nullptr)
      : o_(o), stats_(record ? std::move(record) : std::make_shared<AllocStats>()) {}
  ~FakeAllocator() override { stats_->used_blocks_at_end = used_blocks_; }

  std::optional<memory::AdmitResult> admit(const memory::SeqInfo& seq,
                                           std::int64_t num_tokens) override {
    KVSIM_ASSERT(!seqs_.count(seq.id), "fake: admitted twice");
    const std::int64_t room =
        o_.reserve_final ? std::max(seq.final_tokens, num_tokens) : num_tokens;
    const std::int64_t blocks = blocks_for(room);
    if (free_blocks() - blocks < o_.watermark_blocks) return std::nullopt;
    const std::int64_t cached = cached_prefix_tokens(seq, num_tokens);
    if (!seq.block_content_ids.empty()) {
      prefix_.queries += 1;
      prefix_.query_tokens += seq.prompt_tokens;
      prefix_.hit_tokens += cached;
    }
    for (std::uint64_t id : seq.block_content_ids) seen_.insert(id);
    seqs_[seq.id] = Seq{num_tokens, blocks, seq.final_tokens, false};
    used_blocks_ += blocks;
    stats_->peak_used_blocks = std::max(stats_->peak_used_blocks, used_blocks_);
    return memory::AdmitResult{cached};
  }

  std::int64_t cached_prefix_tokens(const memory::SeqInfo& seq,
                                    std::int64_t num_tokens) const override {
    std::int64_t cached = 0;
    for (std::uint64_t id : seq.block_content_ids) {
      if (!seen_.count(id)) break;
      cached += o_.block_size;
    }
    cached = std::min(cached, num_tokens);
    while (cached >= seq.prompt_tokens) cached -= o_.block_size;  // the last token is computed
    return std::max<std::int64_t>(0, cached / o_.block_size * o_.block_size);
  }

  bool grow(memory::SeqId id, std::int64_t num_tokens) override {
    Seq& s = resident(id);
    const std::int64_t need = blocks_for(s.tokens + num_tokens) - s.blocks;
    if (need > 0 && need > free_blocks()) return false;
    if (need > 0) {
      s.blocks += need;
      used_blocks_ += need;
    }
    s.tokens += num_tokens;
    KVSIM_ASSERT(s.tokens <= s.blocks * o_.block_size, "fake: tokens fit in their blocks");
    stats_->peak_used_blocks = std::max(stats_->peak_used_blocks, used_blocks_);
    return true;
  }

  void free(memory::SeqId id) override {
    auto it = seqs_.find(id);
    KVSIM_ASSERT(it != seqs_.end(), "fake: free of an unknown sequence");
    if (it->second.swapped) {
      cpu_used_ -= swap_bytes(it->second);
    } else {
      used_blocks_ -= it->second.blocks;
    }
    seqs_.erase(it);
  }

  memory::SlotAccounting accounting(const memory::SeqInfo*) const override {
    memory::SlotAccounting a;
    a.capacity = o_.num_blocks * o_.block_size;
    for (const auto& [id, s] : seqs_) {
      if (s.swapped) continue;
      const std::int64_t r = s.blocks * o_.block_size;
      a.token_states += s.tokens;
      a.reservation += std::min(r, s.final_tokens) - s.tokens;
      a.internal_fragmentation += std::max<std::int64_t>(0, r - std::max(s.final_tokens, s.tokens));
    }
    a.free = free_blocks() * o_.block_size;
    a.largest_free_extent = a.free;
    a.blocks_in_use = used_blocks_;
    KVSIM_ASSERT(used_blocks_ <= o_.num_blocks, "fake: never beyond capacity");
    KVSIM_ASSERT(a.token_states + a.reservation + a.internal_fragmentation + a.free == a.capacity,
                 "fake: slots add up");
    return a;
  }

  Bytes bytes_per_slot() const override { return o_.bytes_per_slot; }

  bool fork(memory::SeqId, const memory::SeqInfo&) override {
    KVSIM_ASSERT(false, "fake: the simulator never forks");
    return false;
  }

  std::optional<Bytes> swap_out(memory::SeqId id) override {
    Seq& s = resident(id);
    const Bytes bytes = swap_bytes(s);
    if (cpu_used_ + bytes > o_.cpu_swap_bytes) return std::nullopt;
    cpu_used_ += bytes;
    used_blocks_ -= s.blocks;
    s.swapped = true;
    return bytes;
  }

  std::optional<Bytes> swap_in(memory::SeqId id) override {
    auto it = seqs_.find(id);
    KVSIM_ASSERT(it != seqs_.end() && it->second.swapped, "fake: swap_in of a resident sequence");
    Seq& s = it->second;
    if (o_.refuse_swap_in || free_blocks() - s.blocks < o_.watermark_blocks) return std::nullopt;
    const Bytes bytes = swap_bytes(s);
    cpu_used_ -= bytes;
    used_blocks_ += s.blocks;
    s.swapped = false;
    stats_->peak_used_blocks = std::max(stats_->peak_used_blocks, used_blocks_);
    return bytes;
  }

  memory::AllocatorStats stats() const override {
    memory::AllocatorStats st;
    st.prefix_cache = prefix_;
    return st;
  }

  bool fits_alone(const memory::SeqInfo& seq) const override {
    return blocks_for(seq.prompt_tokens) <= o_.num_blocks - o_.watermark_blocks &&
           blocks_for(seq.final_tokens) <= o_.num_blocks;
  }

 private:
  struct Seq {
    std::int64_t tokens = 0;
    std::int64_t blocks = 0;
    std::int64_t final_tokens = 0;
    bool swapped = false;
  };
  std::int64_t blocks_for(std::int64_t tokens) const {
    return (tokens + o_.block_size - 1) / o_.block_size;
  }
  std::int64_t free_blocks() const { return o_.num_blocks - used_blocks_; }
  Seq& resident(memory::SeqId id) {
    auto it = seqs_.find(id);
    KVSIM_ASSERT(it != seqs_.end() && !it->second.swapped, "fake: a resident sequence");
    return it->second;
  }
  Bytes swap_bytes(const Seq& s) const {
    return static_cast<Bytes>(s.blocks * o_.block_size) * o_.bytes_per_slot;
  }

  Options o_;
  std::shared_ptr<AllocStats> stats_;
  std::map<memory::SeqId, Seq> seqs_;
  std::set<std::uint64_t> seen_;
  std::int64_t used_blocks_ = 0;
  Bytes cpu_used_ = 0;
  memory::PrefixCacheStats prefix_;
};

// step = per_step + per_prefill_token × prefill tokens + per_decode × decode rows
//        + per_context_token × Σ decode contexts (+ per_padding_token × CUDA-graph padding);
// swap = bytes × swap_ns_per_byte. Records every batch it is asked about. Prices decode totals
// (the simulator's fast forward) unless told not to.
class FixedCostModel final : public cost::CostModel {
 public:
  TimeNs per_step_ns = 0;
  TimeNs per_prefill_token_ns = 0;
  TimeNs per_decode_ns = 0;
  TimeNs per_context_token_ns = 0;
  TimeNs per_padding_token_ns = 0;
  TimeNs eager_step_ns = 0;           // added to a step that runs without a CUDA graph
  TimeNs per_moe_group_token_ns = 0;  // × StepBatch::moe_group_tokens (data-parallel MoE)
  TimeNs swap_ns_per_byte = 0;
  bool price_totals = true;

  struct Seen {
    std::vector<cost::PrefillChunk> prefills;
    std::vector<std::int64_t> decode_contexts;
    std::int64_t num_sampling = 0;
    std::int64_t num_padding_tokens = 0;
    cost::DecodeTotals decode_totals;
    bool eager = false;
  };
  mutable std::vector<Seen> seen;
  bool record = false;
  mutable std::int64_t num_totals_batches = 0;  // batches given as decode totals

  TimeNs step_time(const cost::StepBatch& batch) const override {
    std::int64_t prefill_tokens = 0;
    for (const auto& p : batch.prefills) prefill_tokens += p.num_tokens;
    std::int64_t context = batch.decode_totals.context_tokens;
    for (const std::int64_t c : batch.decode_context_tokens) context += c;
    if (batch.decode_totals.num_sequences > 0) ++num_totals_batches;
    if (record) {
      seen.push_back(Seen{{batch.prefills.begin(), batch.prefills.end()},
                          {batch.decode_context_tokens.begin(), batch.decode_context_tokens.end()},
                          batch.num_sampling,
                          batch.num_padding_tokens,
                          batch.decode_totals,
                          batch.eager});
    }
    const auto decodes =
        static_cast<TimeNs>(batch.decode_context_tokens.size()) + batch.decode_totals.num_sequences;
    return per_step_ns + per_prefill_token_ns * prefill_tokens + per_decode_ns * decodes +
           per_context_token_ns * context + per_padding_token_ns * batch.num_padding_tokens +
           per_moe_group_token_ns * batch.moe_group_tokens + (batch.eager ? eager_step_ns : 0);
  }
  bool prices_decode_totals() const override { return price_totals; }
  cost::StepCost breakdown(const cost::StepBatch& batch) const override {
    cost::StepCost c;
    c.time_s = ns_to_seconds(step_time(batch));
    return c;
  }
  TimeNs swap_time(Bytes bytes) const override {
    return swap_ns_per_byte * static_cast<TimeNs>(bytes);
  }
};

class VectorReader final : public trace::TraceReader {
 public:
  explicit VectorReader(std::vector<trace::RequestSpec> specs) : specs_(std::move(specs)) {}
  bool next(trace::RequestSpec& out) override {
    if (pos_ >= specs_.size()) return false;
    out = specs_[pos_++];
    return true;
  }
  trace::ReaderStats stats() const override {
    trace::ReaderStats s;
    s.rows_read = s.requests = static_cast<std::int64_t>(pos_);
    return s;
  }
  std::string describe() const override { return "test-vector"; }

 private:
  std::vector<trace::RequestSpec> specs_;
  std::size_t pos_ = 0;
};

inline trace::RequestSpec spec(std::uint64_t id, TimeNs arrival_ns, std::int64_t prompt,
                               std::int64_t output) {
  trace::RequestSpec s;
  s.id = id;
  s.arrival_ns = arrival_ns;
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  return s;
}

// A random workload: Poisson arrivals at `rate_per_s`, lengths uniform in the given ranges.
inline std::vector<trace::RequestSpec> random_workload(std::uint64_t seed, int n, double rate_per_s,
                                                       std::int64_t max_prompt,
                                                       std::int64_t max_output) {
  Rng rng(seed);
  std::vector<trace::RequestSpec> out;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0) t += rng.exponential(rate_per_s);
    out.push_back(spec(static_cast<std::uint64_t>(i), seconds_to_ns(t),
                       rng.uniform_int(1, max_prompt), rng.uniform_int(1, max_output)));
  }
  return out;
}

}  // namespace kvsim::test
