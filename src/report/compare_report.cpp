#include "report/compare_report.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "common/format.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

double per_second(double count, TimeNs duration_ns) {
  return duration_ns > 0 ? count / ns_to_seconds(duration_ns) : 0.0;
}

struct Row {
  std::string name;
  std::function<double(const sim::SimResult&)> value;
  std::function<std::string(double)> format;
};

// " (1.23x)" against the first run; nothing when the base shows as zero in the row's own
// format (a ratio to a rounding residue, "43962.67x", says nothing) or is not finite.
std::string ratio(double value, double base, const std::function<std::string(double)>& format) {
  if (base == 0.0 || !std::isfinite(base) || !std::isfinite(value)) return "";
  if (format(base) == format(0.0) || format(base) == format(-0.0)) return "";
  return " (" + fixed(value / base, 2) + "x)";
}

std::string pct(double v) {
  return percent(v);
}
std::function<std::string(double)> num(int decimals) {
  return [decimals](double v) { return fixed(v, decimals); };
}
std::string ms(double ns) {
  return fixed(ns * 1e-6, 1);
}

std::vector<Row> memory_rows() {
  return {
      {"KV token states", [](const sim::SimResult& r) { return r.fraction.token_states; }, pct},
      {"KV reservation", [](const sim::SimResult& r) { return r.fraction.reservation; }, pct},
      {"KV internal fragmentation",
       [](const sim::SimResult& r) { return r.fraction.internal_fragmentation; }, pct},
      {"KV external fragmentation",
       [](const sim::SimResult& r) { return r.fraction.external_fragmentation; }, pct},
      {"KV free", [](const sim::SimResult& r) { return r.fraction.free; }, pct},
      {"peak used (GB per GPU)",
       [](const sim::SimResult& r) { return static_cast<double>(r.peak_used_bytes) / 1e9; },
       num(2)},
  };
}

// With KV offload in any run: the prefix-cache hit rate per tier.
std::vector<Row> offload_rows() {
  const auto rate = [](std::int64_t tokens, const sim::SimResult& r) {
    return r.prefix_query_tokens > 0
               ? static_cast<double>(tokens) / static_cast<double>(r.prefix_query_tokens)
               : 0.0;
  };
  return {
      {"prefix-cache hit rate: GPU",
       [rate](const sim::SimResult& r) { return rate(r.prefix_hit_tokens, r); }, pct},
      {"prefix-cache hit rate: CPU tier",
       [rate](const sim::SimResult& r) { return rate(r.prefix_cpu_hit_tokens, r); }, pct},
  };
}

std::vector<Row> throughput_rows() {
  return {
      {"completed",
       [](const sim::SimResult& r) { return static_cast<double>(r.metrics.completed); }, num(0)},
      {"rejected",
       [](const sim::SimResult& r) { return static_cast<double>(r.metrics.rejected()); }, num(0)},
      {"unfinished (at the time limit)",
       [](const sim::SimResult& r) { return static_cast<double>(r.requests_unfinished); }, num(0)},
      {"throughput (req/s)",
       [](const sim::SimResult& r) {
         return per_second(static_cast<double>(r.metrics.completed), r.duration_ns);
       },
       num(3)},
      {"output tokens/s",
       [](const sim::SimResult& r) {
         return per_second(static_cast<double>(r.metrics.output_tokens), r.duration_ns);
       },
       num(1)},
      {"mean running batch", [](const sim::SimResult& r) { return r.mean_running; }, num(1)},
      {"preemptions",
       [](const sim::SimResult& r) {
         return static_cast<double>(r.metrics.preemptions_recompute + r.metrics.preemptions_swap);
       },
       num(0)},
  };
}

// p50 and p99 of each latency histogram, in ms.
std::vector<Row> latency_rows() {
  std::vector<Row> latency_rows;
  const std::pair<const char*, const sim::LatencyHistogram sim::Metrics::*> hs[] = {
      {"TTFT", &sim::Metrics::ttft},
      {"TPOT", &sim::Metrics::tpot},
      {"E2E", &sim::Metrics::e2e},
      {"queueing", &sim::Metrics::queue},
      {"E2E per output token", &sim::Metrics::normalized}};
  for (const auto& [name, member] : hs) {
    for (double q : {50.0, 99.0}) {
      latency_rows.push_back({std::string(name) + " p" + fixed(q, 0) + " (ms)",
                              [member = member, q](const sim::SimResult& r) {
                                return (r.metrics.*member).percentile(q);
                              },
                              ms});
    }
  }
  return latency_rows;
}

