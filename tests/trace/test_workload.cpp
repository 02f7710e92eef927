// Transforms (window, rate scale, truncation, cap), validation, and reopening.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::read_all;

namespace {

std::string ten_second_trace() {
  std::string csv = "arrival_s,prompt_tokens,output_tokens,prefix_hashes\n";
  for (int i = 0; i < 10; ++i) {
    csv += std::to_string(i) + ".5," + std::to_string(100 * (i + 1)) + ",50," +
           (i % 2 == 0 ? "1;2" : "") + "\n";
  }
  return kvsim::test::trace_file("ten.csv", csv);
}

WorkloadOptions from_trace(const std::string& path) {
  WorkloadOptions w;
  w.trace.path = path;
  w.trace.prefix_block_tokens = 64;
  return w;
}

}  // namespace

TEST_CASE("a trace workload without transforms is the file, ids 0..n-1", "[trace][workload]") {
  const auto rs = read_all(*open_workload(from_trace(ten_second_trace())));
  REQUIRE(rs.size() == 10);
  CHECK(rs[9].arrival_ns == 9 * kNsPerSecond);
  CHECK(rs[9].id == 9);
}

TEST_CASE("time window: from START up to END of the source timeline, rebased to 0",
          "[trace][workload]") {
  WorkloadOptions w = from_trace(ten_second_trace());
  w.transforms.window_start_ns = 2 * kNsPerSecond;  // the trace's own arrivals: 0, 1, ..., 9 s
  w.transforms.window_end_ns = 5 * kNsPerSecond;
  auto reader = open_workload(w);
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);  // at 2, 3, 4 s
  CHECK(rs[0].arrival_ns == 0);
  CHECK(rs[0].prompt_tokens == 300);
  CHECK(rs[0].id == 0);
  CHECK(rs[2].arrival_ns == 2 * kNsPerSecond);
  CHECK(reader->stats().requests == 3);
}

TEST_CASE("rate scale divides every gap, exactly", "[trace][workload]") {
  WorkloadOptions w = from_trace(ten_second_trace());
  w.transforms.rate_scale = 3.0;
  const auto rs = read_all(*open_workload(w));
  REQUIRE(rs.size() == 10);
  CHECK(rs[1].arrival_ns == 333'333'333);
  CHECK(rs[3].arrival_ns == 1'000'000'000);
  CHECK(rs[9].arrival_ns == 3'000'000'000);
  auto reader = open_workload(w);
  const TraceStats s = compute_trace_stats(*reader);
  CHECK(*s.rate_rps == Approx(3.0).epsilon(1e-9));
}

TEST_CASE("max requests keeps the first N", "[trace][workload]") {
  WorkloadOptions w = from_trace(ten_second_trace());
  w.transforms.max_requests = 4;
  const auto rs = read_all(*open_workload(w));
  REQUIRE(rs.size() == 4);
  CHECK(rs[3].prompt_tokens == 400);
}

TEST_CASE("max_model_len truncates prompts (Vidur's rule), cuts hashes, counts",
          "[trace][workload]") {
  const auto path = kvsim::test::trace_file("t.csv",
                                            "arrival_s,prompt_tokens,output_tokens,prefix_hashes\n"
                                            "0,100,20,1;2\n"      // fits 120: untouched
                                            "1,200,20,1;2;3;4\n"  // → 100 prompt, 2 blocks
                                            "2,10,500,9\n");      // output alone too long
  WorkloadOptions w = from_trace(path);
  w.transforms.max_model_len = 120;
  w.trace.prefix_block_tokens = 64;
  auto reader = open_workload(w);
  const auto rs = read_all(*reader);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].prompt_tokens == 100);
  CHECK(rs[0].prefix_hashes.size() == 2);
  CHECK(rs[1].prompt_tokens == 100);
  CHECK(rs[1].output_tokens == 20);
  CHECK(rs[1].prefix_hashes == std::vector<std::uint64_t>{1, 2});
  CHECK(rs[2].prompt_tokens == 1);
  CHECK(rs[2].output_tokens == 119);
  CHECK(reader->stats().truncated_prompts == 2);
}

TEST_CASE("open() restarts from the beginning every time", "[trace][workload]") {
  WorkloadOptions w = from_trace(ten_second_trace());
  w.transforms.rate_scale = 2.0;
  const Workload workload(w);
  auto first = workload.open();
  RequestSpec r;
  REQUIRE(first->next(r));
  REQUIRE(first->next(r));
  const auto again = read_all(*workload.open());
  CHECK(again.size() == 10);
  CHECK(again[0].arrival_ns == 0);
  // Copies open the same stream too.
  const Workload copy = workload;
  CHECK(read_all(*copy.open()).size() == 10);
  CHECK(copy.resolved().trace.format == TraceFormat::kNative);
}

