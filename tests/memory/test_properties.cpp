// Property tests: thousands of random operation sequences (admit, grow, free, fork, swap) over
// every allocator and placement, checking after every operation that
//  - slots and bytes are conserved: the five quantities add up exactly to capacity;
//  - no block is leaked or double-freed and no reference count is negative (check_invariants
//    recounts the pool against the block tables; contiguous: extents tile the space);
//  - a refused operation changes nothing;
//  - paged external fragmentation is 0 and per-sequence internal fragmentation < block size;
//  - token states equal the tokens stored (contiguous; paged without sharing) and never exceed
//    them (shared blocks count once);
//  - the time-weighted integrals add up exactly and the fractions to 1;
// and that releasing everything returns all memory.

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/rng.h"
#include "memory/allocator.h"
#include "memory/contiguous_allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {
namespace {

// REQUIRE for the hot loop: Catch records nothing unless the property fails (millions of checks
// otherwise dominate the run time, especially under the sanitizers).
#define PROPERTY(cond)                              \
  do {                                              \
    if (!(cond)) FAIL("property violated: " #cond); \
  } while (0)

struct Config {
  std::string name;
  AllocatorOptions options;
};

AllocatorOptions paged(std::int64_t block_size, std::int64_t num_blocks, bool caching,
                       double watermark) {
  AllocatorOptions o;
  o.kind = AllocatorKind::kPaged;
  o.bytes_per_slot = 3;
  o.block_size = block_size;
  o.capacity_bytes = static_cast<Bytes>(block_size * num_blocks) * 3 + 2;
  o.enable_prefix_caching = caching;
  o.watermark = watermark;
  o.cpu_swap_bytes = static_cast<Bytes>(block_size * 20) * 3;
  return o;
}

AllocatorOptions hybrid(std::vector<KvGroupSpec> groups, std::int64_t num_pages, bool caching) {
  AllocatorOptions o = paged(8, num_pages, caching, 0.0);
  Bytes widest = 0;
  for (const auto& g : groups) widest = std::max(widest, g.bytes_per_slot);
  o.groups = std::move(groups);
  o.capacity_bytes = static_cast<Bytes>(8 * num_pages) * widest;
  o.cpu_swap_bytes = static_cast<Bytes>(8 * 30) * widest;
  return o;
}

AllocatorOptions contiguous(AllocatorKind kind, Placement placement) {
  AllocatorOptions o;
  o.kind = kind;
  o.placement = placement;
  o.bytes_per_slot = 5;
  o.capacity_bytes = 600 * 5 + 4;
  o.max_seq_len = 100;
  o.cpu_swap_bytes = 300 * 5;
  return o;
}

std::vector<Config> configs() {
  std::vector<Config> c;
  c.push_back({"paged bs16", paged(16, 48, false, 0.0)});
  c.push_back({"paged bs16 watermark", paged(16, 48, false, 0.05)});
  c.push_back({"paged bs16 prefix caching", paged(16, 48, true, 0.01)});
  c.push_back({"paged bs4 prefix caching", paged(4, 160, true, 0.0)});
  c.push_back({"paged bs1", paged(1, 500, true, 0.0)});
  AllocatorOptions offload = paged(4, 160, true, 0.0);
  offload.cpu_offload_bytes = 4 * 40 * 3;  // a CPU tier of 40 blocks
  c.push_back({"paged bs4 prefix caching + CPU offload", offload});
  offload = paged(16, 48, true, 0.01);
  offload.cpu_offload_bytes = 16 * 5 * 3 + 7;  // 5 blocks: the tier drops blocks often
  c.push_back({"paged bs16 prefix caching + small CPU offload", offload});
  AllocatorOptions state = paged(16, 48, false, 0.0);
  state.state_blocks_per_seq = 2;
  state.state_bytes_per_seq = 70;  // of two 48-byte pages
  c.push_back({"paged bs16 state pages", state});
  state = hybrid({{2, 0}, {2, 24}}, 90, false);
  state.state_blocks_per_seq = 1;
  state.state_bytes_per_seq = 16;
  c.push_back({"paged hybrid + state page", state});
  c.push_back({"paged window", hybrid({{2, 20}}, 60, true)});
  c.push_back({"paged hybrid equal", hybrid({{2, 0}, {2, 24}}, 90, true)});
  c.push_back({"paged hybrid padded", hybrid({{3, 0}, {5, 40}, {5, 0}}, 120, true)});
  c.push_back({"paged hybrid stride 2", hybrid({{2, 0}, {4, 30}}, 100, true)});
  for (AllocatorKind kind : {AllocatorKind::kContiguousMax, AllocatorKind::kContiguousPow2,
                             AllocatorKind::kContiguousOracle}) {
    for (Placement p : {Placement::kBuddy, Placement::kFirstFit, Placement::kBestFit}) {
      c.push_back({std::string(allocator_kind_name(kind)) + " " + std::string(placement_name(p)),
                   contiguous(kind, p)});
    }
  }
  return c;
}

struct Live {
  std::int64_t prompt = 0;
  std::int64_t final_tokens = 0;
  std::int64_t tokens = 0;
  bool swapped = false;
};

void check_invariants(const Allocator& a) {
  if (const auto* p = dynamic_cast<const PagedAllocator*>(&a)) {
    p->check_invariants();
    if (p->cpu_tier() != nullptr) p->cpu_tier()->check_invariants();
  } else {
    dynamic_cast<const ContiguousAllocator&>(a).check_invariants();
  }
}

void check_sums(const Allocator& a, const SeqInfo* head, bool is_paged) {
  const SlotAccounting s = a.accounting(head);
  PROPERTY(s.token_states >= 0);
  PROPERTY(s.reservation >= 0);
  PROPERTY(s.internal_fragmentation >= 0);
  PROPERTY(s.external_fragmentation >= 0);
  PROPERTY(s.free >= 0);
  PROPERTY(s.token_states + s.reservation + s.internal_fragmentation + s.external_fragmentation +
               s.free ==
           s.capacity);
  const ByteAccounting b = a.byte_accounting(head);
  PROPERTY(b.token_states + b.reservation + b.internal_fragmentation + b.external_fragmentation +
               b.free ==
           b.capacity);
  const Fractions f = fractions_of(b);
  PROPERTY(std::abs(f.token_states + f.reservation + f.internal_fragmentation +
                    f.external_fragmentation + f.free - 1.0) <= 1e-15);
  if (is_paged) {
    PROPERTY(s.external_fragmentation == 0);
    PROPERTY(b.external_fragmentation == 0);
  }
}

// With `forks` false, the fork branch grows instead (so every sharing comes from the prefix
// cache: the paged allocator then keeps its reservation incrementally, checked at every step).
void run_config(const Config& config, std::uint64_t stream, std::uint64_t seed, int num_ops,
                bool forks = true) {
  Rng rng = Rng::derive(seed, stream);
  auto alloc = make_allocator(config.options);
  const bool is_paged = config.options.kind == AllocatorKind::kPaged;
  // One full-attention group and no state pages: token states are stored tokens only.
  const bool single_full_group =
      is_paged && config.options.state_blocks_per_seq == 0 &&
      (config.options.groups.empty() ||
       (config.options.groups.size() == 1 && config.options.groups[0].sliding_window == 0));
  const std::int64_t base_block = config.options.block_size;
  std::map<SeqId, Live> live;
  SeqId next_id = 1;
  TimeWeightedAccounting acc;
  TimeNs now = 0;
  std::vector<std::uint64_t> ids;

  const auto pick = [&](bool resident) -> std::optional<SeqId> {
    std::vector<SeqId> candidates;
    for (const auto& [id, l] : live) {
      if (l.swapped != resident) candidates.push_back(id);
    }
    if (candidates.empty()) return std::nullopt;
    return candidates[static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<std::int64_t>(candidates.size()) - 1))];
  };

