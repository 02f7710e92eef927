// kvsim validate: replays a real engine's benchmark run (its arrivals and lengths) through one
// deployment and prints real vs simulated TTFT, TPOT, ITL, E2E (mean, p50, p90, p99) and
// throughput with signed errors, (simulated − real) / real. JSON schema kvsim.validate/v1:
//   inputs {run, run_format, arrivals, requests, failed_requests, request_rate, real_metrics
//           ("per request" or "summary"), concurrency (closed loop) | null, serving, ...},
//   metrics {ttft_s|tpot_s|itl_s|e2e_s: {real{count, mean, p50, p90, p99} | null,
//            simulated{...}, error{mean, p50, p90, p99} (fractions) | null}},
//   throughput {real{requests_per_s, output_tokens_per_s}, simulated{...}, error{...}}.
// Percentiles are nearest-rank on both sides (the simulator's are exact below its histogram
// threshold, see sim/percentile.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/commands.h"
#include "cli/flag_parse.h"
#include "cli/replay_input.h"
#include "cli/serving_flags.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "common/strings.h"
#include "report/json.h"
#include "report/sim_report.h"
#include "report/table.h"
#include "trace/replay_run.h"

namespace kvsim::cli {
namespace {

struct ValidateFlags {
  SimCommandFlags sim;
  std::string run_path;          // --run FILE
  std::string side_by_side;      // --side-by-side FILE.csv
  std::string run_config;        // --run-config FILE (inference-perf's configuration)
  bool multi_turn_chat = false;  // --multi-turn-chat
  ReplayFlags replay;
};

// One latency's statistics, seconds: the shape a summary-only run reports them in too.
using Stats = trace::RealStats;

double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::optional<Stats> stats_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  Stats s;
  s.count = static_cast<std::int64_t>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = nearest_rank(v, 50);
  s.p90 = nearest_rank(v, 90);
  s.p99 = nearest_rank(v, 99);
  return s;
}

std::optional<Stats> stats_of(const sim::LatencyHistogram& h) {
  if (h.count() == 0) return std::nullopt;
  Stats s;
  s.count = h.count();
  s.mean = h.mean() / 1e9;
  s.p50 = h.percentile(50) / 1e9;
  s.p90 = h.percentile(90) / 1e9;
  s.p99 = h.percentile(99) / 1e9;
  return s;
}

struct MetricRow {
  std::string name;  // "ttft_s"
  std::string label;
  std::optional<Stats> real, simulated;
};

report::Json stats_json(const std::optional<Stats>& s) {
  if (!s) return nullptr;
  return report::Json{
      {"count", s->count}, {"mean", s->mean}, {"p50", s->p50}, {"p90", s->p90}, {"p99", s->p99}};
}

double rel(double sim, double real) {
  return real != 0 ? (sim - real) / real : std::nan("");
}

report::Json error_json(const MetricRow& m) {
  if (!m.real || !m.simulated) return nullptr;
  const Stats &r = *m.real, &s = *m.simulated;
  const auto num = [](double v) { return std::isfinite(v) ? report::Json(v) : report::Json(); };
  return report::Json{{"mean", num(rel(s.mean, r.mean))},
                      {"p50", num(rel(s.p50, r.p50))},
                      {"p90", num(rel(s.p90, r.p90))},
                      {"p99", num(rel(s.p99, r.p99))}};
}

std::string ms(const std::optional<Stats>& s, double Stats::*field) {
  return s ? fixed((*s).*field * 1e3, 2) : "-";
}

std::string pct(const MetricRow& m, double Stats::*field) {
  if (!m.real || !m.simulated) return "-";
  const double e = rel((*m.simulated).*field, (*m.real).*field);
  if (!std::isfinite(e)) return "-";
  return (e >= 0 ? "+" : "") + fixed(100 * e, 1) + "%";
}

// Checks the flags and reads the real run in its format, with its client's settings.
ReplayInput read_run(const ValidateFlags& f) {
  if (!f.sim.output.format.empty()) report::parse_format(f.sim.output.format);
  if (f.run_path.empty()) {
    throw flag_error("--run", "missing required flag; expected a benchmark result file");
  }
  const WorkloadFlags& w = f.sim.workload;
  if (any_workload_flag(w, {"--max-concurrency", "--prompt-pool", "--shared-prefix-prompts",
                            "--shared-prefix-tokens"})) {
    throw flag_error("--trace",
                     "the workload is the real run's (--run); drop the workload flags "
                     "(but --max-concurrency, --prompt-pool, --shared-prefix-prompts "
                     "and --shared-prefix-tokens, which describe its client)");
  }
  ReplayClient client;
  client.run_config = f.run_config;
  client.multi_turn_chat = f.multi_turn_chat;
  const auto given = [&w](const char* name, std::int64_t value) {
    return workload_flag_given(w, name) ? std::optional<std::int64_t>(value) : std::nullopt;
  };
  client.max_concurrency = given("--max-concurrency", w.max_concurrency);
  client.prompt_pool = given("--prompt-pool", w.prompt_pool);
  client.shared_prefix_prompts = given("--shared-prefix-prompts", w.shared_prefix_prompts);
  client.shared_prefix_tokens = given("--shared-prefix-tokens", w.shared_prefix_tokens);
  return read_replay_input(f.run_path, f.replay, client);
}

// --side-by-side: each request's simulated send time and latencies, by id (its index in the
// run, as the replay's trace numbers them). Times in ns, -1 when they did not happen.
class SimulatedRequests final : public sim::SimObserver {
 public:
  struct Row {
    const char* state = "";
    TimeNs sent = -1, first_token = -1, finish = -1;
  };
  explicit SimulatedRequests(std::size_t n) : rows_(n) {}
  void on_request_end(const sim::Request& r) override {
    if (r.id >= rows_.size()) return;
    Row& row = rows_[r.id];
    row.state = sim::request_state_name(r.state);
    row.sent = r.arrival_ns;
    row.first_token = r.first_token_ns;
    row.finish = r.state == sim::RequestState::kFinished ? r.finish_ns : -1;
  }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::vector<Row> rows_;
};

// One CSV row per request of the run: lengths, the run's arrival and the simulated send, then
// real and simulated TTFT, TPOT (as the source defines it: (E2E − TTFT) / (output − 1)) and E2E
// side by side, seconds; a cell is empty when that side has no value (a failed real request, an
// output of one token, a simulated request rejected or unfinished, a request a time limit left
// unsent).
std::string side_by_side_csv(const trace::RealRun& run, const SimulatedRequests& sim) {
  std::string out =
      "id,prompt_tokens,output_tokens,arrival_s,sim_sent_s,sim_state,real_ttft_s,sim_ttft_s,"
      "real_tpot_s,sim_tpot_s,real_e2e_s,sim_e2e_s\n";
  const auto cell = [](double v) { return v < 0 ? std::string() : report::Json(v).dump(); };
  const auto seconds = [](TimeNs t) { return static_cast<double>(t) / 1e9; };
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const trace::RealRequest& q = run.requests[i];
    const SimulatedRequests::Row& s = sim.rows()[i];
    const bool real = !q.failed;
    const double sent = s.sent >= 0 ? seconds(s.sent) : -1;
    const double ttft = s.first_token >= 0 ? seconds(s.first_token - s.sent) : -1;
    const double e2e = s.finish >= 0 ? seconds(s.finish - s.sent) : -1;
    const double tpot =
        s.finish >= 0 && q.output_tokens > 1
            ? seconds(s.finish - s.first_token) / static_cast<double>(q.output_tokens - 1)
            : -1;
    out += std::to_string(i) + "," + std::to_string(q.prompt_tokens) + "," +
           std::to_string(q.output_tokens) + "," + cell(q.arrival_s) + "," + cell(sent) + "," +
           s.state + "," + cell(real ? q.ttft_s : -1) + "," + cell(ttft) + "," +
           cell(real ? q.tpot_s : -1) + "," + cell(tpot) + "," + cell(real ? q.e2e_s : -1) + "," +
           cell(e2e) + "\n";
  }
  return out;
}

