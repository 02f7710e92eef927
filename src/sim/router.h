#pragma once
// Picks the replica for each arriving request.

#include <cstdint>
#include <span>
#include <vector>

#include "sim/options.h"
#include "trace/request.h"

namespace kvsim::sim {

// What the router sees of a replica when a request arrives.
struct ReplicaLoad {
  std::int64_t outstanding = 0;  // waiting + running + swapped requests
  double kv_usage = 0.0;         // allocated fraction of its KV cache
};

// Invariants: route() is a pure function of the options, the loads and the requests routed so
// far (no randomness); ties go to the lowest replica index.
class Router {
 public:
  // `capacity_tokens`: one replica's KV capacity in tokens, to size the prefix index.
  Router(RouterKind kind, std::int64_t num_replicas, std::int64_t capacity_tokens);

  // The replica for `spec`; loads.size() == num_replicas.
  std::uint32_t route(const trace::RequestSpec& spec, std::span<const ReplicaLoad> loads);

  // Prefix-aware routing: requests sent to the replica holding the longest prefix match.
  std::int64_t num_prefix_routed() const { return num_prefix_routed_; }

 private:
  std::uint32_t least_outstanding(std::span<const ReplicaLoad> loads) const;
  std::uint32_t route_by_prefix(const trace::RequestSpec& spec, std::span<const ReplicaLoad> loads);

  RouterKind kind_;
  std::int64_t num_replicas_;
  std::int64_t capacity_tokens_;
  std::uint32_t next_ = 0;  // round-robin
  // Prefix-aware: per replica, a direct-mapped table of the chained hashes of the prefix blocks
  // recently routed to it (an approximation of its prefix cache: a newer block evicts a colliding
  // older one). Sized lazily to about twice the blocks one replica's cache can hold.
  std::vector<std::vector<std::uint64_t>> prefix_index_;
  std::uint64_t index_mask_ = 0;
  std::vector<std::uint64_t> chain_;  // scratch: the request's chained block hashes
  std::int64_t num_prefix_routed_ = 0;
};

}  // namespace kvsim::sim
