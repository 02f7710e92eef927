// run/overhead_calibration.cpp: fitting the step overheads to a run replayed through the
// deployment. The "real" runs here are simulations with planted overheads, written as the
// requests.jsonl a user would bring.
#include <cstdio>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario.h"
#include "config/settings.h"
#include "run/overhead_calibration.h"
#include "run/run.h"
#include "test_util.h"

using namespace kvsim;

namespace {

struct Row {
  double arrival_s;
  std::int64_t prompt, output;
};

std::string trace_csv(const std::vector<Row>& rows) {
  std::string s = "arrival_s,prompt_tokens,output_tokens\n";
  char buf[96];
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof buf, "%.6f,%lld,%lld\n", r.arrival_s,
                  static_cast<long long>(r.prompt), static_cast<long long>(r.output));
    s += buf;
  }
  return s;
}

// OPT-13B on an A100-80GB (vLLM V0, as the DistServe runs), replaying `csv`.
run::ResolvedScenario scenario(const std::string& csv) {
  config::Scenario s;
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--model", "opt-13b"}, {"--gpu", "a100-80gb"}, {"--engine", "v0"}}) {
    config::apply_setting(*config::find_setting_by_flag(flag), value, ErrorLocation{}, s);
  }
  s.workload.source = trace::WorkloadOptions::Source::kTrace;
  s.workload.trace.path = csv;
  s.workload.trace.format = trace::TraceFormat::kNative;
  s.has_workload = true;
  return run::resolve_scenario(s);
}

// Puts `terms` in the resolved scenario: the GPU profile's step terms and the simulator's front
// end (resolve copied the profile's latency there).
void plant(run::ResolvedScenario& s, const cost::OverheadTerms& terms) {
  run::set_overhead_terms(s.deployment.hardware->cost, terms);
  s.sim.frontend_latency_ns = seconds_to_ns(terms[3]);
}

// Records every finished request's times.
class Times final : public sim::SimObserver {
 public:
  std::map<std::uint64_t, sim::Request> done;
  void on_request_end(const sim::Request& r) override { done[r.id] = r; }
};

// Simulates `rows` with `planted` overheads and writes what the "engine" measured.
std::string planted_run(const std::string& dir, const std::vector<Row>& rows,
                        const cost::OverheadTerms& planted) {
  run::ResolvedScenario s = scenario(test::write_temp_file(dir, "trace.csv", trace_csv(rows)));
  plant(s, planted);
  Times times;
  (void)run::run(s, &times);
  REQUIRE(times.done.size() == rows.size());
  std::string jsonl;
  char buf[256];
  for (const auto& [id, r] : times.done) {
    std::snprintf(buf, sizeof buf,
                  "{\"arrival_time_s\": %.9f, \"input_tokens\": %lld, \"output_tokens\": %lld, "
                  "\"first_token_time\": %.9f, \"end_time\": %.9f}\n",
                  ns_to_seconds(r.arrival_ns), static_cast<long long>(r.prompt_tokens),
                  static_cast<long long>(r.output_tokens), ns_to_seconds(r.first_token_ns),
                  ns_to_seconds(r.finish_ns));
    jsonl += buf;
  }
  return test::write_temp_file(dir, "run.jsonl", jsonl);
}

// 80 requests with varied prompts and outputs (a fixed LCG: deterministic): 40 alone, one every
// 2 s (one sequence per step), then 40 at once (batches of up to 40): the batch size varies, so
// the per-step and per-sequence terms separate.
std::vector<Row> varied_rows() {
  std::vector<Row> rows;
  std::uint64_t x = 12345;
  const auto next = [&x](std::uint64_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((x >> 33) % mod);
  };
  for (int i = 0; i < 80; ++i) {
    const double t = i < 40 ? 2.0 * i : 80.0 + 0.001 * i;
    rows.push_back({t, 16 + next(900), 10 + next(60)});
  }
  return rows;
}

run::OverheadCalibration fit_from_zero(const std::string& dir, const std::string& jsonl,
                                       const cost::OverheadTerms& prior) {
  const trace::RealRun real = trace::read_requests_jsonl(jsonl);
  // The replay: the same requests in the same order (ids 0, 1, ...), from the prior profile.
  std::vector<Row> rows;
  for (const auto& r : real.requests)
    rows.push_back({r.arrival_s, r.prompt_tokens, r.output_tokens});
  run::ResolvedScenario s = scenario(test::write_temp_file(dir, "replay.csv", trace_csv(rows)));
  plant(s, prior);
  const run::ReplayCase c{&s, &real};
  return run::calibrate_overheads(std::span<const run::ReplayCase>(&c, 1));
}

}  // namespace

