#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/rng.h"
#include "plan/sweep_runner.h"
#include "test_util.h"

using namespace kvsim::plan;

namespace {

std::vector<std::string> make_keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(job_key("job " + std::to_string(i)));
  return keys;
}

// A job whose result depends only on its index, and that takes a seeded random time so that
// threads finish out of order.
std::string slow_square(std::size_t i) {
  kvsim::Rng rng(i * 7919 + 1);
  std::this_thread::sleep_for(std::chrono::microseconds(rng.uniform_int(0, 2000)));
  return "{\"i\":" + std::to_string(i) + ",\"sq\":" + std::to_string(i * i) + "}";
}

std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(kvsim::read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("job_key: stable 16-hex-digit hash of the inputs text", "[plan][runner]") {
  CHECK(job_key("").size() == 16);
  CHECK(job_key("tp=4") != job_key("tp=8"));
  CHECK(job_key("ab") != job_key("ba"));
  // Pinned (FNV-1a 64 then splitmix64, checked by hand): the key must not change between builds or
  // platforms (resume files depend on it).
  CHECK(job_key("kvsim") == "a853fe4317354c88");
}

TEST_CASE("run_sweep: results in input order whatever the thread count", "[plan][runner]") {
  const auto keys = make_keys(40);
  RunnerOptions one;
  one.num_threads = 1;
  const auto serial = run_sweep(keys, slow_square, one);
  REQUIRE(serial.size() == 40);
  for (std::size_t i = 0; i < 40; ++i) CHECK(serial[i] == slow_square(i));
  for (int threads : {2, 3, 8, 64}) {
    RunnerOptions many;
    many.num_threads = threads;
    SweepStats stats;
    CHECK(run_sweep(keys, slow_square, many, &stats) == serial);
    CHECK(stats.num_threads == std::min(threads, 40));
    CHECK(stats.num_run == 40);
  }
  RunnerOptions dflt;  // hardware concurrency
  CHECK(run_sweep(keys, slow_square, dflt) == serial);
  CHECK(run_sweep({}, slow_square, dflt).empty());
}

TEST_CASE("run_sweep: jobs with equal keys run once and share the result", "[plan][runner]") {
  std::vector<std::string> keys = {job_key("a"), job_key("b"), job_key("a"), job_key("c"),
                                   job_key("b")};
  std::atomic<int> calls{0};
  RunnerOptions o;
  o.num_threads = 4;
  SweepStats stats;
  const auto out = run_sweep(
      keys,
      [&](std::size_t i) {
        ++calls;
        return "{\"first_index\":" + std::to_string(i) + "}";
      },
      o, &stats);
  CHECK(calls == 3);
  CHECK(stats.num_unique == 3);
  CHECK(out == std::vector<std::string>{"{\"first_index\":0}", "{\"first_index\":1}",
                                        "{\"first_index\":0}", "{\"first_index\":3}",
                                        "{\"first_index\":1}"});
}

TEST_CASE("run_sweep: resume after an interruption runs no finished job twice and loses none",
          "[plan][runner]") {
  const std::string path = kvsim::test::temp_dir() + "/results.jsonl";
  const auto keys = make_keys(30);
  RunnerOptions o;
  o.num_threads = 3;
  o.results_path = path;

  // First run: job 17 fails (an interruption); jobs pulled before it finish and are saved.
  std::mutex mu;
  std::multiset<std::size_t> ran;
  auto job = [&](std::size_t i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ran.insert(i);
    }
    if (i == 17) throw std::runtime_error("interrupted at 17");
    return slow_square(i);
  };
  CHECK_THROWS_WITH(run_sweep(keys, job, o), "interrupted at 17");
  const auto saved = lines_of(path);
  CHECK(saved.size() == ran.size() - 1);  // everything that ran except the failure
  CHECK(saved.size() >= 17);
  const std::multiset<std::size_t> first_run = ran;

  // Second run: only the jobs without a saved result run; the output equals a fresh run's.
  ran.clear();
  auto ok_job = [&](std::size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    ran.insert(i);
    return slow_square(i);
  };
  SweepStats stats;
  const auto out = run_sweep(keys, ok_job, o, &stats);
  CHECK(stats.num_resumed == static_cast<std::int64_t>(saved.size()));
  CHECK(stats.num_run == 30 - stats.num_resumed);
  for (std::size_t i = 0; i < 30; ++i) {
    const bool was_saved = first_run.count(i) == 1 && i != 17;
    CHECK(ran.count(i) == (was_saved ? 0u : 1u));
  }
  RunnerOptions fresh;
  CHECK(out == run_sweep(keys, slow_square, fresh));
  CHECK(lines_of(path).size() == 30);  // every job exactly once

  // Third run: everything is resumed.
  ran.clear();
  CHECK(run_sweep(keys, ok_job, o) == out);
  CHECK(ran.empty());
}

