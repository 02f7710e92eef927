#include "memory/paged_allocator.h"

#include <algorithm>
#include <numeric>

#include "common/assert.h"
#include "common/int_math.h"
#include "common/rng.h"

namespace kvsim::memory {

namespace {

constexpr std::uint64_t kHashSeed = 0x6b7673696d6b7631ULL;  // root of every block-hash chain

std::vector<KvGroupSpec> effective_groups(const AllocatorOptions& o) {
  if (!o.groups.empty()) return o.groups;
  return {KvGroupSpec{o.bytes_per_slot, 0}};
}

Bytes widest(const std::vector<KvGroupSpec>& groups) {
  Bytes w = 0;
  for (const auto& g : groups) w = std::max(w, g.bytes_per_slot);
  return w;
}

}  // namespace

PagedAllocator::PagedAllocator(const AllocatorOptions& options)
    : base_block_size_(options.block_size),
      page_bytes_(static_cast<Bytes>(options.block_size) * widest(effective_groups(options))),
      widest_bytes_per_slot_(widest(effective_groups(options))),
      bytes_per_slot_(0),
      prefix_caching_(options.enable_prefix_caching),
      watermark_blocks_(0),
      cpu_blocks_(0),
      state_blocks_(options.state_blocks_per_seq),
      state_bytes_(options.state_bytes_per_seq),
      state_group_(static_cast<int>(effective_groups(options).size())),
      pool_(page_bytes_ > 0 ? static_cast<std::int64_t>(options.capacity_bytes / page_bytes_) : 0,
            static_cast<int>(effective_groups(options).size()) +
                (options.state_blocks_per_seq > 0 ? 1 : 0)) {
  KVSIM_ASSERT(options.block_size >= 1 && widest_bytes_per_slot_ > 0, "paged options unchecked");
  KVSIM_ASSERT(
      state_blocks_ == 0 || (!prefix_caching_ && state_bytes_ > 0 &&
                             state_bytes_ <= static_cast<Bytes>(state_blocks_) * page_bytes_),
      "state options unchecked");
  const std::int64_t num_blocks = pool_.num_blocks();
  watermark_blocks_ =
      static_cast<std::int64_t>(options.watermark * static_cast<double>(num_blocks));
  cpu_blocks_ = static_cast<std::int64_t>(options.cpu_swap_bytes / page_bytes_);
  hit_unit_ = 1;
  for (const KvGroupSpec& spec : effective_groups(options)) {
    KVSIM_ASSERT(spec.bytes_per_slot > 0 && spec.sliding_window >= 0, "group options unchecked");
    GroupGeometry g;
    g.bytes_per_slot = spec.bytes_per_slot;
    g.block_size = static_cast<std::int64_t>(page_bytes_ / spec.bytes_per_slot);
    g.sliding_window = spec.sliding_window;
    g.padding = page_bytes_ - static_cast<Bytes>(g.block_size) * spec.bytes_per_slot;
    g.hash_stride = g.block_size % base_block_size_ == 0 ? g.block_size / base_block_size_ : 0;
    if (g.hash_stride == 0 || hit_unit_ == 0) {
      hit_unit_ = 0;
    } else {
      hit_unit_ = std::lcm(hit_unit_, g.block_size);
    }
    bytes_per_slot_ += spec.bytes_per_slot;
    groups_.push_back(g);
  }
  reservation_.assign(groups_.size(), 0);
  if (options.cpu_offload_bytes > 0) {
    KVSIM_ASSERT(prefix_caching_ && groups_.size() == 1 && groups_[0].sliding_window == 0,
                 "offload options unchecked");
    cpu_tier_ = std::make_unique<CpuTier>(
        static_cast<std::int64_t>(options.cpu_offload_bytes / page_bytes_));
    pool_.set_offload_tier(cpu_tier_.get());
  }
}

// ---- helpers ------------------------------------------------------------------------------

PagedAllocator::Seq* PagedAllocator::find_seq(SeqId id) const {
  if (last_seq_ != nullptr && last_id_ == id) return last_seq_;
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) return nullptr;
  last_id_ = id;
  last_seq_ = const_cast<Seq*>(&it->second);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  return last_seq_;
}

PagedAllocator::Seq& PagedAllocator::resident(SeqId id) {
  Seq* s = find_seq(id);
  KVSIM_ASSERT(s != nullptr, "unknown sequence id");
  KVSIM_ASSERT(!s->swapped, "the sequence is swapped out");
  return *s;
}

