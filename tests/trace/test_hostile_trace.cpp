// Regression tests for hostile trace input (issue 17).
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/file_readers.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using Catch::Matchers::Contains;
using kvsim::test::error_of;
using kvsim::test::file_options;
using kvsim::test::read_all;
using kvsim::test::trace_file;
using namespace kvsim::trace;

TEST_CASE("trace: a header-only trace is an error ('no requests'), not an all-zero report",
          "[trace][hostile]") {
  for (const auto& [name, header] :
       {std::pair{"n.csv", "arrival_s,prompt_tokens,output_tokens\n"},
        std::pair{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"},
        std::pair{"b.csv",
                  "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"},
        std::pair{"v.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n"}}) {
    INFO(name);
    const auto path = trace_file(name, header);
    CHECK_THAT(error_of([&] {
                 auto reader = open_trace_file(file_options(path));
                 (void)read_all(*reader);
               }),
               Contains(std::string(name) + ":1: ") &&
                   Contains("no requests (the file has no rows after the header)"));
  }
  const auto empty = trace_file("m.jsonl", "");
  CHECK_THAT(error_of([&] {
               auto reader = open_trace_file(file_options(empty, false, TraceFormat::kMooncake));
               (void)read_all(*reader);
             }),
             Contains("m.jsonl") && Contains("no requests"));
}

TEST_CASE("trace: every row skipped as bad or failed is 'no requests' too", "[trace][hostile]") {
  const auto path = trace_file("b.csv",
                               "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log "
                               "Type\n5,ChatGPT,472,0,472,Conversation log\n");
  CHECK_THAT(error_of([&] {
               auto reader = open_trace_file(file_options(path));
               (void)read_all(*reader);
             }),
             Contains("b.csv:2: ") && Contains("no requests (1 rows read, 0 skipped as bad, 1 "
                                               "failed requests)"));
}

TEST_CASE("trace: a 100,000-column header is rejected at once (was quadratic, > 60 s)",
          "[trace][hostile]") {
  std::string header = "arrival_s,prompt_tokens,output_tokens";
  for (int i = 0; i < 100000; ++i) header += ",c" + std::to_string(i);
  const auto path = trace_file("w.csv", header + "\n0,1,1\n");
  CHECK_THAT(
      error_of([&] { (void)open_trace_file(file_options(path, false, TraceFormat::kAzure)); }),
      Contains("w.csv:1:") && Contains("expected at most 10000 columns in the header, got "
                                       "100003"));
}

TEST_CASE("trace: a duplicate among many header columns is found (hash set)", "[trace][hostile]") {
  std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens";
  for (int i = 0; i < 9000; ++i) header += ",c" + std::to_string(i);
  header += ",c17";
  const auto path = trace_file("d.csv", header + "\n");
  CHECK_THAT(error_of([&] { (void)open_trace_file(file_options(path)); }),
             Contains("d.csv:1:") && Contains("c17: expected each column once in the header"));
}
