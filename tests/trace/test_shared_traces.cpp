// `trace stats` on the real traces in ../shared/data/traces reproduces that folder's README, and
// converting each to native CSV and back changes no statistic.
#include <cmath>
#include <cstdio>

#include <catch2/catch.hpp>

#include "trace/native_writer.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;

namespace {

// x rounded to `decimals` places equals the README's printed value.
bool printed_as(double x, double printed, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::fabs(std::round(x * scale) / scale - printed) < 0.5 / scale * 1e-6 + 1e-9;
}

TraceStats stats_of(const std::string& path) {
  auto reader = open_trace_file(kvsim::test::file_options(path));
  return compute_trace_stats(*reader);
}

struct Lengths {
  double mean, p50, p90, p99;
  std::int64_t max, min;
};

void check_lengths(const LengthSummary& s, const Lengths& want) {
  CHECK(printed_as(s.mean, want.mean, 1));
  CHECK(printed_as(s.p50, want.p50, 1));
  CHECK(printed_as(s.p90, want.p90, 1));
  CHECK(printed_as(s.p99, want.p99, 1));
  CHECK(s.max == want.max);
  CHECK(s.min == want.min);
}

void check_azure_code(const TraceStats& s, int span_decimals, double span) {
  CHECK(s.requests == 8819);
  CHECK(s.rejected_rows() == 0);
  CHECK(printed_as(s.duration_s, span, span_decimals));
  REQUIRE(s.rate_rps);
  CHECK(printed_as(*s.rate_rps, 2.566, 3));
  REQUIRE(s.interarrival_cv);
  CHECK(printed_as(*s.interarrival_cv, 13.15, 2));
  // The README prints the mean as 2,047.9; the exact mean is 18,059,974 / 8,819 = 2,047.848…,
  // which rounds to 2,047.8 (the README rounded twice). We check the exact sum instead.
  CHECK(s.prompt_tokens.mean == 18059974.0 / 8819.0);
  check_lengths(s.prompt_tokens, {2047.8, 1469, 5187.6, 7436, 7437, 3});
  check_lengths(s.output_tokens, {27.9, 13, 55, 251.5, 1899, 6});
  CHECK_FALSE(s.has_prefix_hashes);
}

void check_azure_conv(const TraceStats& s, int span_decimals, double span) {
  CHECK(s.requests == 19366);
  CHECK(s.rejected_rows() == 0);
  CHECK(printed_as(s.duration_s, span, span_decimals));
  REQUIRE(s.rate_rps);
  CHECK(printed_as(*s.rate_rps, 5.530, 3));
  REQUIRE(s.interarrival_cv);
  CHECK(printed_as(*s.interarrival_cv, 1.09, 2));
  check_lengths(s.prompt_tokens, {1154.7, 1020, 2734.5, 4142, 14050, 2});
  check_lengths(s.output_tokens, {211.1, 129, 424, 601, 1000, 7});
}

// Every statistic of `b` equals `a`'s exactly (the reader counters aside).
void check_same_stats(const TraceStats& a, const TraceStats& b) {
  CHECK(a.requests == b.requests);
  CHECK(a.duration_s == b.duration_s);
  CHECK(a.rate_rps == b.rate_rps);
  CHECK(a.interarrival_cv == b.interarrival_cv);
  for (const auto& [x, y] :
       {std::pair{a.prompt_tokens, b.prompt_tokens}, std::pair{a.output_tokens, b.output_tokens},
        std::pair{a.total_tokens, b.total_tokens}}) {
    CHECK(x.count == y.count);
    CHECK(x.mean == y.mean);
    CHECK(x.p50 == y.p50);
    CHECK(x.p90 == y.p90);
    CHECK(x.p99 == y.p99);
    CHECK(x.max == y.max);
    CHECK(x.min == y.min);
  }
  CHECK(a.has_prefix_hashes == b.has_prefix_hashes);
  CHECK(a.prefix_blocks == b.prefix_blocks);
  CHECK(a.prefix_blocks_reused == b.prefix_blocks_reused);
  CHECK(a.prefix_tokens_reused == b.prefix_tokens_reused);
  CHECK(a.distinct_prefix_hashes == b.distinct_prefix_hashes);
  CHECK(a.prefix_block_reuse_fraction == b.prefix_block_reuse_fraction);
}

// Converts `path` to native CSV (as `kvsim trace convert` does) and returns the new path.
std::string convert_to_native(const std::string& path) {
  const std::string out = kvsim::test::temp_dir() + "/converted.csv";
  auto reader = open_trace_file(kvsim::test::file_options(path));
  {
    AtomicOutputFile file(out);
    NativeCsvWriter writer(file.file(), reader->columns(), out);
    for (RequestSpec r; reader->next(r);) writer.write(r);
    writer.flush();
    file.commit();
  }
  return out;
}

}  // namespace