std::vector<std::uint64_t> PagedAllocator::chain_hashes(const SeqInfo& seq) const {
  std::vector<std::uint64_t> hashes;
  if (!prefix_caching_ || seq.block_content_ids.empty()) return hashes;
  // Content ids past the prompt are its output's (a conversation whose next turn starts with
  // them): those blocks are cached as they fill, as vLLM caches every full block.
  const std::size_t full = static_cast<std::size_t>(seq.final_tokens / base_block_size_);
  const std::size_t n = std::min(full, seq.block_content_ids.size());
  hashes.reserve(n);
  std::uint64_t h = kHashSeed;
  for (std::size_t j = 0; j < n; ++j) {
    h = hash_combine(h, seq.block_content_ids[j]);
    hashes.push_back(h);
  }
  return hashes;
}

std::uint64_t PagedAllocator::group_hash(const Seq& s, int g, std::int64_t j) const {
  const std::int64_t stride = groups_[static_cast<std::size_t>(g)].hash_stride;
  return s.hashes[static_cast<std::size_t>((j + 1) * stride - 1)];
}

std::int64_t PagedAllocator::skipped_first(int g, std::int64_t tokens) const {
  const GroupGeometry& geo = groups_[static_cast<std::size_t>(g)];
  if (geo.sliding_window == 0) return 0;
  return std::max<std::int64_t>(0, tokens - geo.sliding_window + 1) / geo.block_size;
}

PagedAllocator::Hit PagedAllocator::find_hit(const std::vector<std::uint64_t>& hashes,
                                             std::int64_t cap) const {
  const std::size_t num_groups = groups_.size();
  Hit hit;
  hit.first.assign(num_groups, 0);
  hit.blocks.resize(num_groups);
  if (!prefix_caching_ || hashes.empty() || hit_unit_ == 0) return hit;
  cap = std::min(cap, static_cast<std::int64_t>(hashes.size()) * base_block_size_);
  std::int64_t limit = cap > 0 ? cap / hit_unit_ * hit_unit_ : 0;
  const auto hash_at = [&](const GroupGeometry& geo, std::int64_t j) {
    return hashes[static_cast<std::size_t>((j + 1) * geo.hash_stride - 1)];
  };
  // Full-attention groups: the hit is a chain of cached blocks from the start.
  for (std::size_t g = 0; g < num_groups && limit > 0; ++g) {
    const GroupGeometry& geo = groups_[g];
    if (geo.sliding_window > 0) continue;
    std::int64_t chain = 0;
    const std::int64_t max_blocks = limit / geo.block_size;
    while (chain < max_blocks &&
           pool_.lookup(static_cast<int>(g), hash_at(geo, chain)) != kNoBlock) {
      ++chain;
    }
    limit = std::min(limit, chain * geo.block_size / hit_unit_ * hit_unit_);
  }
  // Window groups: the blocks covering the last (window − 1) tokens before the hit end must be
  // cached; earlier ones are not needed. Runs of consecutive cached blocks, per group.
  std::vector<std::vector<std::int64_t>> runs(num_groups);
  for (std::size_t g = 0; g < num_groups && limit > 0; ++g) {
    const GroupGeometry& geo = groups_[g];
    if (geo.sliding_window == 0) continue;
    const std::int64_t n = limit / geo.block_size;
    auto& run = runs[g];
    run.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = 0; j < n; ++j) {
      const bool cached = pool_.lookup(static_cast<int>(g), hash_at(geo, j)) != kNoBlock;
      run[static_cast<std::size_t>(j)] =
          cached ? (j > 0 ? run[static_cast<std::size_t>(j - 1)] : 0) + 1 : 0;
    }
  }
  const auto window_blocks = [&](const GroupGeometry& geo, std::int64_t tokens) {
    return std::min(ceil_div(geo.sliding_window - 1, geo.block_size), tokens / geo.block_size);
  };
  for (; limit > 0; limit -= hit_unit_) {
    bool ok = true;
    for (std::size_t g = 0; g < num_groups && ok; ++g) {
      const GroupGeometry& geo = groups_[g];
      if (geo.sliding_window == 0) continue;
      const std::int64_t end = limit / geo.block_size;
      const std::int64_t need = window_blocks(geo, limit);
      ok = need == 0 || runs[g][static_cast<std::size_t>(end - 1)] >= need;
    }
    if (ok) break;
  }
  if (limit <= 0) return hit;
  hit.tokens = limit;
  for (std::size_t g = 0; g < num_groups; ++g) {
    const GroupGeometry& geo = groups_[g];
    const std::int64_t end = limit / geo.block_size;
    const std::int64_t first = geo.sliding_window == 0 ? 0 : end - window_blocks(geo, limit);
    hit.first[g] = first;
    for (std::int64_t j = first; j < end; ++j) {
      const BlockId b = pool_.lookup(static_cast<int>(g), hash_at(geo, j));
      KVSIM_ASSERT(b != kNoBlock, "a hit block vanished");
      if (pool_.ref(b) == 0) ++hit.evictable;
      hit.blocks[g].push_back(b);
    }
  }
  return hit;
}

