// Every bad row ends with one message naming the file, line, column and field, and what was
// expected; under --skip-bad-rows the same rows are counted instead.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;

namespace {

struct BadRowCase {
  const char* name;
  const char* file_name;
  std::string content;
  int line;
  int column;
  const char* field;
  const char* expected;  // a substring of the message
};

const char* kNative = "arrival_s,prompt_tokens,output_tokens\n";
const char* kNativeHashes = "arrival_s,prompt_tokens,output_tokens,prefix_hashes\n";
const char* kAzure = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
const char* kBurst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
const char* kVidur = "arrived_at,num_prefill_tokens,num_decode_tokens\n";

std::vector<BadRowCase> cases() {
  return {
      {"non-numeric prompt", "a.csv", std::string(kNative) + "0,1,1\n1.5,abc,3\n", 3, 5,
       "prompt_tokens", "expected a positive integer (tokens), got 'abc'"},
      {"negative output", "a.csv", std::string(kNative) + "0,12,-4\n", 2, 6, "output_tokens",
       "expected a positive integer (tokens), got '-4'"},
      {"zero prompt", "a.csv", std::string(kNative) + "0,0,4\n", 2, 3, "prompt_tokens",
       "expected a positive integer (tokens), got '0'"},
      {"negative arrival", "a.csv", std::string(kNative) + "-1,5,4\n", 2, 1, "arrival_s",
       "expected a non-negative number of seconds, got '-1'"},
      {"arrival not a number", "a.csv", std::string(kNative) + "0,5,4\nsoon,5,4\n", 3, 1,
       "arrival_s", "expected a non-negative number of seconds, got 'soon'"},
      {"missing column", "a.csv", std::string(kNative) + "0,5,4\n1,5\n", 3, 4, "output_tokens",
       "expected 3 columns as in the header, got 2"},
      {"extra column", "a.csv", std::string(kNative) + "0,5,4,9\n", 2, 7, "",
       "expected 3 columns as in the header, got 4"},
      {"arrival backwards beyond tolerance", "a.csv",
       std::string(kNative) + "10,5,4\n11,5,4\n10.5,5,4\n", 4, 1, "arrival_s",
       "expected arrivals in non-decreasing order, got 0.5 s before the previous row's"},
      {"absurd token count", "a.csv", std::string(kNative) + "0,5000000000,4\n", 2, 3,
       "prompt_tokens", "expected at most 1,000,000,000 tokens"},
      {"bad prefix hash", "a.csv", std::string(kNativeHashes) + "0,2048,4,1;2;x;4\n", 2, 14,
       "prefix_hashes", "expected ';'-separated non-negative integer block hashes, got 'x'"},
      {"unterminated quote", "a.csv", std::string(kNative) + "0,\"5,4\n", 2, 3, "",
       "expected a closing '\"'"},
      {"Azure bad date-time", "az.csv",
       std::string(kAzure) + "2023-11-16 18:17:03.9799600,4808,10\r\n2023-11-16 25:17:03.0,1,1", 3,
       1, "TIMESTAMP", "expected a date-time 'YYYY-MM-DD HH:MM:SS.fffffff', got "},
      {"Azure non-numeric tokens", "az.csv",
       std::string(kAzure) + "2023-11-16 18:17:03.9799600,4808,ten\r\n", 2, 34, "GeneratedTokens",
       "expected a positive integer (tokens), got 'ten'"},
      {"BurstGPT negative response", "b.csv",
       std::string(kBurst) + "5,ChatGPT,472,-18,490,Conversation log\n", 2, 15, "Response tokens",
       "expected a non-negative integer (tokens), got '-18'"},
      {"Vidur non-numeric arrival", "v.csv", std::string(kVidur) + "0.0,4808,10\nNaN,1,1\n", 3, 1,
       "arrived_at", "expected a non-negative number of seconds, got 'NaN'"},
      {"Mooncake missing key", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n"
       "{\"timestamp\": 5, \"output_length\": 1}\n",
       2, 36, "input_length", "expected a key 'input_length' in the object"},
      {"Mooncake string where a number belongs", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": \"10\", \"output_length\": 1}\n", 1, 34,
       "input_length", "expected a positive integer (tokens), got"},
      {"Mooncake malformed JSON", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": 10 \"output_length\": 1}\n", 1, 37, "",
       "expected ',' or '}', got '\"'"},
      {"Mooncake bad hash id", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 1, \"hash_ids\": [0, -1]}\n",
       1, 76, "hash_ids", "expected a non-negative integer hash id, got '-1'"},
      {"Mooncake too many hash ids", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0, 1]}\n", 1,
       71, "hash_ids", "expected at most 1 hash ids for 512 input tokens (512 per block), got 2"},
      {"Mooncake timestamp going backwards", "m.jsonl",
       "{\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 1}\n"
       "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n",
       2, 15, "timestamp", "expected arrivals in non-decreasing order, got 3 s before"},
      {"Mooncake trailing junk", "m.jsonl",
       "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1} x\n", 1, 58, "",
       "expected the end of the line after the JSON object, got 'x'"},
      {"Mooncake duplicate key", "m.jsonl",
       "{\"timestamp\": 0, \"timestamp\": 1, \"input_length\": 10, \"output_length\": 1}\n", 1, 18,
       "timestamp", "expected each key once, got it twice"},
  };
}

}  // namespace

TEST_CASE("bad rows: the message names file, line, column, field and what was expected",
          "[trace][badrows]") {
  const auto all = cases();
  REQUIRE(all.size() >= 10);
  for (const auto& c : all) {
    SECTION(c.name) {
      const std::string path = kvsim::test::trace_file(c.file_name, c.content);
      std::string where =
          path + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
      if (*c.field != '\0') where += std::string(c.field) + ": ";
      try {
        auto reader = open_trace_file(kvsim::test::file_options(path));
        kvsim::test::read_all(*reader);
        FAIL("no error for: " << c.name);
      } catch (const Error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(what.rfind(where, 0) == 0);
        CHECK(what.find(c.expected) != std::string::npos);
        CHECK(e.location().file == path);
        CHECK(e.location().line == c.line);
        CHECK(e.location().column == c.column);
        CHECK(e.location().field == c.field);
      }
      // The same file under --skip-bad-rows: one bad row counted, and no error unless that was
      // the only row (then the trace has no requests, which is an error of its own).
      auto skipping = open_trace_file(kvsim::test::file_options(path, true));
      std::vector<kvsim::trace::RequestSpec> requests;
      try {
        requests = kvsim::test::read_all(*skipping);
      } catch (const Error& e) {
        CHECK_THAT(e.what(),
                   Catch::Matchers::Contains("no requests (1 rows read, 1 skipped as bad"));
      }
      const auto st = skipping->stats();
      CHECK(st.bad_rows_skipped == 1);
      CHECK(st.requests == static_cast<std::int64_t>(requests.size()));
      CHECK(st.rows_read == st.requests + st.bad_rows_skipped + st.failed_requests);
    }
  }
}