// Real against simulated: the latency rows and the throughputs.
struct Comparison {
  std::vector<MetricRow> rows;
  std::int64_t failed = 0;  // real requests that failed (left out of the real metrics)
  double real_rps = 0, real_tps = 0, sim_rps = 0, sim_tps = 0;
};

Comparison compare(const trace::RealRun& run, const RunOutput& out) {
  const sim::Metrics& m = out.result.metrics;
  Comparison c;
  const double sim_duration = std::max(1e-9, ns_to_seconds(out.result.duration_ns));
  c.sim_rps = static_cast<double>(m.completed) / sim_duration;
  c.sim_tps = static_cast<double>(m.output_tokens) / sim_duration;
  if (run.summary) {  // the client's own statistics (an inference-perf stage summary)
    const trace::RealSummary& s = *run.summary;
    c.rows = {{"ttft_s", "TTFT", s.ttft, stats_of(m.ttft)},
              {"tpot_s", "TPOT", s.tpot, stats_of(m.tpot)},
              {"itl_s", "ITL", s.itl, stats_of(m.itl)},
              {"e2e_s", "E2E", s.e2e, stats_of(m.e2e)}};
    c.failed = static_cast<std::int64_t>(run.requests.size()) - s.completed;
    c.real_rps = s.requests_per_s;
    c.real_tps = s.output_tokens_per_s;
    return c;
  }
  std::vector<double> ttft, tpot, e2e, itl;
  std::int64_t output_tokens = 0, completed = 0;
  for (const trace::RealRequest& r : run.requests) {
    if (r.failed) {
      ++c.failed;
      continue;
    }
    if (r.ttft_s >= 0) ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
    if (r.e2e_s >= 0) e2e.push_back(r.e2e_s);
    itl.insert(itl.end(), r.itl_s.begin(), r.itl_s.end());
    ++completed;
    output_tokens += r.output_tokens;
  }
  c.rows = {{"ttft_s", "TTFT", stats_of(ttft), stats_of(m.ttft)},
            {"tpot_s", "TPOT", stats_of(tpot), stats_of(m.tpot)},
            {"itl_s", "ITL", stats_of(itl), stats_of(m.itl)},
            {"e2e_s", "E2E", stats_of(e2e), stats_of(m.e2e)}};
  const double real_duration = run.duration_s > 0 ? run.duration_s : 1;
  c.real_rps = static_cast<double>(completed) / real_duration;
  c.real_tps = static_cast<double>(output_tokens) / real_duration;
  return c;
}