void PagedAllocator::settle(Seq& s, int g, std::int64_t from) {
  Table& t = s.tables[static_cast<std::size_t>(g)];
  const GroupGeometry& geo = groups_[static_cast<std::size_t>(g)];
  const std::int64_t bs = geo.block_size;
  const std::int64_t end = t.first + static_cast<std::int64_t>(t.blocks.size());
  for (std::int64_t j = std::max(from, t.first); j < end; ++j) {
    const BlockId b = t.blocks[static_cast<std::size_t>(j - t.first)];
    const auto fill =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(s.num_tokens - j * bs, 0, bs));
    if (pool_.fill(b) != fill) pool_.set_fill(b, fill);
  }
  if (!prefix_caching_ || geo.hash_stride == 0) return;
  const auto cacheable = static_cast<std::int64_t>(s.hashes.size()) / geo.hash_stride;
  t.next_register = std::max(t.next_register, t.first);
  while (t.next_register < end && t.next_register < cacheable) {
    const BlockId b = t.blocks[static_cast<std::size_t>(t.next_register - t.first)];
    if (pool_.fill(b) < bs) break;
    pool_.register_hash(b, group_hash(s, g, t.next_register));
    ++t.next_register;
  }
}

void PagedAllocator::allocate_state(Seq& s) {
  for (std::int64_t k = 0; k < state_blocks_; ++k) s.state.push_back(pool_.allocate(state_group_));
}

void PagedAllocator::release_state(Seq& s) {
  for (auto it = s.state.rbegin(); it != s.state.rend(); ++it) pool_.release(*it);
  s.state.clear();
}

void PagedAllocator::release_table(Table& t) {
  for (auto it = t.blocks.rbegin(); it != t.blocks.rend(); ++it) pool_.release(*it);
  t.blocks.clear();
}

// ---- Allocator ----------------------------------------------------------------------------

std::optional<AdmitResult> PagedAllocator::admit(const SeqInfo& seq, std::int64_t num_tokens) {
  KVSIM_ASSERT(num_tokens >= 0 && seq.prompt_tokens >= 0 && seq.prompt_tokens <= seq.final_tokens,
               "admit: token counts out of range");
  KVSIM_ASSERT(!seqs_.contains(seq.id), "admit: the id is already live");
  std::vector<std::uint64_t> hashes = chain_hashes(seq);
  const std::int64_t cap = std::min(num_tokens, seq.prompt_tokens - 1);
  const Hit hit = find_hit(hashes, cap);
  // Loaded blocks are fresh GPU blocks: `needed` below counts them with the others.
  const std::int64_t loaded = cpu_hit_blocks(hashes, hit.tokens / base_block_size_, cap);
  std::int64_t needed = hit.evictable + state_blocks_;
  const std::size_t num_groups = groups_.size();
  for (std::size_t g = 0; g < num_groups; ++g) {
    const std::int64_t held = ceil_div(num_tokens, groups_[g].block_size) - hit.first[g];
    needed += std::max<std::int64_t>(0, held) - static_cast<std::int64_t>(hit.blocks[g].size());
  }
  if (pool_.num_free() - needed < watermark_blocks_) {
    ++stats_.admits_refused;
    return std::nullopt;
  }
  // The blocks to load become the tier's youngest, so this admission's evictions keep them.
  for (std::int64_t j = 0; j < loaded; ++j) {
    cpu_tier_->touch(hashes[static_cast<std::size_t>(hit.tokens / base_block_size_ + j)]);
  }
  Seq s;
  s.prompt = seq.prompt_tokens;
  s.final_tokens = seq.final_tokens;
  s.num_tokens = num_tokens;
  s.hashes = std::move(hashes);
  s.tables.resize(num_groups);
  // Every group's hit blocks are taken before any fresh block: a fresh block may evict an
  // evictable block, which must not be another group's hit.
  for (std::size_t g = 0; g < num_groups; ++g) {
    Table& t = s.tables[g];
    t.first = hit.first[g];
    const std::int64_t end = std::max(t.first, ceil_div(num_tokens, groups_[g].block_size));
    t.blocks.reserve(static_cast<std::size_t>(end - t.first));
    for (BlockId b : hit.blocks[g]) {
      pool_.add_ref(b);
      t.blocks.push_back(b);
    }
  }
  for (std::size_t g = 0; g < num_groups; ++g) {
    Table& t = s.tables[g];
    const std::int64_t end = std::max(t.first, ceil_div(num_tokens, groups_[g].block_size));
    while (t.first + static_cast<std::int64_t>(t.blocks.size()) < end) {
      t.blocks.push_back(pool_.allocate(static_cast<int>(g)));
    }
    settle(s, static_cast<int>(g), t.first + static_cast<std::int64_t>(hit.blocks[g].size()));
  }
  allocate_state(s);
  count_prefix_query(seq, static_cast<std::int64_t>(s.hashes.size()), hit.tokens, loaded);
  account(s, +1);
  seqs_.emplace(seq.id, std::move(s));
  ++stats_.admits;
  const std::int64_t loaded_tokens = loaded * base_block_size_;
  return AdmitResult{hit.tokens + loaded_tokens, loaded_tokens,
                     static_cast<Bytes>(loaded) * page_bytes_};
}

