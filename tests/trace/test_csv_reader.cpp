#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::file_options;
using kvsim::test::read_all;
using kvsim::test::trace_file;

TEST_CASE("native CSV: arrivals relative to the first request, exact to the nanosecond",
          "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "arrival_s,prompt_tokens,output_tokens\n"
                               "10.5,100,20\n"
                               "10.500000001,7,1\n"
                               "12,3,4\n");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_ns == 0);
  CHECK(rs[1].arrival_ns == 1);
  CHECK(rs[2].arrival_ns == 1'500'000'000);
  CHECK(rs[0].prompt_tokens == 100);
  CHECK(rs[0].output_tokens == 20);
  CHECK(rs[2].id == 2);
  CHECK(rs[0].prefix_hashes.empty());
  CHECK(rs[0].prefix_block_tokens == 0);
  CHECK(reader->describe() == "native " + path);
  CHECK_FALSE(reader->columns().prefix_hashes);
  const auto st = reader->stats();
  CHECK(st.rows_read == 3);
  CHECK(st.requests == 3);
}

TEST_CASE("native CSV: session ids (quoted when needed) and prefix hashes", "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "arrival_s,prompt_tokens,output_tokens,session_id,prefix_hashes\n"
                               "0,1024,5,\"user, \"\"a\"\"\",0;1\n"
                               "1,1100,5,b,0;1;7\n"
                               "2,10,5,,\n");
  TraceFileOptions f = file_options(path);
  auto reader = open_trace_file(f);
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].session_id == "user, \"a\"");
  CHECK(rs[0].prefix_hashes == std::vector<std::uint64_t>{0, 1});
  CHECK(rs[0].prefix_block_tokens == 512);
  CHECK(rs[1].prefix_hashes == std::vector<std::uint64_t>{0, 1, 7});
  CHECK(rs[2].session_id.empty());
  CHECK(rs[2].prefix_hashes.empty());
  CHECK(reader->columns().session_id);
  CHECK(reader->columns().prefix_hashes);
}

TEST_CASE("native CSV: the prefix block size is an option, checked against the prompt",
          "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "arrival_s,prompt_tokens,output_tokens,prefix_hashes\n"
                               "0,40,5,1;2;3\n");
  TraceFileOptions f = file_options(path);
  f.prefix_block_tokens = 16;  // 40 tokens = 3 blocks of 16
  auto rs = read_all(*open_trace_file(f));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].prefix_block_tokens == 16);
  f.prefix_block_tokens = 512;  // at most 1 block: the file was written at another block size
  auto reader = open_trace_file(f);
  CHECK_THROWS_WITH(read_all(*reader),
                    Catch::Contains(":2:") && Catch::Contains("prefix_hashes") &&
                        Catch::Contains("expected at most 1 block hashes for 40 prompt and 5 "
                                        "output tokens at 512 tokens per block"));
}

TEST_CASE("Azure CSV: CRLF, no final newline, 7-digit fractions converted exactly",
          "[trace][reader]") {
  const auto path = trace_file("azure.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                               "2023-11-16 18:17:03.9799600,4808,10\r\n"
                               "2023-11-16 18:17:04.0319600,3180,8\r\n"
                               "2023-11-16 18:17:04.0781490,110,27");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_ns == 0);
  CHECK(rs[1].arrival_ns == 52'000'000);
  CHECK(rs[2].arrival_ns == 98'189'000);
  CHECK(rs[2].prompt_tokens == 110);
  CHECK(rs[2].output_tokens == 27);
  CHECK(reader->describe().rfind("azure ", 0) == 0);
}

TEST_CASE("BurstGPT: zero response tokens are failed requests, counted and not replayed",
          "[trace][reader]") {
  const auto path =
      trace_file("b.csv",
                 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,18,490,Conversation log\n"
                 "45,ChatGPT,1087,0,1087,Conversation log\n"
                 "118,GPT-4,417,276,693,API log\n");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].arrival_ns == 0);
  CHECK(rs[1].arrival_ns == 113'000'000'000);
  CHECK(rs[1].id == 1);
  const auto st = reader->stats();
  CHECK(st.failed_requests == 1);
  CHECK(st.rows_read == 3);
  CHECK(st.requests == 2);
}

TEST_CASE("BurstGPT: a failed first row does not set the time origin", "[trace][reader]") {
  const auto path =
      trace_file("b.csv",
                 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,0,472,Conversation log\n"
                 "7,ChatGPT,10,1,11,Conversation log\n");
  const auto rs = read_all(*open_trace_file(file_options(path)));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].arrival_ns == 0);
}

TEST_CASE("Vidur CSV and the 'splitwise' alias", "[trace][reader]") {
  const auto path = trace_file("v.csv",
                               "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                               "0.0,4808,10\n0.052,3180,8\n");
  const auto rs = read_all(*open_trace_file(file_options(path)));
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].arrival_ns == 52'000'000);
  CHECK(parse_trace_format("Splitwise", {}) == TraceFormat::kVidur);
}

TEST_CASE("a UTF-8 BOM, blank lines and spaces around values are accepted", "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "\xEF\xBB\xBF"
                               "arrival_s, prompt_tokens ,output_tokens\n"
                               "0, 5 ,6\n\n  \n1,7,8\n\n");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].prompt_tokens == 5);
  CHECK(reader->stats().rows_read == 2);
}

TEST_CASE("arrivals may step back within 1 ms (clamped, counted), not beyond", "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "arrival_s,prompt_tokens,output_tokens\n"
                               "1.0,1,1\n0.9995,1,1\n1.2,1,1\n");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[1].arrival_ns == 0);  // moved up to the previous arrival
  CHECK(rs[2].arrival_ns == 200'000'000);
  CHECK(reader->stats().clamped_arrivals == 1);
}

TEST_CASE("skipping bad rows counts them and keeps going: time order uses good rows only",
          "[trace][reader]") {
  const auto path = trace_file("t.csv",
                               "arrival_s,prompt_tokens,output_tokens\n"
                               "0,1,1\n"
                               "1,x,1\n"
                               "50,1,1\n"  // fine
                               "2,1,1\n"   // backwards: bad
                               "60,1\n"    // missing a column: bad
                               "70,2,2\n");
  auto reader = open_trace_file(file_options(path, true));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[1].arrival_ns == 50 * kNsPerSecond);
  CHECK(rs[2].arrival_ns == 70 * kNsPerSecond);
  const auto st = reader->stats();
  CHECK(st.bad_rows_skipped == 3);
  CHECK(st.rows_read == 6);
  CHECK(st.requests == 3);
}
