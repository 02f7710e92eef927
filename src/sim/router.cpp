#include "sim/router.h"

#include <algorithm>
#include <bit>

#include "common/assert.h"
#include "common/rng.h"

namespace kvsim::sim {
namespace {

// SGLang's cache-aware router falls back to the shortest queue when the load is this uneven.
constexpr std::int64_t kImbalanceAbsolute = 32;
constexpr double kImbalanceRelative = 1.5;

}  // namespace

Router::Router(RouterKind kind, std::int64_t num_replicas, std::int64_t capacity_tokens)
    : kind_(kind), num_replicas_(num_replicas), capacity_tokens_(capacity_tokens) {
  KVSIM_ASSERT(num_replicas >= 1, "at least one replica");
}

std::uint32_t Router::least_outstanding(std::span<const ReplicaLoad> loads) const {
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < loads.size(); ++i) {
    if (loads[i].outstanding < loads[best].outstanding) best = i;
  }
  return best;
}

std::uint32_t Router::route(const trace::RequestSpec& spec, std::span<const ReplicaLoad> loads) {
  KVSIM_ASSERT(static_cast<std::int64_t>(loads.size()) == num_replicas_, "one load per replica");
  if (num_replicas_ == 1) return 0;
  switch (kind_) {
    case RouterKind::kRoundRobin: {
      const std::uint32_t r = next_;
      next_ = static_cast<std::uint32_t>((next_ + 1) % num_replicas_);
      return r;
    }
    case RouterKind::kLeastOutstanding:
      return least_outstanding(loads);
    case RouterKind::kLeastKvUsage: {
      std::uint32_t best = 0;
      for (std::uint32_t i = 1; i < loads.size(); ++i) {
        const bool lower = loads[i].kv_usage < loads[best].kv_usage;
        const bool tie_fewer = loads[i].kv_usage == loads[best].kv_usage &&
                               loads[i].outstanding < loads[best].outstanding;
        if (lower || tie_fewer) best = i;
      }
      return best;
    }
    case RouterKind::kPrefixAware:
      return route_by_prefix(spec, loads);
  }
  return 0;
}

std::uint32_t Router::route_by_prefix(const trace::RequestSpec& spec,
                                      std::span<const ReplicaLoad> loads) {
  const std::uint32_t shortest = least_outstanding(loads);
  if (spec.prefix_hashes.empty() || spec.prefix_block_tokens <= 0) return shortest;
  if (prefix_index_.empty()) {
    const auto blocks = static_cast<std::uint64_t>(
        std::max<std::int64_t>(1, 2 * capacity_tokens_ / spec.prefix_block_tokens));
    const std::uint64_t size = std::clamp<std::uint64_t>(std::bit_ceil(blocks), 1024, 1u << 20);
    index_mask_ = size - 1;
    prefix_index_.assign(static_cast<std::size_t>(num_replicas_),
                         std::vector<std::uint64_t>(size, 0));
  }
  chain_.clear();
  std::uint64_t h = 0;
  for (std::uint64_t id : spec.prefix_hashes) {
    h = hash_combine(h, id);
    chain_.push_back(h == 0 ? 1 : h);  // 0 marks an empty index entry
  }
  std::uint32_t best = shortest;
  std::size_t best_match = 0;
  for (std::uint32_t r = 0; r < prefix_index_.size(); ++r) {
    const std::vector<std::uint64_t>& table = prefix_index_[r];
    std::size_t match = 0;
    while (match < chain_.size() && table[chain_[match] & index_mask_] == chain_[match]) ++match;
    const bool longer = match > best_match;
    const bool tie_fewer =
        match == best_match && match > 0 && loads[r].outstanding < loads[best].outstanding;
    if (longer || tie_fewer) {
      best = r;
      best_match = match;
    }
  }
  const std::int64_t gap = loads[best].outstanding - loads[shortest].outstanding;
  const bool imbalanced = gap > kImbalanceAbsolute &&
                          static_cast<double>(loads[best].outstanding) >
                              kImbalanceRelative * static_cast<double>(loads[shortest].outstanding);
  if (best_match == 0 || imbalanced) {
    best = shortest;
  } else {
    ++num_prefix_routed_;
  }
  std::vector<std::uint64_t>& table = prefix_index_[best];
  for (std::uint64_t c : chain_) table[c & index_mask_] = c;
  return best;
}

}  // namespace kvsim::sim