std::string validate_json(const std::string& run_path, const trace::RealRun& run,
                          const ReplayPrompts& prompts, const RunOutput& out, const Comparison& c) {
  const sim::Metrics& m = out.result.metrics;
  report::Json doc = report::envelope("kvsim.validate/v1", "validate");
  report::Json inputs;
  inputs["run"] = run_path;
  inputs["run_format"] = std::string(trace::run_format_name(run.format));
  inputs["arrivals"] = run.arrivals;
  inputs["requests"] = static_cast<std::int64_t>(run.requests.size());
  inputs["failed_requests"] = c.failed;
  inputs["real_metrics"] = run.summary ? "summary" : "per request";
  inputs["prompts"] =
      prompts.describe().empty() ? report::Json("distinct") : report::Json(prompts.describe());
  inputs["concurrency"] =
      run.concurrency > 0 ? report::Json(run.concurrency) : report::Json(nullptr);
  inputs["request_rate"] = run.request_rate && std::isfinite(*run.request_rate)
                               ? report::Json(*run.request_rate)
                               : report::Json(nullptr);
  inputs["model"] = out.inputs.model;
  inputs["hardware"] = out.inputs.hardware;
  inputs["serving"] = out.inputs.serving;
  inputs["seed"] = out.inputs.seed;
  doc["inputs"] = inputs;
  report::Json metrics;
  for (const MetricRow& row : c.rows) {
    metrics[row.name] = {{"real", stats_json(row.real)},
                         {"simulated", stats_json(row.simulated)},
                         {"error", error_json(row)}};
  }
  doc["metrics"] = metrics;
  doc["throughput"] = {
      {"real", {{"requests_per_s", c.real_rps}, {"output_tokens_per_s", c.real_tps}}},
      {"simulated", {{"requests_per_s", c.sim_rps}, {"output_tokens_per_s", c.sim_tps}}},
      {"error",
       {{"requests_per_s", rel(c.sim_rps, c.real_rps)},
        {"output_tokens_per_s", rel(c.sim_tps, c.real_tps)}}}};
  doc["simulated_requests"] = {{"completed", m.completed},
                               {"rejected", m.rejected()},
                               {"unfinished", out.result.requests_unfinished}};
  return report::dump(doc);
}

std::string validate_table(const std::string& run_path, const trace::RealRun& run,
                           const ReplayPrompts& prompts, const RunOutput& out,
                           const Comparison& c) {
  const sim::Metrics& m = out.result.metrics;
  report::Table t({"metric", "real mean", "sim mean", "err", "real p50", "sim p50", "err",
                   "real p90", "sim p90", "err", "real p99", "sim p99", "err"});
  for (std::size_t c = 1; c < 13; ++c) t.set_align(c, report::Align::kRight);
  t.set_title(
      "kvsim validate: " + run_path + " (" + std::string(trace::run_format_name(run.format)) +
      ", " + with_commas(static_cast<std::int64_t>(run.requests.size())) + " requests; arrivals " +
      run.arrivals + (prompts.describe().empty() ? "" : "; prompts: " + prompts.describe()) +
      ")\nlatencies in ms; err = (sim − real) "
      "/ real");
  for (const MetricRow& row : c.rows) {
    t.add_row({row.label, ms(row.real, &Stats::mean), ms(row.simulated, &Stats::mean),
               pct(row, &Stats::mean), ms(row.real, &Stats::p50), ms(row.simulated, &Stats::p50),
               pct(row, &Stats::p50), ms(row.real, &Stats::p90), ms(row.simulated, &Stats::p90),
               pct(row, &Stats::p90), ms(row.real, &Stats::p99), ms(row.simulated, &Stats::p99),
               pct(row, &Stats::p99)});
  }
  std::string s = t.render();
  const auto signed_pct = [](double e) { return (e >= 0 ? "+" : "") + fixed(100 * e, 1) + "%"; };
  s += "throughput: real " + fixed(c.real_rps, 3) + " req/s, " + fixed(c.real_tps, 1) +
       " output tok/s; simulated " + fixed(c.sim_rps, 3) + " req/s (" +
       signed_pct(rel(c.sim_rps, c.real_rps)) + "), " + fixed(c.sim_tps, 1) + " output tok/s (" +
       signed_pct(rel(c.sim_tps, c.real_tps)) + ")\n";
  if (c.failed > 0)
    s += "real failed requests (left out of the real metrics): " + std::to_string(c.failed) + "\n";
  if (m.rejected() > 0 || out.result.requests_unfinished > 0) {
    s += "simulated: " + std::to_string(m.rejected()) + " rejected, " +
         std::to_string(out.result.requests_unfinished) + " unfinished\n";
  }
  return s;
}