bool PagedAllocator::grow_tail_in_place(Seq& s, std::int64_t grown) {
  if (groups_.size() != 1 || groups_[0].sliding_window != 0 || s.tables[0].blocks.empty()) {
    return false;
  }
  Table& t = s.tables[0];
  const std::int64_t bs = groups_[0].block_size;
  const std::int64_t end = t.first + static_cast<std::int64_t>(t.blocks.size());
  const BlockId tail = t.blocks.back();
  if (grown > end * bs || pool_.fill(tail) >= bs || pool_.ref(tail) != 1) return false;
  reservation_[0] -= own_reservation(s, 0);
  s.num_tokens = grown;
  settle(s, 0, end - 1);
  reservation_[0] += own_reservation(s, 0);
  return true;
}

bool PagedAllocator::can_grow(const Seq& s, std::int64_t grown) const {
  std::int64_t needed = 0;
  std::int64_t released = 0;  // blocks the window skip returns to the pool
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Table& t = s.tables[g];
    const std::int64_t bs = groups_[g].block_size;
    const std::int64_t end = t.first + static_cast<std::int64_t>(t.blocks.size());
    const std::int64_t first = std::max(t.first, skipped_first(static_cast<int>(g), s.num_tokens));
    for (std::int64_t j = t.first; j < first; ++j) {
      if (pool_.ref(t.blocks[static_cast<std::size_t>(j - t.first)]) == 1) ++released;
    }
    needed += std::max<std::int64_t>(0, ceil_div(grown, bs) - end);
    if (end > first) {
      const BlockId tail = t.blocks.back();
      if (pool_.fill(tail) < bs && pool_.ref(tail) > 1) ++needed;  // copy-on-write
    }
  }
  return needed <= pool_.num_free() + released;
}

void PagedAllocator::skip_window(Table& t, int g, std::int64_t old_tokens) {
  const std::int64_t first = std::max(t.first, skipped_first(g, old_tokens));
  if (first <= t.first) return;
  const auto skip = static_cast<std::ptrdiff_t>(first - t.first);
  for (std::ptrdiff_t k = skip - 1; k >= 0; --k)
    pool_.release(t.blocks[static_cast<std::size_t>(k)]);
  t.blocks.erase(t.blocks.begin(), t.blocks.begin() + skip);
  t.first = first;
}

void PagedAllocator::extend_table(Seq& s, int g) {
  Table& t = s.tables[static_cast<std::size_t>(g)];
  const std::int64_t bs = groups_[static_cast<std::size_t>(g)].block_size;
  std::int64_t from = t.first + static_cast<std::int64_t>(t.blocks.size());
  if (!t.blocks.empty()) {
    BlockId& tail = t.blocks.back();
    if (pool_.fill(tail) < bs) {
      --from;
      if (pool_.ref(tail) > 1) {
        const BlockId copy = pool_.allocate(g);
        pool_.set_fill(copy, pool_.fill(tail));
        pool_.release(tail);
        tail = copy;
        ++stats_.cow_copies;
      }
    }
  }
  while (t.first + static_cast<std::int64_t>(t.blocks.size()) < ceil_div(s.num_tokens, bs)) {
    t.blocks.push_back(pool_.allocate(g));
  }
  settle(s, g, from);
}