TEST_CASE("calibrate_overheads recovers planted overheads from a run's TTFT and TPOT",
          "[run][overhead]") {
  const std::string dir = test::temp_dir();
  const cost::OverheadTerms planted = {2e-3, 40e-6, 3e-6, 8e-3};
  const std::string jsonl = planted_run(dir, varied_rows(), planted);
  const run::OverheadCalibration fit = fit_from_zero(dir, jsonl, {0, 0, 0, 0});
  CHECK(fit.determined == std::array<bool, 4>{true, true, true, true});
  CHECK(fit.fitted_s[0] == Approx(planted[0]).epsilon(0.05));
  CHECK(fit.fitted_s[1] == Approx(planted[1]).epsilon(0.05));
  CHECK(fit.fitted_s[2] == Approx(planted[2]).epsilon(0.05));
  CHECK(fit.fitted_s[3] == Approx(planted[3]).epsilon(0.05));
  CHECK(fit.before.tpot.mean_error_pct < -1);  // no overhead: too fast
  CHECK(std::abs(fit.after.tpot.mean_error_pct) < 1);
  CHECK(std::abs(fit.after.ttft.mean_error_pct) < 1);
  CHECK(fit.after.e2e.requests == 80);

  // Deterministic: the same inputs give the same terms.
  const run::OverheadCalibration again = fit_from_zero(dir, jsonl, {0, 0, 0, 0});
  CHECK(again.fitted_s == fit.fitted_s);
  CHECK(again.rms_by_round == fit.rms_by_round);
}

TEST_CASE("calibrate_overheads: a run without prefill or batch variation leaves terms undetermined",
          "[run][overhead]") {
  // One request at a time, the same prompt, one output token: every row is one step with one
  // sequence and 256 prompt tokens, through the front end once. Only the step term can be
  // fitted; the others keep the prior.
  std::vector<Row> rows;
  for (int i = 0; i < 20; ++i) rows.push_back({1.0 * i, 256, 1});
  const std::string dir = test::temp_dir();
  const std::string jsonl = planted_run(dir, rows, {2e-3, 40e-6, 3e-6, 4e-3});
  const run::OverheadCalibration fit = fit_from_zero(dir, jsonl, {0, 5e-6, 1e-6, 1e-3});
  CHECK(fit.determined == std::array<bool, 4>{true, false, false, false});
  CHECK(fit.fitted_s[1] == 5e-6);
  CHECK(fit.fitted_s[2] == 1e-6);
  CHECK(fit.fitted_s[3] == 1e-3);
  // The step term absorbs the rest: 2 ms + 40 µs + 256 × 3 µs + 4 ms − 5 µs − 256 × 1 µs − 1 ms.
  CHECK(fit.fitted_s[0] ==
        Approx(2e-3 + 40e-6 + 256 * 3e-6 + 4e-3 - 5e-6 - 256 * 1e-6 - 1e-3).epsilon(0.01));
}

TEST_CASE("calibrate_overheads refuses the linear cost model", "[run][overhead]") {
  const std::string dir = test::temp_dir();
  run::ResolvedScenario s = scenario(test::write_temp_file(dir, "t.csv", trace_csv({{0, 8, 2}})));
  s.cost.kind = cost::CostModelKind::kLinear;
  trace::RealRun real;
  real.requests.push_back({});
  const run::ReplayCase c{&s, &real};
  CHECK_THAT(
      test::error_of([&] { run::calibrate_overheads(std::span<const run::ReplayCase>(&c, 1)); }),
      Catch::Contains("--cost-model"));
}

TEST_CASE("calibrate_overheads refuses async scheduling, whose host time does not add up",
          "[run][overhead]") {
  const std::string dir = test::temp_dir();
  run::ResolvedScenario s = scenario(test::write_temp_file(dir, "t.csv", trace_csv({{0, 8, 2}})));
  s.cost.roofline.async_scheduling = true;
  trace::RealRun real;
  real.requests.push_back({});
  const run::ReplayCase c{&s, &real};
  CHECK_THAT(
      test::error_of([&] { run::calibrate_overheads(std::span<const run::ReplayCase>(&c, 1)); }),
      Catch::Contains("--async-scheduling") && Catch::Contains("without async scheduling"));
}
