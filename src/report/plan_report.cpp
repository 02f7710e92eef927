#include "report/plan_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/assert.h"
#include "common/format.h"
#include "plan/sizing.h"
#include "report/sim_report.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

// Below this many mean request lifetimes in the arrival window, the table adds a note.
constexpr double kSteadyStateRatio = 10.0;

Json null_if_empty(const std::string& s) {
  return s.empty() ? Json() : Json(s);
}

Json slo_json(const sim::SloOptions& slo) {
  Json j = Json::object();
  for (const sim::LatencyTarget& t : sim::latency_targets(slo)) {
    j[t.metric_name] =
        t.active() ? Json{{"target_s", ns_to_seconds(t.target_ns)}, {"percentile", t.percentile}}
                   : Json();
  }
  j["attainment"] = slo.attainment;
  return j;
}

std::string to_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An axis value as text: a string as it is, a number or boolean as JSON writes it.
std::string axis_text(const Json& axes, const std::string& path, const char* missing) {
  if (!axes.is_object() || !axes.contains(path)) return missing;
  const Json& v = axes[path];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A short column header for an axis path.
std::string axis_header(const std::string& path) {
  static const std::map<std::string, std::string> aliases = {{"tensor_parallel_size", "TP"},
                                                             {"pipeline_parallel_size", "PP"},
                                                             {"data_parallel_size", "DP"},
                                                             {"enable_expert_parallel", "EP"},
                                                             {"serving.replicas", "replicas"},
                                                             {"kv_cache_dtype", "KV dtype"},
                                                             {"block_size", "block"},
                                                             {"gpu_memory_utilization", "mem util"},
                                                             {"serving.max_num_seqs", "max seqs"},
                                                             {"serving.scheduler", "scheduler"},
                                                             {"serving.allocator", "allocator"},
                                                             {"max_model_len", "max len"}};
  const auto it = aliases.find(path);
  if (it != aliases.end()) return it->second;
  const std::size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string axes_text(const Json& d, const std::vector<std::string>& varying) {
  std::string s;
  for (const auto& path : varying) {
    if (!s.empty()) s += " ";
    s += axis_header(path) + "=" + axis_text(d["axes"], path, "?");
  }
  return s.empty() ? d["label"].get<std::string>() : s;
}

// "ttft_p95" → "TTFT p95".
std::string latency_header(const std::string& name) {
  const std::size_t us = name.find('_');
  return to_upper(name.substr(0, us)) + (us == std::string::npos ? "" : " " + name.substr(us + 1));
}

std::string rate_text(double rps) {
  return rps >= 100 ? fixed(rps, 1) : fixed(rps, 2);
}

std::string seconds_at(const Json& metrics, const char* latency, const char* p) {
  if (!metrics.is_object() || !metrics.contains(latency)) return "-";
  return human_seconds(metrics[latency].value(p, 0.0));
}

std::string limit_text(const Json& d) {
  const std::string status = d["status"];
  if (status == "does_not_fit") return "does not fit";
  if (status == "not_modelled") return "not modelled";
  if (status == "none_feasible") return "none: " + d["limiting_slo"].get<std::string>();
  if (status == "capped") return "search cap";
  return d["limiting_slo"].is_string() ? d["limiting_slo"].get<std::string>() : "-";
}

}  // namespace

plan::DeploymentRecord deployment_record(const plan::DeploymentPlan& plan,
                                         const sim::SloOptions& slo) {
  plan::DeploymentRecord r = plan::make_record(plan, slo);
  if (plan.at_max) {
    r.at_max->set_metrics(summary_json(plan.at_max->result, slo));
    r.at_max->memory = memory_json(plan.at_max->result);
  }
  return r;
}

namespace {

// Axes that take more than one value over the grid, in first-seen order.
std::vector<std::string> varying_axes(const std::vector<PlanPoint>& points) {
  std::map<std::string, std::set<std::string>> values;
  std::vector<std::string> order;
  for (const auto& p : points) {
    for (const auto& a : p.axes) {
      if (values.find(a.path) == values.end()) order.push_back(a.path);
      values[a.path].insert(a.value);
    }
  }
  std::vector<std::string> varying;
  for (const auto& path : order) {
    if (values[path].size() > 1) varying.push_back(path);
  }
  return varying;
}

Json settings_json(const PlanReportSettings& settings, const std::vector<std::string>& varying) {
  Json s;
  s["source"] = null_if_empty(settings.source);
  s["target_rate_rps"] = settings.target_rate_rps ? Json(*settings.target_rate_rps) : Json();
  const plan::SearchOptions& o = settings.search;
  s["search"] = Json{{"start_rate_rps", o.start_rate_rps > 0 ? Json(o.start_rate_rps) : Json()},
                     {"growth", o.growth},
                     {"tolerance", o.rel_tolerance},
                     {"min_rate_rps", o.min_rate_rps},
                     {"max_rate_rps", o.max_rate_rps},
                     {"max_probes", o.max_probes}};
  Json prices = Json::object();
  for (const auto& [gpu, price] : settings.gpu_price_overrides) prices[gpu] = price;
  s["gpu_price_per_hour"] = std::move(prices);
  s["axes"] = varying;
  return s;
}

template <typename T>
Json null_or(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

// One deployment of the document: the point, its record and its sizing.
Json deployment_json(std::size_t index, const PlanPoint& p, const plan::DeploymentRecord& r,
                     const plan::CapacityPoint& capacity, const plan::Sizing& z) {
  const Json record = plan::to_json(r);
  Json d;
  d["index"] = index;
  Json axes = Json::object();
  for (const auto& a : p.axes) axes[a.path] = plan::typed_axis_value(a);
  d["axes"] = std::move(axes);
  d["label"] = p.label;
  d["inputs"] = p.inputs;
  d["slo"] = slo_json(p.slo);
  for (const char* key : {"status", "error", "base_rate_rps", "num_requests", "max_rate_rps",
                          "limiting_slo", "fail_rate_rps"}) {
    d[key] = record[key];
  }
  d["replicas"] = p.replicas;
  d["gpus_per_replica"] = p.gpus_per_replica;
  d["gpu_price_per_hour"] = p.gpu_price_per_hour;
  d["replicas_needed"] = z.replicas_needed;
  d["gpus"] = z.gpus;
  d["cost_per_hour"] = z.cost_per_hour;
  d["capacity_rps"] = z.capacity_rps;
  d["requests_per_gpu"] = z.requests_per_gpu;
  d["throughput_per_gpu"] = z.throughput_per_gpu;
  d["per_user_tokens_per_s"] = capacity.per_user_tokens_per_s;
  const Json& at_max = record["at_max"];
  for (const char* key : {"attainment", "observed", "metrics", "memory"}) {
    d[key] = at_max.is_object() ? at_max[key] : Json();
  }
  d["above"] = record["above"];
  const std::optional<plan::SteadyState> steady = plan::steady_state(r, capacity);
  d["arrival_span_s"] = steady ? Json(steady->arrival_span_s) : Json();
  d["steady_state_ratio"] = steady ? null_or(steady->ratio) : Json();
  d["search"] = Json{{"converged", r.converged}, {"probes", record["probes"]}};
  d["sizing"] = r.sizing ? plan::to_json(*r.sizing) : Json();
  return d;
}

Json best_json(const Json& deployments, std::optional<std::size_t> best) {
  if (!best) return nullptr;
  const Json& d = deployments[*best];
  return Json{{"index", *best},
              {"label", d["label"]},
              {"axes", d["axes"]},
              {"max_rate_rps", d["max_rate_rps"]},
              {"replicas_needed", d["replicas_needed"]},
              {"gpus", d["gpus"]},
              {"cost_per_hour", d["cost_per_hour"]}};
}

}  // namespace

Json plan_json(const PlanReportSettings& settings, const std::vector<PlanPoint>& points,
               const std::vector<plan::DeploymentRecord>& records) {
  KVSIM_ASSERT(points.size() == records.size(), "plan_json: one record per point");
  Json doc = envelope("kvsim.plan/v1", "plan");
  doc["settings"] = settings_json(settings, varying_axes(points));

  std::vector<plan::DeploymentCost> costs;
  costs.reserve(points.size());
  for (const PlanPoint& p : points) {
    costs.push_back({p.replicas, p.gpus_per_replica, p.gpu_price_per_hour});
  }
  const plan::PlanOutcome outcome = plan::plan_outcome(costs, records, settings.target_rate_rps);
  Json deployments = Json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    deployments.push_back(
        deployment_json(i, points[i], records[i], outcome.capacity[i], outcome.sizing[i]));
  }
  doc["deployments"] = std::move(deployments);
  doc["ranking"] =
      Json{{"by_cost", outcome.by_cost}, {"by_throughput_per_gpu", outcome.by_throughput_per_gpu}};
  doc["pareto_front"] = outcome.pareto_front;
  doc["best"] = best_json(doc["deployments"], outcome.best);
  return doc;
}

namespace {

// The latencies the SLOs constrain over all deployments, in first-seen order ("ttft_p99", ...).
std::vector<std::string> observed_names(const Json& deployments) {
  std::vector<std::string> observed;
  for (const auto& d : deployments) {
    if (!d["observed"].is_object()) continue;
    for (auto it = d["observed"].begin(); it != d["observed"].end(); ++it) {
      if (std::find(observed.begin(), observed.end(), it.key()) == observed.end()) {
        observed.push_back(it.key());
      }
    }
  }
  return observed;
}

std::vector<std::string> table_headers(const std::vector<std::string>& varying, bool have_target,
                                       const std::vector<std::string>& observed) {
  std::vector<std::string> headers = {"#"};
  if (varying.empty()) headers.push_back("deployment");
  for (const auto& path : varying) headers.push_back(axis_header(path));
  for (const char* h : {"max rps", "limit", have_target ? "replicas" : "replicas (sim)", "GPUs",
                        "$/h", "tok/s/GPU", "tok/s/user"}) {
    headers.emplace_back(h);
  }
  // The latencies the SLOs constrain, at their percentiles (TTFT and TPOT p99 without SLOs).
  for (const auto& name : observed) headers.push_back(latency_header(name));
  if (observed.empty()) {
    headers.emplace_back("TTFT p99");
    headers.emplace_back("TPOT p99");
  }
  return headers;
}

std::string table_title(const Json& settings, std::size_t num_deployments) {
  const bool have_target = settings["target_rate_rps"].is_number();
  std::string title = "kvsim plan: " + std::to_string(num_deployments) + " deployment" +
                      (num_deployments == 1 ? "" : "s");
  if (have_target) title += ", sized for " + rate_text(settings["target_rate_rps"]) + " req/s";
  title += ", best first (";
  title += have_target ? "cost per hour" : "cost per req/s";
  title += ")";
  return title;
}

std::vector<std::string> table_row(std::size_t rank, const Json& d,
                                   const std::vector<std::string>& varying,
                                   const std::vector<std::string>& observed) {
  std::vector<std::string> row = {std::to_string(rank)};
  if (varying.empty()) row.push_back(d["label"]);
  for (const auto& path : varying) row.push_back(axis_text(d["axes"], path, "?"));
  const bool feasible = d["replicas_needed"].get<std::int64_t>() > 0;
  row.push_back(feasible ? rate_text(d["max_rate_rps"]) : "-");
  row.push_back(limit_text(d));
  row.push_back(feasible ? with_commas(d["replicas_needed"].get<std::int64_t>()) : "-");
  row.push_back(feasible ? with_commas(d["gpus"].get<std::int64_t>()) : "-");
  row.push_back(feasible ? fixed(d["cost_per_hour"], 2) : "-");
  row.push_back(feasible ? fixed(d["throughput_per_gpu"], 1) : "-");
  row.push_back(feasible ? fixed(d["per_user_tokens_per_s"], 1) : "-");
  for (const auto& name : observed) {
    const Json& o = d["observed"];
    row.push_back(o.is_object() && o.contains(name) ? human_seconds(o[name].get<double>()) : "-");
  }
  if (observed.empty()) {
    row.push_back(seconds_at(d["metrics"], "ttft_s", "p99"));
    row.push_back(seconds_at(d["metrics"], "tpot_s", "p99"));
  }
  return row;
}

// The lines under the table: the Pareto front, a short-window note, the best deployment.
std::string table_notes(const Json& plan, const std::vector<std::string>& varying) {
  const Json& deployments = plan["deployments"];
  std::string out;
  const Json& front = plan["pareto_front"];
  if (!front.empty()) {
    out += "Pareto front (output tok/s per GPU vs tok/s per user):";
    for (const auto& index : front) {
      const Json& d = deployments[index.get<std::size_t>()];
      out += "\n  " + axes_text(d, varying) + ": " + fixed(d["throughput_per_gpu"], 1) +
             " tok/s/GPU at " + fixed(d["per_user_tokens_per_s"], 1) + " tok/s/user";
    }
    out += "\n";
  }
  std::int64_t short_windows = 0;
  for (const auto& d : deployments) {
    if (d["steady_state_ratio"].is_number() &&
        d["steady_state_ratio"].get<double>() < kSteadyStateRatio) {
      ++short_windows;
    }
  }
  if (short_windows > 0) {
    out += "Note: for " + std::to_string(short_windows) + " deployment" +
           (short_windows == 1 ? "" : "s") + " the workload arrives within fewer than " +
           fixed(kSteadyStateRatio, 0) +
           " mean request lifetimes at the max rate (steady_state_ratio), so the max rate may "
           "overstate what it sustains; a longer workload (more requests) tells.\n";
  }
  const Json& best = plan["best"];
  if (!best.is_object()) return out + "Best: no deployment meets the SLOs\n";
  const Json& d = deployments[best["index"].get<std::size_t>()];
  const std::string name = varying.empty()
                               ? d["label"].get<std::string>()
                               : axes_text(d, varying) + " (" + d["label"].get<std::string>() + ")";
  return out + "Best: " + name + ": " + with_commas(d["replicas_needed"].get<std::int64_t>()) +
         " replica" + (d["replicas_needed"] == 1 ? "" : "s") + ", " +
         with_commas(d["gpus"].get<std::int64_t>()) + " GPUs, $" + fixed(d["cost_per_hour"], 2) +
         "/h, up to " + rate_text(d["capacity_rps"]) + " req/s\n";
}

}  // namespace

std::string plan_table(const Json& plan) {
  const Json& settings = plan["settings"];
  const std::vector<std::string> varying = settings["axes"];
  const Json& deployments = plan["deployments"];
  const std::vector<std::string> observed = observed_names(deployments);
  Table table(table_headers(varying, settings["target_rate_rps"].is_number(), observed));
  table.set_title(table_title(settings, deployments.size()));
  table.set_align(0, Align::kRight);
  std::size_t rank = 0;
  for (const auto& index : plan["ranking"]["by_cost"]) {
    table.add_row(table_row(++rank, deployments[index.get<std::size_t>()], varying, observed));
  }
  return table.render() + table_notes(plan, varying);
}

std::string plan_csv(const Json& plan) {
  const std::vector<std::string> varying = plan["settings"]["axes"];
  std::vector<std::string> headers = {"index", "rank_by_cost"};
  for (const auto& path : varying) headers.push_back(path);
  // Columns copied as they are from each deployment record, then the derived ones.
  static constexpr const char* kRecordKeys[] = {"label",
                                                "status",
                                                "max_rate_rps",
                                                "limiting_slo",
                                                "fail_rate_rps",
                                                "replicas",
                                                "gpus_per_replica",
                                                "replicas_needed",
                                                "gpus",
                                                "gpu_price_per_hour",
                                                "cost_per_hour",
                                                "capacity_rps",
                                                "requests_per_gpu",
                                                "throughput_per_gpu",
                                                "per_user_tokens_per_s"};
  for (const char* h : kRecordKeys) headers.emplace_back(h);
  for (const char* h : {"ttft_p99_s", "tpot_p99_s", "e2e_p99_s", "attainment", "pareto"}) {
    headers.emplace_back(h);
  }
  const Json& deployments = plan["deployments"];
  std::vector<std::size_t> rank(deployments.size());
  {
    std::size_t r = 0;
    for (const auto& index : plan["ranking"]["by_cost"]) rank[index.get<std::size_t>()] = ++r;
  }
  std::set<std::size_t> front;
  for (const auto& index : plan["pareto_front"]) front.insert(index.get<std::size_t>());
  auto text = [](const Json& v) {
    if (v.is_null()) return std::string();
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
  };
  auto latency = [&](const Json& d, const char* name) {
    const Json& m = d["metrics"];
    if (!m.is_object() || !m.contains(name) || !m[name].is_object()) return std::string();
    return text(m[name].value("p99", Json()));
  };
  std::string out = csv_line(headers);
  for (std::size_t i = 0; i < deployments.size(); ++i) {
    const Json& d = deployments[i];
    std::vector<std::string> row = {std::to_string(i), std::to_string(rank[i])};
    for (const auto& path : varying) row.push_back(axis_text(d["axes"], path, ""));
    for (const char* key : kRecordKeys) row.push_back(text(d[key]));
    row.push_back(latency(d, "ttft_s"));
    row.push_back(latency(d, "tpot_s"));
    row.push_back(latency(d, "e2e_s"));
    row.push_back(text(d["attainment"]));
    row.push_back(front.count(i) ? "1" : "0");
    out += csv_line(row);
  }
  return out;
}

}  // namespace kvsim::report
