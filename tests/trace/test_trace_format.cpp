// trace/trace_format.cpp: format names and detection from the first line.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::file_options;
using kvsim::test::read_all;
using kvsim::test::trace_file;

TEST_CASE("format detection: header, JSON, override, and a clear error otherwise",
          "[trace][reader]") {
  CHECK(detect_trace_format("x", "arrival_s,prompt_tokens,output_tokens") == TraceFormat::kNative);
  CHECK(detect_trace_format("x", "TIMESTAMP,ContextTokens,GeneratedTokens") == TraceFormat::kAzure);
  CHECK(detect_trace_format("x", "{\"timestamp\": 0}") == TraceFormat::kMooncake);
  CHECK(detect_trace_format("x",
                            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log "
                            "Type,Session ID,Elapsed time") == TraceFormat::kBurstGpt);
  CHECK(detect_trace_format("x", "arrived_at,num_prefill_tokens,num_decode_tokens") ==
        TraceFormat::kVidur);
  CHECK_THROWS_WITH(detect_trace_format("odd.csv", "time,in,out"),
                    Catch::StartsWith("odd.csv:1:1: cannot detect the trace format") &&
                        Catch::Contains("--trace-format"));
  CHECK_THROWS_WITH(parse_trace_format("mooncak", {"", 0, 0, "--trace-format"}),
                    Catch::Contains("did you mean 'mooncake'?"));
  // Forcing a format whose columns are missing names the missing column.
  const auto path = trace_file("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n");
  CHECK_THROWS_WITH(open_trace_file(file_options(path, false, TraceFormat::kAzure)),
                    Catch::Contains(":1:1: TIMESTAMP: expected a column 'TIMESTAMP'"));
}
