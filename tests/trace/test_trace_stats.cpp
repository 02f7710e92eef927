// trace/trace_stats.cpp: the one-pass summary of a request stream: rate, inter-arrival CV, exact
// length percentiles and prefix reuse.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trace/trace_stats.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;

namespace {

RequestSpec spec(TimeNs arrival, std::int64_t prompt, std::int64_t output,
                 std::vector<std::uint64_t> hashes = {}) {
  RequestSpec r;
  r.arrival_ns = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.prefix_hashes = std::move(hashes);
  r.prefix_block_tokens = r.prefix_hashes.empty() ? 0 : 16;
  return r;
}

}  // namespace

TEST_CASE("trace stats: rate, CV of the gaps and numpy-linear percentiles", "[trace][stats]") {
  TraceStatsAccumulator acc;
  acc.add(spec(0, 100, 10));
  acc.add(spec(1'000'000'000, 300, 20));
  acc.add(spec(3'000'000'000, 200, 30));
  ReaderStats reader;
  reader.rows_read = 4;
  reader.bad_rows_skipped = 1;
  const TraceStats s = acc.finish(reader);
  CHECK(s.requests == 3);
  CHECK(s.rejected_rows() == 1);
  CHECK(s.first_arrival_ns == 0);
  CHECK(s.last_arrival_ns == 3'000'000'000);
  CHECK(s.duration_s == 3.0);
  REQUIRE(s.rate_rps);
  CHECK(*s.rate_rps == Approx(2.0 / 3.0));
  REQUIRE(s.interarrival_cv);  // gaps 1 s and 2 s: mean 1.5, population sd 0.5
  CHECK(*s.interarrival_cv == Approx(1.0 / 3.0));
  CHECK(s.prompt_tokens.count == 3);
  CHECK(s.prompt_tokens.mean == 200);
  CHECK(s.prompt_tokens.p50 == 200);
  CHECK(s.prompt_tokens.p90 == Approx(280));
  CHECK(s.prompt_tokens.p99 == Approx(298));
  CHECK(s.prompt_tokens.min == 100);
  CHECK(s.prompt_tokens.max == 300);
  CHECK(s.output_tokens.p50 == 20);
  CHECK(s.total_tokens.min == 110);
  CHECK(s.total_tokens.max == 320);
  CHECK_FALSE(s.has_prefix_hashes);
  CHECK_FALSE(s.prefix_block_reuse_fraction);
}

TEST_CASE("trace stats: one request, or all at one instant, has no rate or CV", "[trace][stats]") {
  TraceStatsAccumulator one;
  one.add(spec(5, 1, 1));
  const TraceStats a = one.finish({});
  CHECK(a.requests == 1);
  CHECK(a.duration_s == 0);
  CHECK_FALSE(a.rate_rps);
  CHECK_FALSE(a.interarrival_cv);
  TraceStatsAccumulator burst;
  burst.add(spec(7, 1, 1));
  burst.add(spec(7, 2, 1));
  CHECK_FALSE(burst.finish({}).rate_rps);
  const TraceStats empty = TraceStatsAccumulator().finish({});
  CHECK(empty.requests == 0);
  CHECK(empty.prompt_tokens.count == 0);
  CHECK(empty.prompt_tokens.mean == 0);
}

TEST_CASE("trace stats: prefix reuse counts each request's leading run of seen blocks",
          "[trace][stats][prefix]") {
  TraceStatsAccumulator acc;
  acc.add(spec(0, 100, 1, {1, 2}));
  acc.add(spec(1, 300, 1, {1, 2, 3}));  // 1, 2 seen: 2 blocks, 32 tokens
  acc.add(spec(2, 200, 1, {1, 4, 2}));  // 1 seen, then 4 is new: the run stops there
  acc.add(spec(3, 20, 1, {1, 2}));      // 16 + the 4 tokens of the partial second block
  acc.add(spec(4, 50, 1));              // no hashes: not in the token fraction
  const TraceStats s = acc.finish({});
  CHECK(s.has_prefix_hashes);
  CHECK(s.prefix_block_tokens == 16);
  CHECK(s.prefix_blocks == 10);
  CHECK(s.prefix_blocks_reused == 5);
  CHECK(s.prefix_tokens_reused == 32 + 16 + 20);
  CHECK(s.distinct_prefix_hashes == 4);
  REQUIRE(s.prefix_block_reuse_fraction);
  CHECK(*s.prefix_block_reuse_fraction == Approx(0.5));
  REQUIRE(s.prefix_token_reuse_fraction);
  CHECK(*s.prefix_token_reuse_fraction == Approx(68.0 / 620.0));
}

TEST_CASE("trace stats: hashes past a prompt's blocks are its output's, reused by the next turn",
          "[trace][stats][prefix]") {
  TraceStatsAccumulator acc;
  acc.add(spec(0, 20, 30, {7, 8, 9}));     // prompt: 2 blocks; 9 is the output's
  acc.add(spec(1, 60, 5, {7, 8, 9, 10}));  // the next turn: 3 seen blocks, 48 tokens
  const TraceStats s = acc.finish({});
  CHECK(s.prefix_blocks == 2 + 4);
  CHECK(s.prefix_blocks_reused == 3);
  CHECK(s.prefix_tokens_reused == 48);
  CHECK(s.distinct_prefix_hashes == 4);
}

TEST_CASE("trace stats: sessions, their requests and the longest", "[trace][stats]") {
  TraceStatsAccumulator acc;
  const auto in = [](const char* session, TimeNs at) {
    RequestSpec r = spec(at, 10, 5);
    r.session_id = session;
    return r;
  };
  acc.add(in("a", 0));
  acc.add(in("b", 1));
  acc.add(spec(2, 10, 5));  // none
  acc.add(in("a", 3));
  acc.add(in("a", 4));
  const TraceStats s = acc.finish({});
  CHECK(s.sessions == 2);
  CHECK(s.requests_with_session == 4);
  CHECK(s.max_session_requests == 3);
  TraceStatsAccumulator none;
  none.add(spec(0, 10, 5));
  CHECK(none.finish({}).sessions == 0);
}

TEST_CASE("trace stats: compute_trace_stats drains a reader and keeps its counters",
          "[trace][stats]") {
  const std::string path = test::trace_file(
      "s.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,1\nbad,1,1\n0.5,30,2\n2,20,3\n");
  const auto reader = open_trace_file(test::file_options(path, /*skip=*/true));
  const TraceStats s = compute_trace_stats(*reader);
  CHECK(s.requests == 3);
  CHECK(s.reader.rows_read == 4);
  CHECK(s.reader.bad_rows_skipped == 1);
  CHECK(s.rejected_rows() == 1);
  CHECK(s.duration_s == 2.0);
  CHECK(*s.rate_rps == Approx(1.0));
  CHECK(s.prompt_tokens.p50 == 20);
  CHECK(s.output_tokens.max == 3);
}
