// trace/line_reader.cpp: buffered line reading for the trace readers.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::file_options;
using kvsim::test::read_all;
using kvsim::test::trace_file;

TEST_CASE("a missing file or a directory is a clear error", "[trace][reader]") {
  CHECK_THROWS_WITH(open_trace_file(file_options("/nonexistent/t.csv")),
                    Catch::StartsWith("/nonexistent/t.csv: cannot open the trace file"));
  CHECK_THROWS_WITH(open_trace_file(file_options(kvsim::test::temp_dir())),
                    Catch::Contains("expected a trace file, got a directory"));
  CHECK_THROWS_WITH(open_trace_file(file_options(trace_file("e.csv", ""))),
                    Catch::Contains("got an empty file"));
}

TEST_CASE("long lines spanning the read buffer are read whole", "[trace][reader]") {
  // One Mooncake row with 300,000 hashes (> the 1 MiB read chunk).
  std::string line =
      "{\"timestamp\": 0, \"input_length\": 153600000, \"output_length\": 1, "
      "\"hash_ids\": [";
  for (int i = 0; i < 300000; ++i) line += (i ? ", " : "") + std::to_string(i);
  line += "]}\n";
  const auto path = trace_file("big.jsonl", line + line);
  const auto rs = read_all(*open_trace_file(file_options(path)));
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].prefix_hashes.size() == 300000);
  CHECK(rs[1].prefix_hashes.back() == 299999);
}
