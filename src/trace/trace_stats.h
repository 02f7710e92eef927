#pragma once
// Summary statistics of a request stream (`kvsim trace stats`), computed in one streaming pass.
// Memory: O(distinct lengths) for the exact percentiles, plus O(distinct prefix hashes) when the
// stream carries prefix hashes (the reuse fraction needs the set of ids already seen).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/int_quantiles.h"
#include "common/units.h"
#include "trace/request.h"

namespace kvsim::trace {

// A token-length distribution's summary. Percentiles are exact (numpy's "linear" method).
struct LengthSummary {
  std::int64_t count = 0;
  double mean = 0.0;
  double p50 = 0.0, p90 = 0.0, p99 = 0.0;
  std::int64_t min = 0, max = 0;
};

struct TraceStats {
  ReaderStats reader;           // rows read, bad rows skipped, failed requests, truncations
  std::int64_t requests = 0;    // requests in the stream
  TimeNs first_arrival_ns = 0;  // 0 for a stream from a reader (arrivals are relative)
  TimeNs last_arrival_ns = 0;
  double duration_s = 0.0;  // last − first arrival
  // (requests − 1) / duration; absent with fewer than 2 requests or a zero duration.
  std::optional<double> rate_rps;
  // Population standard deviation of consecutive gaps ÷ their mean; absent when undefined.
  std::optional<double> interarrival_cv;
  LengthSummary prompt_tokens, output_tokens, total_tokens;
  // Prefix hashes (present when any request carries them).
  bool has_prefix_hashes = false;
  std::int64_t prefix_block_tokens = 0;   // of the first request with hashes
  std::int64_t prefix_blocks = 0;         // all hash references
  std::int64_t prefix_blocks_reused = 0;  // in each request's leading run of already-seen ids
  std::int64_t prefix_tokens_reused = 0;  // tokens in those blocks (the last block may be partial)
  std::int64_t distinct_prefix_hashes = 0;
  // prefix_blocks_reused / prefix_blocks: the hit ratio of an infinite prefix cache.
  std::optional<double> prefix_block_reuse_fraction;
  // prefix_tokens_reused / prompt tokens of the requests with hashes.
  std::optional<double> prefix_token_reuse_fraction;
  // Session ids (a conversation's requests; --serial-sessions sends each after the one before).
  std::int64_t requests_with_session = 0;
  std::int64_t sessions = 0;              // distinct session ids
  std::int64_t max_session_requests = 0;  // the most requests of one session

  // rows that did not become requests: bad rows skipped + failed requests.
  std::int64_t rejected_rows() const { return reader.bad_rows_skipped + reader.failed_requests; }
};

// Feeds requests one at a time (e.g. while converting) and summarises them.
// Invariants: requests arrive with non-decreasing arrival_ns (asserted).
class TraceStatsAccumulator {
 public:
  void add(const RequestSpec& request);
  // The summary so far; `reader` is copied into the result.
  TraceStats finish(const ReaderStats& reader) const;

 private:
  std::int64_t num_requests_ = 0;
  TimeNs first_ns_ = 0, last_ns_ = 0;
  __extension__ __int128 gap_sum_ = 0;     // exact Σ gap (ns)
  __extension__ __int128 gap_sq_sum_ = 0;  // exact Σ gap² (ns²)
  IntQuantiles prompt_, output_, total_;
  bool has_hashes_ = false;
  std::int64_t block_tokens_ = 0;
  std::int64_t blocks_ = 0, blocks_reused_ = 0, tokens_reused_ = 0, hashed_prompt_tokens_ = 0;
  std::unordered_set<std::uint64_t> seen_;
  std::unordered_map<std::string, std::int64_t> session_requests_;
};

// Drains `reader` and summarises it. Throws what the reader throws.
TraceStats compute_trace_stats(TraceReader& reader);

}  // namespace kvsim::trace
