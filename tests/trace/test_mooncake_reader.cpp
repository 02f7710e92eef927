// trace/mooncake_reader.cpp: Mooncake JSONL traces.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::file_options;
using kvsim::test::read_all;
using kvsim::test::trace_file;

TEST_CASE("Mooncake JSONL: ms timestamps, hash ids kept as 512-token blocks, unknown keys skipped",
          "[trace][reader]") {
  const auto path = trace_file(
      "m.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
      "{\"hash_ids\":[0,2],\"output_length\":6,\"input_length\":600,\"timestamp\":3000,"
      "\"extra\":{\"a\":[1,\"x\",null,true]}}\n"
      "\n"
      "{\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}\n");
  auto reader = open_trace_file(file_options(path));
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[1].arrival_ns == 3'000'000'000);
  CHECK(rs[1].prompt_tokens == 600);
  CHECK(rs[1].output_tokens == 6);
  CHECK(rs[1].prefix_hashes == std::vector<std::uint64_t>{0, 2});
  CHECK(rs[1].prefix_block_tokens == 512);
  CHECK(rs[2].arrival_ns == 3'000'000'000);  // equal timestamps are fine
  CHECK(rs[2].prefix_hashes.empty());
  CHECK(reader->columns().prefix_hashes);
}