// One row per metric: each run's value, with its ratio to the first run.
void add_rows(Table& t, const std::vector<CompareRun>& runs, const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    std::vector<std::string> cells = {row.name};
    const double base = runs.empty() ? 0.0 : row.value(runs[0].result);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double v = row.value(runs[i].result);
      cells.push_back(row.format(v) + (i == 0 ? "" : ratio(v, base, row.format)));
    }
    t.add_row(cells);
  }
}

// Attainment, goodput and each target's verdict per run, when the runs had SLOs.
void add_slo_rows(Table& t, const std::vector<CompareRun>& runs, const sim::SloOptions& slo) {
  std::vector<Json> summaries;
  summaries.reserve(runs.size());
  for (const CompareRun& r : runs) summaries.push_back(summary_json(r.result, slo));
  if (summaries.empty() || !summaries[0]["slo"].is_object()) return;
  const Json& target = summaries[0]["slo"];
  const std::string p = "p" + fixed(target["percentile"].get<double>(), 0);
  std::vector<std::string> attainment = {"SLO attainment"}, goodput = {"goodput (req/s)"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double a = summaries[i]["slo_attainment"].get<double>();
    const double g = summaries[i]["goodput_rps"].get<double>();
    attainment.push_back(percent(a, 1));
    goodput.push_back(fixed(g, 3) +
                      (i == 0 ? "" : ratio(g, summaries[0]["goodput_rps"].get<double>(), num(3))));
  }
  t.add_row(attainment);
  t.add_row(goodput);
  for (const auto& [name, key] :
       {std::pair{"TTFT", "ttft"}, std::pair{"TPOT", "tpot"}, std::pair{"E2E", "e2e"}}) {
    const Json& limit = target[std::string(key) + "_s"];
    if (!limit.is_number()) continue;
    std::vector<std::string> row = {name + (" " + p) +
                                    " <= " + fixed(limit.get<double>() * 1e3, 0) + " ms"};
    for (const Json& s : summaries) {
      const double v = s["slo"][std::string(key) + "_at_percentile_s"].get<double>();
      row.push_back(std::string(v <= limit.get<double>() ? "met" : "MISSED") + " (" +
                    fixed(v * 1e3, 1) + ")");
    }
    t.add_row(row);
  }
  std::vector<std::string> met = {"all SLOs met"};
  for (const Json& s : summaries) met.push_back(s["slo"]["met"].get<bool>() ? "yes" : "NO");
  t.add_row(met);
  t.add_separator();
}

}  // namespace

Json compare_json(const std::vector<CompareRun>& runs, const sim::SloOptions& slo) {
  Json j = envelope("kvsim.compare/v1", "compare");
  Json list = Json::array();
  for (const CompareRun& r : runs) {
    Json one = sim_report_json(r.inputs, r.result, slo, "compare");
    one["label"] = r.label;
    list.push_back(std::move(one));
  }
  j["runs"] = std::move(list);
  return j;
}

std::string compare_table(const std::vector<CompareRun>& runs, const sim::SloOptions& slo) {
  std::vector<std::string> headers = {"metric"};
  for (const CompareRun& r : runs) headers.push_back(r.label);
  Table t(headers);
  t.set_title("kvsim compare" + (runs.empty() ? std::string()
                                              : ": " + runs[0].inputs.model_label + ", " +
                                                    runs[0].inputs.workload_label));
  add_rows(t, runs, memory_rows());
  if (std::any_of(runs.begin(), runs.end(),
                  [](const CompareRun& r) { return r.result.offload_enabled; })) {
    add_rows(t, runs, offload_rows());
  }
  t.add_separator();
  add_rows(t, runs, throughput_rows());
  t.add_separator();
  add_rows(t, runs, latency_rows());
  t.add_separator();
  add_slo_rows(t, runs, slo);
  std::vector<std::string> verdict = {"saturation"};
  for (const CompareRun& r : runs) verdict.push_back(sim::saturation_name(r.result.saturation));
  t.add_row(verdict);
  return t.render();
}

std::string compare_csv(const std::vector<CompareRun>& runs, const sim::SloOptions& slo) {
  std::vector<std::string> header = {"label"};
  for (auto& h : sim_csv_input_header()) header.push_back(h);
  for (auto& h : sim_csv_header()) header.push_back(h);
  std::string out = csv_line(header);
  for (const CompareRun& r : runs) {
    std::vector<std::string> row = {r.label};
    for (auto& c : sim_csv_input_row(r.inputs)) row.push_back(c);
    for (auto& c : sim_csv_row(r.result, slo)) row.push_back(c);
    out += csv_line(row);
  }
  return out;
}

}  // namespace kvsim::report