bool PagedAllocator::grow(SeqId id, std::int64_t num_tokens) {
  KVSIM_ASSERT(num_tokens >= 0, "grow by a negative count");
  Seq& s = resident(id);
  if (num_tokens == 0) return true;
  const std::int64_t grown = s.num_tokens + num_tokens;
  if (grow_tail_in_place(s, grown)) return true;
  if (!can_grow(s, grown)) {
    ++stats_.grows_refused;
    return false;
  }
  account(s, -1);
  s.num_tokens = grown;
  const int num_groups = static_cast<int>(groups_.size());
  // Window skips first, in every group, so that their blocks can serve this growth.
  for (int g = 0; g < num_groups; ++g) {
    skip_window(s.tables[static_cast<std::size_t>(g)], g, grown - num_tokens);
  }
  for (int g = 0; g < num_groups; ++g) extend_table(s, g);
  account(s, +1);
  return true;
}

void PagedAllocator::free(SeqId id) {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end(), "free of an unknown sequence (double free?)");
  Seq& s = it->second;
  if (s.swapped) {
    for (const Table& t : s.tables) cpu_blocks_used_ -= t.swapped_blocks;
    cpu_blocks_used_ -= s.swapped_state;
  } else {
    account(s, -1);
    for (Table& t : s.tables) release_table(t);
    release_state(s);
  }
  if (last_seq_ == &s) last_seq_ = nullptr;
  seqs_.erase(it);
}

bool PagedAllocator::fork(SeqId parent, const SeqInfo& child) {
  KVSIM_ASSERT(!seqs_.contains(child.id), "fork: the child id is already live");
  const Seq& p = resident(parent);
  KVSIM_ASSERT(child.final_tokens >= p.num_tokens, "fork: the child is shorter than its parent");
  if (pool_.num_free() < state_blocks_) return false;  // the child's own copy of the state
  Seq c = p;
  c.final_tokens = child.final_tokens;
  for (const Table& t : c.tables) {
    for (BlockId b : t.blocks) pool_.add_ref(b);
  }
  c.state.clear();
  allocate_state(c);
  account(c, +1);
  seqs_.emplace(child.id, std::move(c));
  ++stats_.forks;
  forked_ = true;
  return true;
}

std::optional<Bytes> PagedAllocator::swap_out(SeqId id) {
  Seq& s = resident(id);
  std::int64_t blocks = static_cast<std::int64_t>(s.state.size());
  for (const Table& t : s.tables) blocks += static_cast<std::int64_t>(t.blocks.size());
  if (cpu_blocks_ == 0 || cpu_blocks_used_ + blocks > cpu_blocks_) {
    ++stats_.swaps_refused;
    return std::nullopt;
  }
  account(s, -1);
  for (Table& t : s.tables) {
    t.swapped_blocks = static_cast<std::int64_t>(t.blocks.size());
    release_table(t);
  }
  s.swapped_state = static_cast<std::int64_t>(s.state.size());
  release_state(s);
  s.swapped = true;
  cpu_blocks_used_ += blocks;
  const Bytes moved = static_cast<Bytes>(blocks) * page_bytes_;
  ++stats_.swap_outs;
  stats_.swapped_out_bytes += moved;
  return moved;
}

std::optional<Bytes> PagedAllocator::swap_in(SeqId id) {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end() && it->second.swapped, "swap_in of a sequence not swapped out");
  Seq& s = it->second;
  std::int64_t blocks = s.swapped_state;
  for (const Table& t : s.tables) blocks += t.swapped_blocks;
  if (pool_.num_free() - blocks < watermark_blocks_) {
    ++stats_.swaps_refused;
    return std::nullopt;
  }
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    Table& t = s.tables[g];
    for (std::int64_t k = 0; k < t.swapped_blocks; ++k) {
      t.blocks.push_back(pool_.allocate(static_cast<int>(g)));
    }
    t.swapped_blocks = 0;
    t.next_register = t.first;
    settle(s, static_cast<int>(g), t.first);
  }
  allocate_state(s);
  s.swapped_state = 0;
  s.swapped = false;
  account(s, +1);
  cpu_blocks_used_ -= blocks;
  const Bytes moved = static_cast<Bytes>(blocks) * page_bytes_;
  ++stats_.swap_ins;
  stats_.swapped_in_bytes += moved;
  return moved;
}

