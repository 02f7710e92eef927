// trace/native_writer.cpp: native CSV rows read back to the same requests, and a file that
// appears only once complete.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/native_writer.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;

namespace {

RequestSpec spec(TimeNs arrival, std::int64_t prompt, std::int64_t output, std::string session = "",
                 std::vector<std::uint64_t> hashes = {}) {
  RequestSpec r;
  r.arrival_ns = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.session_id = std::move(session);
  r.prefix_hashes = std::move(hashes);
  r.prefix_block_tokens = r.prefix_hashes.empty() ? 0 : 16;
  return r;
}

}  // namespace

TEST_CASE("native writer: exact decimal seconds, quoted sessions, ';'-separated hashes",
          "[trace][writer]") {
  const std::string path = test::temp_dir() + "/out.csv";
  const std::vector<RequestSpec> in = {spec(0, 1100, 10, "s1", {1, 2}),
                                       spec(1'500'000'000, 40, 2, "a,\"b\"", {}),
                                       spec(2'000'000'001, 20, 1, "", {18446744073709551615ULL})};
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    NativeCsvWriter w(f, TraceColumns{true, true}, path);
    for (const auto& r : in) w.write(r);
    w.flush();
    std::fclose(f);
  }
  CHECK(test::slurp(path) ==
        "arrival_s,prompt_tokens,output_tokens,session_id,prefix_hashes\n"
        "0,1100,10,s1,1;2\n"
        "1.5,40,2,\"a,\"\"b\"\"\",\n"
        "2.000000001,20,1,,18446744073709551615\n");
  const auto reader = open_trace_file(test::file_options(path));
  const auto out = test::read_all(*reader);
  REQUIRE(out.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(out[i].arrival_ns == in[i].arrival_ns);
    CHECK(out[i].prompt_tokens == in[i].prompt_tokens);
    CHECK(out[i].output_tokens == in[i].output_tokens);
    CHECK(out[i].session_id == in[i].session_id);
    CHECK(out[i].prefix_hashes == in[i].prefix_hashes);
  }
}

TEST_CASE("native writer: without optional columns only the three required ones",
          "[trace][writer]") {
  const std::string path = test::temp_dir() + "/plain.csv";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  {
    NativeCsvWriter w(f, TraceColumns{}, path);
    w.write(spec(250'000, 7, 3, "ignored", {5}));
    w.flush();
    w.flush();  // nothing more to write
  }
  std::fclose(f);
  CHECK(test::slurp(path) == "arrival_s,prompt_tokens,output_tokens\n0.00025,7,3\n");
}

TEST_CASE("atomic output file: the path appears only on commit", "[trace][writer]") {
  const std::string dir = test::temp_dir();
  const std::string path = dir + "/t.csv";
  {
    AtomicOutputFile out(path);
    CHECK(out.path() == path);
    std::fputs("partial\n", out.file());
  }  // never committed: nothing left behind
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir));
  {
    AtomicOutputFile out(path);
    std::fputs("whole\n", out.file());
    out.commit();
  }
  CHECK(test::slurp(path) == "whole\n");
  CHECK_THROWS_WITH(AtomicOutputFile(dir + "/no/such/dir/t.csv"),
                    Catch::Contains(dir + "/no/such/dir/t.csv") && Catch::Contains("cannot write"));
}