  for (int op = 0; op < num_ops; ++op) {
    const ByteAccounting before = alloc->byte_accounting(nullptr);
    const std::int64_t roll = rng.uniform_int(0, 99);
    bool refused = false;
    if (roll < 30) {  // admit
      Live l;
      l.prompt = rng.uniform_int(1, 70);
      l.final_tokens = l.prompt + rng.uniform_int(1, 40);
      const std::int64_t n = rng.uniform_int(0, 3) == 0 ? rng.uniform_int(0, l.prompt) : l.prompt;
      // Prompts from a few families share leading blocks; some diverge part-way.
      ids.clear();
      const std::uint64_t family = static_cast<std::uint64_t>(rng.uniform_int(0, 3));
      const std::int64_t full_blocks = l.prompt / base_block;
      const std::int64_t diverge = rng.uniform_int(0, full_blocks);
      for (std::int64_t j = 0; j < full_blocks; ++j) {
        ids.push_back(j < diverge ? family * 1000 + static_cast<std::uint64_t>(j) : rng.next_u64());
      }
      const SeqInfo info{next_id, l.prompt, l.final_tokens, ids};
      const std::int64_t peek = alloc->cached_prefix_tokens(info, n);
      const auto r = alloc->admit(info, n);
      if (r) {
        PROPERTY(r->cached_tokens == peek);
        PROPERTY(r->cached_tokens <= n);
        PROPERTY(r->cached_tokens < std::max<std::int64_t>(1, l.prompt));
        PROPERTY(r->cached_tokens % base_block == 0);
        PROPERTY(r->loaded_tokens <= r->cached_tokens && r->loaded_tokens % base_block == 0);
        l.tokens = n;
        live.emplace(next_id, l);
      } else {
        refused = true;
      }
      ++next_id;
    } else if (roll < 70 || (!forks && roll < 90)) {  // grow
      if (const auto id = pick(true)) {
        Live& l = live[*id];
        const std::int64_t room = l.final_tokens - l.tokens;
        if (room > 0) {
          const std::int64_t n = rng.uniform_int(0, 2) == 0 ? rng.uniform_int(1, room) : 1;
          if (alloc->grow(*id, n)) {
            l.tokens += n;
          } else {
            refused = true;
          }
        }
      }
    } else if (roll < 85) {  // free
      if (!live.empty()) {
        auto it = live.begin();
        std::advance(it, rng.uniform_int(0, static_cast<std::int64_t>(live.size()) - 1));
        alloc->free(it->first);
        live.erase(it);
      }
    } else if (roll < 90) {  // fork
      if (const auto id = pick(true)) {
        Live child = live[*id];
        child.final_tokens = std::max(child.prompt, child.tokens) + rng.uniform_int(0, 30);
        if (alloc->fork(*id, SeqInfo{next_id, child.prompt, child.final_tokens, {}})) {
          live.emplace(next_id, child);
        } else {
          refused = true;
        }
        ++next_id;
      }
    } else if (roll < 95) {  // swap out
      if (const auto id = pick(true)) {
        if (alloc->swap_out(*id)) {
          live[*id].swapped = true;
        } else {
          refused = true;
        }
      }
    } else {  // swap in
      if (const auto id = pick(false)) {
        if (alloc->swap_in(*id)) {
          live[*id].swapped = false;
        } else {
          refused = true;
        }
      }
    }
    if (refused) PROPERTY(alloc->byte_accounting(nullptr) == before);

    check_invariants(*alloc);
    const std::int64_t head_prompt = rng.uniform_int(1, 70);
    const SeqInfo head{0, head_prompt, head_prompt + rng.uniform_int(1, 40), {}};
    check_sums(*alloc, nullptr, is_paged);
    check_sums(*alloc, &head, is_paged);
    std::int64_t stored = 0;
    for (const auto& [id, l] : live) stored += l.swapped ? 0 : l.tokens;
    const SlotAccounting s = alloc->accounting(nullptr);
    if (!is_paged) {
      PROPERTY(s.token_states == stored);
    } else if (single_full_group) {
      PROPERTY(s.token_states <= stored);
    }
    now += rng.uniform_int(0, 1000);
    acc.advance(now, alloc->byte_accounting(&head));
  }