TEST_CASE("run_sweep: a torn last line is ignored and cut before appending", "[plan][runner]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string path = dir + "/results.jsonl";
  const auto keys = make_keys(4);
  const std::string good0 = "{\"key\":\"" + keys[0] + "\",\"result\":" + slow_square(0) + "}\n";
  const std::string good1 = "{\"key\":\"" + keys[1] + "\",\"result\":" + slow_square(1) + "}\n";
  const std::string torn = "{\"key\":\"" + keys[2] + "\",\"result\":{\"i\":2,\"s";
  kvsim::write_file_atomically(path, good0 + good1 + torn);

  std::set<std::size_t> ran;
  RunnerOptions o;
  o.num_threads = 1;
  o.results_path = path;
  const auto out = run_sweep(
      keys,
      [&](std::size_t i) {
        ran.insert(i);
        return slow_square(i);
      },
      o);
  CHECK(ran == std::set<std::size_t>{2, 3});
  for (std::size_t i = 0; i < 4; ++i) CHECK(out[i] == slow_square(i));
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] + "\n" == good0);
  CHECK(lines[1] + "\n" == good1);
  CHECK(lines[2] == "{\"key\":\"" + keys[2] + "\",\"result\":" + slow_square(2) + "}");
}

TEST_CASE("run_sweep: lines of other sweeps are kept and ignored, corrupt lines are errors",
          "[plan][runner]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string path = dir + "/results.jsonl";
  const auto keys = make_keys(2);
  const std::string other = "{\"key\":\"" + job_key("another grid") + "\",\"result\":{\"x\":1}}\n";
  kvsim::write_file_atomically(path, other);
  RunnerOptions o;
  o.results_path = path;
  CHECK(run_sweep(keys, slow_square, o).size() == 2);
  CHECK(lines_of(path).size() == 3);
  CHECK(lines_of(path)[0] + "\n" == other);

  kvsim::write_file_atomically(path, other + "{\"key\":\"zz\",\"result\":1}\n" + other);
  try {
    run_sweep(keys, slow_square, o);
    FAIL("no error");
  } catch (const kvsim::Error& e) {
    CHECK(e.location().file == path);
    CHECK(e.location().line == 2);
    CHECK(e.message().find("not a kvsim results line") != std::string::npos);
  }
}

TEST_CASE("run_sweep: the lowest failing job's error is rethrown", "[plan][runner]") {
  const auto keys = make_keys(50);
  for (int threads : {1, 4}) {
    RunnerOptions o;
    o.num_threads = threads;
    auto job = [](std::size_t i) -> std::string {
      if (i == 9 || i == 10 || i == 30) throw kvsim::Error("job " + std::to_string(i) + " failed");
      return slow_square(i);
    };
    CHECK_THROWS_WITH(run_sweep(keys, job, o), "job 9 failed");
  }
  RunnerOptions o;
  CHECK_THROWS_WITH(run_sweep(
                        keys, [](std::size_t) { return std::string("{\"a\":\n1}"); }, o),
                    Catch::Contains("not one line of JSON"));
  CHECK_THROWS_WITH(run_sweep(
                        keys, [](std::size_t) { return std::string("{\"a\":"); }, o),
                    Catch::Contains("not one line of JSON"));
}

TEST_CASE("ProgressBar::render", "[plan][runner]") {
  CHECK(ProgressBar::render("plan", 12, 48, 42.4, 127.0) ==
        "plan [#######-----------------------] 12/48   25%  elapsed 0:42  ETA 2:07");
  CHECK(ProgressBar::render("plan", 0, 10, 0.0, -1.0) ==
        "plan [------------------------------] 0/10    0%  elapsed 0:00  ETA --:--");
  CHECK(ProgressBar::render("p", 3, 3, 3725.0, 0.0) ==
        "p [##############################] 3/3  100%  elapsed 1:02:05  ETA 0:00");
}
