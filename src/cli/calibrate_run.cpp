#include "cli/calibrate_run.h"

#include <ctime>
#include <memory>

#include "cli/flag_parse.h"
#include "cli/serving_flags.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "common/strings.h"
#include "config/catalog_data.h"
#include "config/cost_profile_yaml.h"
#include "report/json.h"
#include "report/output.h"
#include "report/table.h"
#include "run/overhead_calibration.h"

namespace kvsim::cli {
namespace {

// One --from-run file, read and resolved.
struct LoadedRun {
  std::string path;
  trace::RealRun run;
  ReplayPrompts prompts;
  std::unique_ptr<TempTrace> trace;
  run::ResolvedScenario scenario;
};

LoadedRun load_run(const std::string& path, const FromRunFlags& f, const FromRunOutput& o) {
  LoadedRun r;
  r.path = path;
  ReplayInput in = read_replay_input(path, f.replay, f.client);
  r.run = std::move(in.run);
  r.prompts = in.prompts;
  if (r.run.summary) {
    throw Error(ErrorLocation{path, 0, 0, ""},
                "a summary of a run (an inference-perf stage report) has no per-request timings "
                "to fit; give the run's per_request_lifecycle_metrics.json");
  }
  r.trace = std::make_unique<TempTrace>(r.run, r.prompts);
  SimCommandFlags sim;
  sim.config = f.config;
  sim.command = f.command;
  sim.settings = f.settings;
  sim.settings.given.insert(sim.settings.given.begin(),
                            {config::find_setting_by_flag("--gpu"), o.gpu});
  if (!o.model.empty()) {
    sim.settings.given.insert(sim.settings.given.begin(),
                              {config::find_setting_by_flag("--model"), o.model});
  }
  sim.workload_override = r.trace->workload();
  r.scenario = prepare_run(sim).resolved;
  return r;
}

std::string us(double seconds) {
  return fixed(seconds * 1e6, 3);
}

report::Json terms_json(const cost::OverheadTerms& t) {
  report::Json j;
  for (std::size_t k = 0; k < t.size(); ++k) j[cost::kOverheadTermKeys[k]] = t[k] * 1e6;
  return j;
}

report::Json error_json(const run::LatencyError& e) {
  return {{"requests", e.requests},
          {"mean_error_pct", e.mean_error_pct},
          {"median_abs_error_pct", e.median_abs_error_pct}};
}

std::vector<std::string> undetermined(const run::OverheadCalibration& c) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < c.determined.size(); ++k)
    if (!c.determined[k]) out.emplace_back(cost::kOverheadTermKeys[k]);
  return out;
}

std::vector<std::string> determined(const run::OverheadCalibration& c) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < c.determined.size(); ++k)
    if (c.determined[k]) out.emplace_back(cost::kOverheadTermKeys[k]);
  return out;
}

struct Outcome {
  const std::vector<LoadedRun>* runs = nullptr;
  run::OverheadCalibration fit;
  std::string model, gpu, profile_path;
  int rounds = 0;
};

struct Metric {
  const char* name;
  const char* label;
  run::LatencyError run::ReplayErrors::*field;
};
constexpr Metric kMetrics[] = {{"ttft", "TTFT", &run::ReplayErrors::ttft},
                               {"tpot", "TPOT", &run::ReplayErrors::tpot},
                               {"e2e", "E2E", &run::ReplayErrors::e2e}};