TEST_CASE("Azure 2023 code trace: the README's statistics", "[trace][shared]") {
  KVSIM_REQUIRE_SHARED(path, "traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv");
  check_azure_code(stats_of(path), 1, 3435.9);
}

TEST_CASE("Azure 2023 conversation trace: the README's statistics", "[trace][shared]") {
  KVSIM_REQUIRE_SHARED(path, "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
  check_azure_conv(stats_of(path), 1, 3501.7);
}

TEST_CASE("Vidur processed traces: the same statistics as the Azure traces", "[trace][shared]") {
  KVSIM_REQUIRE_SHARED(code, "traces/vidur_processed/splitwise_code.csv");
  KVSIM_REQUIRE_SHARED(conv, "traces/vidur_processed/splitwise_conv.csv");
  check_azure_code(stats_of(code), 3, 3435.948);
  check_azure_conv(stats_of(conv), 3, 3501.722);
}

TEST_CASE("Mooncake conversation trace: the README's statistics and prefix reuse",
          "[trace][shared]") {
  KVSIM_REQUIRE_SHARED(path, "traces/mooncake_fast25/conversation_trace.jsonl");
  const TraceStats s = stats_of(path);
  CHECK(s.requests == 12031);
  CHECK(s.rejected_rows() == 0);
  CHECK(s.duration_s == 3536.999);
  REQUIRE(s.rate_rps);
  CHECK(printed_as(*s.rate_rps, 3.401, 3));
  check_lengths(s.prompt_tokens, {12035.1, 6909, 27367, 85400.4, 126195, 891});
  check_lengths(s.output_tokens, {342.6, 350, 597, 1118.5, 2000, 1});
  REQUIRE(s.has_prefix_hashes);
  CHECK(s.prefix_block_tokens == 512);
  CHECK(s.prefix_blocks == 288500);
  CHECK(s.distinct_prefix_hashes == 182790);
  CHECK(printed_as(static_cast<double>(s.prefix_blocks) / 12031.0, 24.0, 1));
  REQUIRE(s.prefix_block_reuse_fraction);
  CHECK(printed_as(*s.prefix_block_reuse_fraction, 0.366, 3));
  REQUIRE(s.prefix_token_reuse_fraction);
  CHECK(printed_as(*s.prefix_token_reuse_fraction, 0.374, 3));
}

TEST_CASE("round trip: convert to native CSV, then stats equal the original's, every format",
          "[trace][shared][roundtrip]") {
  std::vector<std::string> paths;
  for (const char* rel : {"traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv",
                          "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
                          "traces/mooncake_fast25/conversation_trace.jsonl",
                          "traces/vidur_processed/splitwise_code.csv"}) {
    if (const auto p = kvsim::test::shared_data_file(rel)) {
      paths.push_back(*p);
    } else {
      WARN("skipped: shared data file " << rel << " is absent (see ../shared/data)");
    }
  }
  // BurstGPT is not stored in the shared folder; a small file in its format, with a failure.
  paths.push_back(kvsim::test::trace_file(
      "burst.csv",
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n"
      "118,GPT-4,417,276,693,API log\n118.25,GPT-4,12,3,15,API log\n"));
  // Native with sessions and hashes converts to itself.
  paths.push_back(
      kvsim::test::trace_file("native.csv",
                              "arrival_s,prompt_tokens,output_tokens,session_id,prefix_hashes\n"
                              "0,1024,5,a,0;1\n0.25,1100,5,\"b,c\",0;1;7\n0.25,10,5,,\n"));
  for (const auto& path : paths) {
    CAPTURE(path);
    const TraceStats original = stats_of(path);
    const std::string native = convert_to_native(path);
    const TraceStats converted = stats_of(native);
    check_same_stats(original, converted);
    CHECK(converted.reader.rows_read == original.requests);  // failures and bad rows are gone
  }
}
