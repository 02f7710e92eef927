#include "trace/trace_stats.h"

#include <algorithm>
#include <cmath>

#include "common/assert.h"
#include "common/int128.h"

namespace kvsim::trace {
namespace {

LengthSummary summarize(const IntQuantiles& q) {
  LengthSummary s;
  s.count = q.count();
  if (q.empty()) return s;
  s.mean = q.mean();
  const auto p = q.quantiles({0.5, 0.9, 0.99});
  s.p50 = p[0];
  s.p90 = p[1];
  s.p99 = p[2];
  s.min = q.min();
  s.max = q.max();
  return s;
}

}  // namespace

void TraceStatsAccumulator::add(const RequestSpec& r) {
  if (num_requests_ == 0) {
    first_ns_ = last_ns_ = r.arrival_ns;
  } else {
    KVSIM_ASSERT(r.arrival_ns >= last_ns_, "TraceStatsAccumulator: arrivals went backwards");
    const Int128 gap = r.arrival_ns - last_ns_;
    gap_sum_ += gap;
    gap_sq_sum_ += gap * gap;
    last_ns_ = r.arrival_ns;
  }
  ++num_requests_;
  prompt_.add(r.prompt_tokens);
  output_.add(r.output_tokens);
  total_.add(r.prompt_tokens + r.output_tokens);
  if (!r.session_id.empty()) ++session_requests_[r.session_id];
  if (r.prefix_hashes.empty()) return;
  if (!has_hashes_) {
    has_hashes_ = true;
    block_tokens_ = r.prefix_block_tokens;
  }
  // The prompt's blocks; hashes past them are its output's (RequestSpec::prefix_hashes), content
  // a later prompt (the conversation's next turn) may reuse.
  const std::int64_t block = r.prefix_block_tokens;
  const auto num_blocks =
      std::min(static_cast<std::int64_t>(r.prefix_hashes.size()), prompt_hash_blocks(r));
  blocks_ += num_blocks;
  hashed_prompt_tokens_ += r.prompt_tokens;
  for (std::int64_t i = 0; i < num_blocks; ++i) {
    if (seen_.count(r.prefix_hashes[static_cast<std::size_t>(i)]) == 0) break;
    ++blocks_reused_;
    tokens_reused_ += std::min(block, r.prompt_tokens - i * block);
  }
  seen_.insert(r.prefix_hashes.begin(), r.prefix_hashes.end());
}

TraceStats TraceStatsAccumulator::finish(const ReaderStats& reader) const {
  TraceStats s;
  s.reader = reader;
  s.requests = num_requests_;
  s.first_arrival_ns = first_ns_;
  s.last_arrival_ns = last_ns_;
  // Division (not × 1e-9) keeps exact decimals exact: 3536999 ms → 3536.999.
  s.duration_s = static_cast<double>(last_ns_ - first_ns_) / 1e9;
  if (num_requests_ >= 2 && last_ns_ > first_ns_) {
    s.rate_rps = static_cast<double>(num_requests_ - 1) / s.duration_s;
    // Population variance of the m = n − 1 gaps: (m·Σg² − (Σg)²) / m², exact in 128 bits when
    // it fits (always for traces up to ~10^7 requests), else in long double.
    const auto m = static_cast<Int128>(num_requests_ - 1);
    const long double mean = static_cast<long double>(gap_sum_) / static_cast<long double>(m);
    long double var = 0;
    Int128 m_sq_sum = 0, sum_sq = 0;
    if (!__builtin_mul_overflow(m, gap_sq_sum_, &m_sq_sum) &&
        !__builtin_mul_overflow(gap_sum_, gap_sum_, &sum_sq)) {
      var = static_cast<long double>(m_sq_sum - sum_sq) / (static_cast<long double>(m) * m);
    } else {
      var = static_cast<long double>(gap_sq_sum_) / static_cast<long double>(m) - mean * mean;
    }
    if (var < 0) var = 0;
    s.interarrival_cv = static_cast<double>(std::sqrt(var) / mean);
  }
  s.prompt_tokens = summarize(prompt_);
  s.output_tokens = summarize(output_);
  s.total_tokens = summarize(total_);
  for (const auto& [id, n] : session_requests_) {
    s.requests_with_session += n;
    s.max_session_requests = std::max(s.max_session_requests, n);
  }
  s.sessions = static_cast<std::int64_t>(session_requests_.size());
  s.has_prefix_hashes = has_hashes_;
  if (has_hashes_) {
    s.prefix_block_tokens = block_tokens_;
    s.prefix_blocks = blocks_;
    s.prefix_blocks_reused = blocks_reused_;
    s.prefix_tokens_reused = tokens_reused_;
    s.distinct_prefix_hashes = static_cast<std::int64_t>(seen_.size());
    if (blocks_ > 0) {
      s.prefix_block_reuse_fraction =
          static_cast<double>(blocks_reused_) / static_cast<double>(blocks_);
    }
    if (hashed_prompt_tokens_ > 0) {
      s.prefix_token_reuse_fraction =
          static_cast<double>(tokens_reused_) / static_cast<double>(hashed_prompt_tokens_);
    }
  }
  return s;
}

TraceStats compute_trace_stats(TraceReader& reader) {
  TraceStatsAccumulator acc;
  RequestSpec r;
  while (reader.next(r)) acc.add(r);
  return acc.finish(reader.stats());
}

}  // namespace kvsim::trace