std::string outcome_json(const Outcome& o) {
  report::Json doc = report::envelope("kvsim.calibration/v1", "calibrate");
  doc["profile"] = o.profile_path.empty() ? report::Json(nullptr) : report::Json(o.profile_path);
  report::Json runs = report::Json::array();
  for (const LoadedRun& r : *o.runs) {
    runs.push_back({{"path", r.path},
                    {"run_format", std::string(trace::run_format_name(r.run.format))},
                    {"requests", static_cast<std::int64_t>(r.run.requests.size())},
                    {"arrivals", r.run.arrivals},
                    {"concurrency", r.run.concurrency > 0 ? report::Json(r.run.concurrency)
                                                          : report::Json(nullptr)},
                    {"prompts", r.prompts.describe().empty() ? std::string("distinct")
                                                             : r.prompts.describe()}});
  }
  doc["inputs"] = {{"runs", runs},
                   {"model", o.model},
                   {"gpu", o.gpu},
                   {"rounds", o.rounds},
                   {"rows", o.fit.rows}};
  doc["prior"] = terms_json(o.fit.prior_s);
  doc["fitted"] = terms_json(o.fit.fitted_s);
  doc["undetermined"] = undetermined(o.fit);
  doc["rms_relative_error_by_round"] = o.fit.rms_by_round;
  report::Json validation;
  for (const Metric& m : kMetrics) {
    validation[m.name] = {{"before", error_json(o.fit.before.*m.field)},
                          {"after", error_json(o.fit.after.*m.field)}};
  }
  doc["validation"] = validation;
  return report::dump(doc);
}

std::string signed_pct(double x) {
  return (x >= 0 ? "+" : "") + fixed(x, 1) + "%";
}

std::string outcome_table(const Outcome& o) {
  std::string paths;
  std::int64_t requests = 0;
  for (const LoadedRun& r : *o.runs) {
    paths += (paths.empty() ? "" : ", ") + r.path;
    requests += static_cast<std::int64_t>(r.run.requests.size());
  }
  report::Table terms({"term", "prior", "fitted", ""});
  terms.set_title("kvsim calibrate --from-run: " + paths + " (" + with_commas(requests) +
                  " requests), " + o.model + " on " + o.gpu + "\nframework overheads in µs; " +
                  std::to_string(o.fit.rows) + " rows, " + std::to_string(o.fit.simulations) +
                  " simulations of each run");
  terms.set_align(1, report::Align::kRight);
  terms.set_align(2, report::Align::kRight);
  for (std::size_t k = 0; k < o.fit.fitted_s.size(); ++k) {
    terms.add_row({cost::kOverheadTermKeys[k], us(o.fit.prior_s[k]), us(o.fit.fitted_s[k]),
                   o.fit.determined[k] ? "" : "undetermined by the runs: kept"});
  }
  report::Table errors(
      {"metric", "requests", "mean err before", "after", "median |err| before", "after"});
  for (std::size_t c = 1; c < 6; ++c) errors.set_align(c, report::Align::kRight);
  for (const Metric& m : kMetrics) {
    const run::LatencyError &b = o.fit.before.*m.field, &a = o.fit.after.*m.field;
    errors.add_row({m.label, with_commas(b.requests), signed_pct(b.mean_error_pct),
                    signed_pct(a.mean_error_pct), fixed(b.median_abs_error_pct, 1) + "%",
                    fixed(a.median_abs_error_pct, 1) + "%"});
  }
  std::string s = terms.render() + "\n" + errors.render();
  s += "err = (sim − real) / real\n";
  if (!o.profile_path.empty()) s += "profile written to " + o.profile_path + "\n";
  return s;
}

// The base GPU's profile with the fitted terms and their provenance.
model::CostProfile fitted_profile(const run::ResolvedScenario& base, const Outcome& o,
                                  const std::string& date) {
  model::CostProfile p = base.deployment.hardware->cost;
  run::set_overhead_terms(p, o.fit.fitted_s);
  std::string sources;
  for (const LoadedRun& r : *o.runs) sources += (sources.empty() ? "" : "; ") + r.path;
  auto& prov = p.provenance;
  prov.source = "overheads fitted to " + sources +
                (prov.source.empty() ? std::string() : "; kernels: " + prov.source);
  prov.kind = "calibrated";
  prov.date = date.empty() ? today_utc() : date;
  prov.kvsim_version = KVSIM_VERSION;
  prov.fitted_overheads = determined(o.fit);
  return p;
}

}  // namespace

