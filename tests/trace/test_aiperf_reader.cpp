#include <catch2/catch.hpp>

#include "test_util.h"
#include "trace/replay_run.h"

using kvsim::test::error_of;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;
namespace trace = kvsim::trace;

namespace {

// One aiperf record: sent at `start_ns`, ISL/OSL, TTFT and latency in ms, chunk gaps in ms.
std::string record(std::int64_t start_ns, int isl, int osl, double ttft_ms, double latency_ms,
                   const std::string& chunks, const std::string& phase = "profiling") {
  return R"({"metadata": {"session_num": 0, "request_start_ns": )" + std::to_string(start_ns) +
         R"(, "benchmark_phase": ")" + phase + R"(", "was_cancelled": false}, "metrics": {)" +
         R"("input_sequence_length": {"value": )" + std::to_string(isl) +
         R"(, "unit": "tokens"}, "output_sequence_length": {"value": )" + std::to_string(osl) +
         R"(, "unit": "tokens"}, "time_to_first_token": {"value": )" + std::to_string(ttft_ms) +
         R"(, "unit": "ms"}, "request_latency": {"value": )" + std::to_string(latency_ms) +
         R"(, "unit": "ms"}, "inter_chunk_latency": {"value": [)" + chunks +
         R"(], "unit": "ms"}}, "error": null})";
}

}  // namespace

TEST_CASE("aiperf profile_export.jsonl: send times, lengths and latencies per record",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  const std::int64_t t0 = 1759813207532900363;
  const std::string failed =
      R"({"metadata": {"request_start_ns": )" + std::to_string(t0 + 250'000'000) +
      R"(, "benchmark_phase": "profiling", "was_cancelled": true}, "metrics": {"error_isl": )"
      R"({"value": 77, "unit": "tokens"}}, "error": {"code": 499, "type": "Cancelled"}})";
  const std::string path = write_temp_file(
      dir, "profile_export.jsonl",
      record(t0 + 500'000'000, 100, 4, 40.0, 70.0, "10, 10, 10") + "\n\n" +
          record(t0, 550, 9, 255.0, 295.0, "5, 5, 5, 5, 5, 5, 5, 5") + "\n" + failed + "\n" +
          record(t0 - 9'000'000'000, 10, 2, 1.0, 2.0, "1", "warmup") + "\n");
  REQUIRE(trace::detect_run_format(path) == trace::RunFormat::kAiperf);
  const trace::RealRun run = trace::read_aiperf_jsonl(path);
  CHECK(run.format == trace::RunFormat::kAiperf);
  CHECK(run.arrivals == "recorded (aiperf request_start_ns)");
  REQUIRE(run.requests.size() == 3);  // the warm-up record is skipped
  const auto& a = run.requests[0];
  CHECK(a.arrival_s == 0.0);
  CHECK(a.prompt_tokens == 550);
  CHECK(a.output_tokens == 9);
  CHECK(a.ttft_s == Approx(0.255));
  CHECK(a.e2e_s == Approx(0.295));
  CHECK(a.tpot_s == Approx(0.005));  // (295 - 255) ms over 8 gaps
  CHECK(a.itl_s.size() == 8);
  const auto& b = run.requests[1];  // the cancelled one: arrives, not in the real metrics
  CHECK(b.arrival_s == Approx(0.25).margin(1e-6));
  CHECK(b.failed);
  CHECK(b.prompt_tokens == 77);
  CHECK(b.output_tokens == 1);
  const auto& c = run.requests[2];
  CHECK(c.arrival_s == Approx(0.5).margin(1e-6));
  CHECK(c.ttft_s == Approx(0.04));
  CHECK(c.tpot_s == Approx(0.01));
  REQUIRE(c.itl_s.size() == 3);
  CHECK(c.itl_s[0] == Approx(0.01));
  CHECK(run.duration_s == Approx(0.57).margin(1e-6));
}

TEST_CASE("aiperf records: chunk gaps count as ITLs only one per token; units convert",
          "[trace][replay]") {
  const std::string dir = temp_dir();
  // 5 output tokens in 2 chunks after the first: no per-token gaps.
  const std::string chunky = write_temp_file(dir, "chunky.jsonl", record(0, 10, 5, 1, 9, "4, 4"));
  const trace::RealRun run = trace::read_aiperf_jsonl(chunky);
  REQUIRE(run.requests.size() == 1);
  CHECK(run.requests[0].itl_s.empty());
  CHECK(run.requests[0].tpot_s == Approx(0.002));
  const std::string us = write_temp_file(
      dir, "us.jsonl",
      R"({"metadata": {"request_start_ns": 5}, "metrics": {"input_sequence_length": {"value": 3},)"
      R"( "output_token_count": {"value": 2}, "time_to_first_token": {"value": 1500, "unit": "us"},)"
      R"( "request_latency": {"value": 0.004, "unit": "s"}}, "error": null})");
  const trace::RealRun u = trace::read_aiperf_jsonl(us);
  REQUIRE(u.requests.size() == 1);
  CHECK(u.requests[0].output_tokens == 2);
  CHECK(u.requests[0].ttft_s == Approx(0.0015));
  CHECK(u.requests[0].e2e_s == Approx(0.004));
}

TEST_CASE("aiperf records: bad input names the line and field", "[trace][replay]") {
  const std::string dir = temp_dir();
  const auto message = [&](const std::string& name, const std::string& text) {
    return error_of([&] { trace::read_aiperf_jsonl(write_temp_file(dir, name, text)); });
  };
  CHECK_THAT(message("nometa.jsonl", "\n{\"metrics\": {}}\n"),
             Catch::Contains("nometa.jsonl:2") && Catch::Contains("metadata"));
  CHECK_THAT(message("nostart.jsonl", R"({"metadata": {}, "metrics": {}})"),
             Catch::Contains("metadata.request_start_ns"));
  CHECK_THAT(message("nolen.jsonl", R"({"metadata": {"request_start_ns": 1}, "metrics": {}})"),
             Catch::Contains("metrics.input_sequence_length"));
  CHECK_THAT(
      message("unit.jsonl", record(0, 10, 2, 1, 2, "1")
                                .replace(record(0, 10, 2, 1, 2, "1").find("\"ms\""), 4, "\"min\"")),
      Catch::Contains("metrics.time_to_first_token.unit"));
  CHECK_THAT(message("order.jsonl", record(0, 10, 2, 5, 2, "1")),
             Catch::Contains("request_latency"));
  CHECK_THAT(message("broken.jsonl", "{\"metadata\": \n"), Catch::Contains("malformed JSON"));
  // A number beyond a double's range is bad input too, on its line (not an escaped exception).
  CHECK_THAT(message("huge.jsonl", "\n{\"metadata\": {\"request_start_ns\": 2E99999}}\n"),
             Catch::Contains("huge.jsonl:2") && Catch::Contains("out of range"));
}