  const auto whole = static_cast<TimeWeightedAccounting::Int128>(acc.capacity()) * acc.elapsed();
  PROPERTY(acc.token_states_integral() + acc.reservation_integral() +
               acc.internal_fragmentation_integral() + acc.external_fragmentation_integral() +
               acc.free_integral() ==
           whole);

  for (const auto& [id, l] : live) alloc->free(id);
  check_invariants(*alloc);
  const SlotAccounting end = alloc->accounting(nullptr);
  PROPERTY(end.token_states == 0);
  PROPERTY(end.free == end.capacity);
  PROPERTY(alloc->stats().cpu_bytes_in_use == 0);
}

TEST_CASE("random operation sequences keep every allocator's invariants", "[memory][property]") {
  constexpr int kSeeds = 100;
  constexpr int kOps = 200;
  const std::vector<Config> all = configs();
  for (std::size_t c = 0; c < all.size(); ++c) {
    for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
      INFO(all[c].name << " seed " << seed);
      run_config(all[c], c, seed, kOps);
    }
  }
}

TEST_CASE("without forks, every allocator keeps its invariants (incremental reservation)",
          "[memory][property]") {
  const std::vector<Config> all = configs();
  for (std::size_t c = 0; c < all.size(); ++c) {
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      INFO(all[c].name << " seed " << seed);
      run_config(all[c], c + 1000, seed, 300, /*forks=*/false);
    }
  }
}

TEST_CASE("paged without sharing: token states are exactly the tokens stored",
          "[memory][property]") {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(seed);
    AllocatorOptions o = paged(16, 40, false, 0.0);
    PagedAllocator a(o);
    std::map<SeqId, std::int64_t> tokens;
    for (SeqId id = 1; id < 200; ++id) {
      const std::int64_t roll = rng.uniform_int(0, 2);
      if (roll == 0 || tokens.empty()) {
        const std::int64_t n = rng.uniform_int(0, 90);
        if (a.admit(SeqInfo{id, n, n + 50, {}}, n)) tokens[id] = n;
      } else if (roll == 1) {
        auto it = tokens.begin();
        std::advance(it, rng.uniform_int(0, static_cast<std::int64_t>(tokens.size()) - 1));
        const std::int64_t n = rng.uniform_int(1, 20);
        if (a.grow(it->first, n)) it->second += n;
      } else {
        auto it = tokens.begin();
        a.free(it->first);
        tokens.erase(it);
      }
      std::int64_t stored = 0;
      std::int64_t blocks = 0;
      for (const auto& [sid, n] : tokens) {
        stored += n;
        blocks += (n + 15) / 16;
      }
      const SlotAccounting s = a.accounting(nullptr);
      REQUIRE(s.token_states == stored);
      REQUIRE(s.blocks_in_use == blocks);
      REQUIRE(s.internal_fragmentation + s.reservation == blocks * 16 - stored);
    }
  }
}

}  // namespace
}  // namespace kvsim::memory