std::optional<std::int64_t> PagedAllocator::in_place_room(SeqId id) const {
  if (groups_.size() != 1 || groups_[0].sliding_window != 0 || forked_) return std::nullopt;
  const Seq* found = find_seq(id);
  KVSIM_ASSERT(found != nullptr, "in_place_room of an unknown sequence");
  const Seq& s = *found;
  const Table& t = s.tables[0];
  if (s.swapped || t.blocks.empty() || pool_.ref(t.blocks.back()) != 1) return std::nullopt;
  const std::int64_t end = t.first + static_cast<std::int64_t>(t.blocks.size());
  // A tail block that fills up is registered in the prefix cache when it holds prompt tokens
  // (settle): its last slot is then left to grow(). Any other tail can fill in place.
  const GroupGeometry& geo = groups_[0];
  const bool registers = prefix_caching_ && geo.hash_stride != 0 &&
                         end - 1 < static_cast<std::int64_t>(s.hashes.size()) / geo.hash_stride;
  const std::int64_t last = std::min(end * geo.block_size - (registers ? 1 : 0), s.final_tokens);
  return std::max<std::int64_t>(0, last - s.num_tokens);
}

std::int64_t PagedAllocator::sure_tail_grows() const {
  if (groups_.size() != 1 || groups_[0].sliding_window != 0 || forked_) return 0;
  return pool_.num_free();
}

AllocatorStats PagedAllocator::stats() const {
  AllocatorStats s = stats_;
  s.evictions = pool_.evictions();
  s.cpu_bytes_in_use = static_cast<Bytes>(cpu_blocks_used_) * page_bytes_;
  if (cpu_tier_) {
    s.offload.capacity_blocks = cpu_tier_->capacity();
    s.offload.blocks_held = cpu_tier_->size();
    s.offload.stored_blocks = cpu_tier_->stored_blocks();
    s.offload.stored_bytes = static_cast<Bytes>(cpu_tier_->stored_blocks()) * page_bytes_;
    s.offload.dropped_blocks = cpu_tier_->dropped_blocks();
  }
  return s;
}

bool PagedAllocator::fits_alone(const SeqInfo& seq) const {
  std::int64_t at_admission = state_blocks_;
  std::int64_t peak = state_blocks_;
  for (const GroupGeometry& g : groups_) {
    const std::int64_t prompt_blocks = ceil_div(seq.prompt_tokens, g.block_size);
    const std::int64_t final_blocks = ceil_div(seq.final_tokens, g.block_size);
    at_admission += prompt_blocks;
    peak += g.sliding_window == 0
                ? final_blocks
                : std::min(final_blocks,
                           std::max(prompt_blocks, ceil_div(g.sliding_window, g.block_size) + 1));
  }
  return at_admission <= pool_.num_blocks() - watermark_blocks_ && peak <= pool_.num_blocks();
}

// ---- accounting ---------------------------------------------------------------------------

std::int64_t PagedAllocator::own_reservation(const Seq& s, std::size_t g) const {
  const Table& t = s.tables[g];
  if (s.swapped || t.blocks.empty()) return 0;
  const std::int64_t end =
      (t.first + static_cast<std::int64_t>(t.blocks.size())) * groups_[g].block_size;
  return std::max<std::int64_t>(0, std::min(end, s.final_tokens) - s.num_tokens);
}

void PagedAllocator::account(const Seq& s, std::int64_t sign) {
  for (std::size_t g = 0; g < groups_.size(); ++g) reservation_[g] += sign * own_reservation(s, g);
}

// ---- introspection ------------------------------------------------------------------------

const std::vector<BlockId>& PagedAllocator::block_table(SeqId id, int group) const {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end(), "unknown sequence id");
  return it->second.tables[static_cast<std::size_t>(group)].blocks;
}

std::int64_t PagedAllocator::first_block(SeqId id, int group) const {
  const auto it = seqs_.find(id);
  KVSIM_ASSERT(it != seqs_.end(), "unknown sequence id");
  return it->second.tables[static_cast<std::size_t>(group)].first;
}

}  // namespace kvsim::memory