std::string hardware_yaml_text(const std::string& name_or_path) {
  const std::string wanted = "configs/hardware/" + name_or_path + ".yaml";
  for (const auto& f : config::embedded_catalog_files()) {
    if (wanted == f.path) return std::string(f.data, f.size);
  }
  return read_file(name_or_path);
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void add_from_run_flags(CLI::App* command, FromRunFlags& f) {
  f.command = command;
  command->add_option("--from-run", f.runs,
                      "Fit the GPU's framework overheads to this real run (repeatable: fitted "
                      "jointly): vLLM benchmark JSON, requests.jsonl, DistServe .exp or aiperf "
                      "profile_export.jsonl");
  command->add_option("--rounds", f.rounds,
                      "--from-run: simulations of every run, at most (default 8)");
  command->add_option("--config", f.config,
                      "--from-run: scenario YAML of the deployment; flags given override it");
  add_replay_flags(command, f.replay);
  add_replay_client_flags(command, f.client);
  f.settings.form = SettingForm::kSingle;
  for (const config::Setting& s : config::settings()) {
    if (s.flag != "--model" && s.flag != "--gpu") add_setting_flag(command, f.settings, s);
  }
}

void check_no_from_run_flags(const FromRunFlags& f) {
  if (!f.settings.given.empty()) {
    throw flag_error(std::string(f.settings.given.front().first->flag),
                     "applies to --from-run only (the deployment replaying the run)");
  }
  if (!f.config.empty()) throw flag_error("--config", "applies to --from-run only");
  const ReplayClient& c = f.client;
  for (const auto& [given, flag] :
       {std::pair{!c.run_config.empty(), "--run-config"},
        std::pair{c.max_concurrency.has_value(), "--max-concurrency"},
        std::pair{c.prompt_pool.has_value(), "--prompt-pool"},
        std::pair{c.shared_prefix_prompts.has_value(), "--shared-prefix-prompts"},
        std::pair{c.shared_prefix_tokens.has_value(), "--shared-prefix-tokens"},
        std::pair{c.multi_turn_chat, "--multi-turn-chat"}}) {
    if (given) throw flag_error(flag, "applies to --from-run only (what the run's client did)");
  }
}

void run_from_run(const FromRunFlags& f, const FromRunOutput& o) {
  if (!o.format.empty()) report::parse_format(o.format);
  if (o.gpu.empty()) {
    throw flag_error("--gpu", "expected --gpu BASE: the GPU profile whose overheads are fitted");
  }
  if (f.rounds < 1 || f.rounds > 100)
    throw flag_error("--rounds", "expected 1..100, got " + std::to_string(f.rounds));
  std::vector<LoadedRun> runs;
  for (const std::string& path : f.runs) runs.push_back(load_run(path, f, o));
  std::vector<run::ReplayCase> cases;
  cases.reserve(runs.size());
  for (const LoadedRun& r : runs) cases.push_back({&r.scenario, &r.run});
  Outcome outcome;
  outcome.runs = &runs;
  outcome.rounds = f.rounds;
  outcome.model = runs.front().scenario.deployment.model.name;
  outcome.gpu = runs.front().scenario.deployment.hardware->name;
  outcome.fit = run::calibrate_overheads(cases, {f.rounds});
  if (!o.out.empty()) {
    const model::CostProfile p = fitted_profile(runs.front().scenario, outcome, o.date);
    write_file_atomically(o.out, config::replace_cost_model_section(hardware_yaml_text(o.gpu), p));
    outcome.profile_path = o.out;
  }
  report::OutputOptions out;
  out.format = o.format;
  out.out_path = o.report;
  report::emit(
      out, {[&] { return outcome_json(outcome); }, [&] { return outcome_table(outcome); }, nullptr},
      "calibrate");
}

}  // namespace kvsim::cli