TEST_CASE("contradictory or out-of-range options name the option", "[trace][workload]") {
  const auto fails_with = [](const WorkloadOptions& w, const std::string& field,
                             const std::string& text) {
    try {
      Workload workload(w);
      FAIL("accepted options that should fail on " << field);
    } catch (const Error& e) {
      CHECK(e.location().field == field);
      CHECK_THAT(e.message(), Catch::Contains(text));
    }
  };
  WorkloadOptions none;
  fails_with(none, "trace", "expected a trace file");

  WorkloadOptions s;
  s.source = WorkloadOptions::Source::kSynthetic;
  s.synthetic.num_requests = 10;
  s.synthetic.prompt = parse_length_dist("5", {});
  s.synthetic.output = parse_length_dist("5", {});
  fails_with(s, "synthetic.rate", "expected a positive request rate");
  s.synthetic.rate_rps = 1;
  s.synthetic.arrival = ArrivalProcess::kGamma;
  s.synthetic.cv = 0;
  fails_with(s, "synthetic.cv", "coefficient of variation");
  s.synthetic.cv = 2;
  s.synthetic.prompt = LengthDist{};
  fails_with(s, "synthetic.prompt_tokens", "--prompt-len");
  s.synthetic.prompt.kind = LengthKind::kEmpirical;
  fails_with(s, "synthetic.prompt_tokens", "--lengths-from");
  s.synthetic.prompt = parse_length_dist("5", {});
  s.synthetic.shared_prefix = {0.5, 2, 100, 512};
  fails_with(s, "synthetic.shared_prefix.prompt_tokens", "at least one prefix block");
  s.synthetic.shared_prefix = {};
  s.synthetic.num_requests = 0;
  fails_with(s, "synthetic.num_requests", "--num-requests or --duration");
  s.synthetic.num_requests = 10;
  s.synthetic.arrival = ArrivalProcess::kReplay;
  fails_with(s, "synthetic.arrival_trace", "replay");
  s.synthetic.arrival = ArrivalProcess::kPoisson;
  s.transforms.rate_scale = 0;
  fails_with(s, "rate_scale", "positive --rate-scale");
  s.transforms.rate_scale = 1;
  s.transforms.window_start_ns = 5;
  s.transforms.window_end_ns = 5;
  fails_with(s, "time_window", "START < END");
  s.transforms.window_start_ns = 0;
  s.transforms.window_end_ns = kTimeNever;
  s.transforms.max_model_len = 1;
  fails_with(s, "max_model_len", "at least 2");
}

TEST_CASE("length specs parse, print back, and reject nonsense", "[trace][workload]") {
  for (const char* spec : {"fixed:7", "uniform:1:2048", "normal:161.31:50",
                           "lognormal:337.99:300:1:2048", "zipf:1.1:1:1000", "empirical"}) {
    CAPTURE(spec);
    CHECK(to_spec(parse_length_dist(spec, {})) == spec);
  }
  CHECK(parse_length_dist("512", {}).value == 512);
  const ErrorLocation where{"", 0, 0, "--prompt-len"};
  CHECK_THROWS_WITH(parse_length_dist("unifrom:1:5", where),
                    Catch::StartsWith("--prompt-len: expected a length distribution") &&
                        Catch::Contains("did you mean 'uniform'?"));
  CHECK_THROWS_WITH(parse_length_dist("uniform:9:5", where), Catch::Contains("1 <= MIN <= MAX"));
  CHECK_THROWS_WITH(parse_length_dist("0", where), Catch::Contains("at least 1 token"));
  CHECK_THROWS_WITH(parse_length_dist("normal:x:5", where), Catch::Contains("a number MEAN"));
  CHECK_THROWS_WITH(parse_length_dist("zipf:0:1:5", where), Catch::Contains("Zipf exponent"));
}

TEST_CASE("a closed loop needs no rate: every request is ready at time 0", "[trace][workload]") {
  WorkloadOptions w;
  w.source = WorkloadOptions::Source::kSynthetic;
  w.synthetic.num_requests = 5;
  w.synthetic.prompt = parse_length_dist("100", {});
  w.synthetic.output = parse_length_dist("10", {});
  // Open loop without a rate: an error, as before.
  CHECK_THROWS_WITH(Workload(w), Catch::Contains("expected a positive request rate"));
  w.max_concurrency = 4;
  const Workload closed(w);
  const auto requests = read_all(*closed.open());
  REQUIRE(requests.size() == 5);
  for (const auto& r : requests) CHECK(r.arrival_ns == 0);
  CHECK_THAT(closed.open()->describe(), Catch::Contains("rate=unlimited"));
  w.max_concurrency = -1;
  CHECK_THROWS_WITH(Workload(w), Catch::Contains("--max-concurrency"));
}