std::string validate_csv(const std::vector<MetricRow>& rows) {
  std::string s = "metric,stat,real,simulated,error\n";
  for (const MetricRow& row : rows) {
    for (const auto& [stat, field] :
         std::vector<std::pair<std::string, double Stats::*>>{{"mean", &Stats::mean},
                                                              {"p50", &Stats::p50},
                                                              {"p90", &Stats::p90},
                                                              {"p99", &Stats::p99}}) {
      const std::string real = row.real ? fixed((*row.real).*field, 9) : "";
      const std::string simd = row.simulated ? fixed((*row.simulated).*field, 9) : "";
      std::string err;
      if (row.real && row.simulated) {
        const double e = rel((*row.simulated).*field, (*row.real).*field);
        if (std::isfinite(e)) err = fixed(e, 6);
      }
      s += row.name;
      s += ',';
      s += stat;
      s += ',';
      s += real;
      s += ',';
      s += simd;
      s += ',';
      s += err;
      s += '\n';
    }
  }
  return s;
}

void run_validate(const ValidateFlags& f) {
  const ReplayInput in = read_run(f);
  const trace::RealRun& run = in.run;
  const ReplayPrompts& prompts = in.prompts;
  const TempTrace temp(run, prompts);
  SimCommandFlags sim = f.sim;
  sim.workload_override = temp.workload();
  const PreparedRun prepared = prepare_run(sim);
  if (!f.side_by_side.empty() && run.summary) {
    throw flag_error("--side-by-side",
                     "the run reports a summary, not each request's timings (" + f.run_path + ")");
  }
  // --requests and --timeline write what they write for `kvsim simulate`: the simulated side,
  // one row per request of the run (in the run's order) and the memory timeline.
  SimulatedRequests per_request(f.side_by_side.empty() ? 0 : run.requests.size());
  const RunOutput out = run_scenario(prepared.resolved, f.sim.serving.requests_path,
                                     "validate:", kv_detail(f.sim.serving),
                                     f.side_by_side.empty() ? nullptr : &per_request);
  if (!f.sim.serving.timeline_path.empty()) {
    write_file_atomically(f.sim.serving.timeline_path, report::timeline_csv(out.result));
  }
  if (!f.side_by_side.empty()) {
    write_file_atomically(f.side_by_side, side_by_side_csv(run, per_request));
  }
  const Comparison c = compare(run, out);
  report::emit(f.sim.output,
               {[&] { return validate_json(f.run_path, run, prompts, out, c); },
                [&] { return validate_table(f.run_path, run, prompts, out, c); },
                [&] { return validate_csv(c.rows); }},
               "validate");
}

}  // namespace

void register_validate(CLI::App& app) {
  auto flags = std::make_shared<ValidateFlags>();
  auto* command = app.add_subcommand(
      "validate", "Replay a real benchmark run and compare real vs simulated latencies");
  add_sim_command_flags(command, flags->sim, SettingForm::kSingle);
  command->add_option("--run", flags->run_path,
                      "The real run: vLLM benchmark_serving --save-result JSON, requests.jsonl, "
                      "a DistServe .exp file, an aiperf profile_export.jsonl or an "
                      "inference-perf lifecycle report (per-request, or one stage's summary)");
  command
      ->add_option("--side-by-side", flags->side_by_side,
                   "Also write one CSV row per request of the run: its lengths, arrival and "
                   "simulated send, and real and simulated TTFT, TPOT and E2E side by side "
                   "(a run with per-request timings)")
      ->type_name("FILE.csv");
  add_run_config_flag(command, flags->run_config);
  add_multi_turn_flag(command, flags->multi_turn_chat);
  add_replay_flags(command, flags->replay);
  command->callback([flags] { run_validate(*flags); });
}

}  // namespace kvsim::cli
