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

// The latencies the SLOs constrain, at their percentiles: {"ttft_p99": seconds, ...}.
Json observed_json(const plan::Probe& p, const sim::SloOptions& slo) {
  const sim::SloObservation observed = sim::observe(p.result.metrics);
  Json j = Json::object();
  for (const sim::LatencyTarget& t : sim::latency_targets(slo)) {
    if (t.active()) j[t.name()] = observed.latency_ns(t.metric, t.percentile) * 1e-9;
  }
  return j;
}

// The probe at the max rate: everything measured there.
Json at_max_json(const plan::Probe& p, const sim::SloOptions& slo) {
  Json j;
  j["rate_rps"] = p.rate_rps;
  j["attainment"] = p.attainment;
  const sim::Metrics& m = p.result.metrics;
  const double tpot_mean_s = m.tpot.count() > 0 ? m.tpot.mean() * 1e-9 : 0.0;
  j["per_user_tokens_per_s"] = tpot_mean_s > 0 ? 1.0 / tpot_mean_s : 0.0;
  j["observed"] = observed_json(p, slo);
  j["metrics"] = summary_json(p.result, slo);
  j["memory"] = memory_json(p.result);
  return j;
}

// The lowest failing probe: what broke, and by how much.
Json above_json(const plan::Probe& p, const sim::SloOptions& slo) {
  Json j;
  j["rate_rps"] = p.rate_rps;
  j["limiting"] = p.verdict.limiting;
  j["attainment"] = p.attainment;
  j["observed"] = observed_json(p, slo);
  j["saturation"] = sim::saturation_name(p.result.saturation);
  return j;
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

double num(const Json& j, const char* key, double fallback = 0.0) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string to_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A short column header for an axis path.
std::string axis_header(const std::string& path) {
  static const std::map<std::string, std::string> aliases = {{"tensor_parallel_size", "TP"},
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
    s += axis_header(path) + "=" + d["axes"].value(path, std::string("?"));
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
  if (status == "none_feasible") return "none: " + d["limiting_slo"].get<std::string>();
  if (status == "capped") return "search cap";
  return d["limiting_slo"].is_string() ? d["limiting_slo"].get<std::string>() : "-";
}

}  // namespace

Json deployment_record(const plan::DeploymentPlan& plan, const sim::SloOptions& slo) {
  Json r;
  r["status"] = std::string(plan::search_status_name(plan.search.status));
  r["error"] = nullptr;
  r["base_rate_rps"] = plan.base_rate_rps;
  r["num_requests"] = plan.num_requests;
  r["max_rate_rps"] = plan.search.max_rate_rps;
  r["limiting_slo"] = null_if_empty(plan.search.limiting_slo());
  r["fail_rate_rps"] = plan.search.above >= 0 ? Json(plan.search.fail_rate_rps()) : Json();
  r["converged"] = plan.search.converged;
  Json probes = Json::array();
  for (const auto& p : plan.search.probes) {
    probes.push_back(Json{{"rate_rps", p.rate_rps},
                          {"ok", p.verdict.ok()},
                          {"limiting", null_if_empty(p.verdict.limiting)}});
  }
  r["probes"] = std::move(probes);
  r["at_max"] = plan.at_max ? at_max_json(*plan.at_max, slo) : Json();
  r["above"] = plan.above ? above_json(*plan.above, slo) : Json();
  return r;
}

Json sizing_json(const plan::TargetSizing& sizing) {
  Json checks = Json::array();
  for (const auto& c : sizing.checks) {
    checks.push_back(
        Json{{"replicas", c.replicas}, {"ok", c.ok}, {"limiting", null_if_empty(c.limiting)}});
  }
  return Json{{"target_rate_rps", sizing.target_rate_rps},
              {"estimate", sizing.estimate},
              {"replicas_needed", sizing.replicas_needed},
              {"verified", sizing.replicas_needed > 0},
              {"checks", std::move(checks)}};
}

Json deployment_error_record(const std::string& message) {
  Json r;
  r["status"] = "does_not_fit";
  r["error"] = message;
  r["base_rate_rps"] = nullptr;
  r["num_requests"] = nullptr;
  r["max_rate_rps"] = 0.0;
  r["limiting_slo"] = nullptr;
  r["fail_rate_rps"] = nullptr;
  r["converged"] = true;
  r["probes"] = Json::array();
  r["at_max"] = nullptr;
  r["above"] = nullptr;
  return r;
}

Json plan_json(const PlanReportSettings& settings, const std::vector<PlanPoint>& points,
               const std::vector<Json>& records) {
  KVSIM_ASSERT(points.size() == records.size(), "plan_json: one record per point");
  Json doc = envelope("kvsim.plan/v1", "plan");

  // Axes that take more than one value over the grid, in first-seen order.
  std::vector<std::string> varying;
  {
    std::map<std::string, std::set<std::string>> values;
    std::vector<std::string> order;
    for (const auto& p : points) {
      for (const auto& a : p.axes) {
        if (values.find(a.path) == values.end()) order.push_back(a.path);
        values[a.path].insert(a.value);
      }
    }
    for (const auto& path : order) {
      if (values[path].size() > 1) varying.push_back(path);
    }
  }

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
  doc["settings"] = std::move(s);

  std::vector<plan::CapacityPoint> capacity(points.size());
  std::vector<plan::Sizing> sizing(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Json& r = records[i];
    const std::string status = r["status"];
    plan::CapacityPoint& c = capacity[i];
    c.feasible = (status == "found" || status == "capped") && num(r, "max_rate_rps") > 0;
    c.max_rate_rps = num(r, "max_rate_rps");
    c.replicas = points[i].replicas;
    c.gpus_per_replica = points[i].gpus_per_replica;
    c.gpu_cost_per_hour = points[i].gpu_price_per_hour;
    if (r["at_max"].is_object()) {
      c.output_tokens_per_s = num(r["at_max"]["metrics"], "output_tokens_per_s");
      c.per_user_tokens_per_s = num(r["at_max"], "per_user_tokens_per_s");
    }
    if (settings.target_rate_rps && r.contains("sizing") && r["sizing"].is_object()) {
      c.verified_replicas = r["sizing"]["replicas_needed"].get<std::int64_t>();
    }
    sizing[i] = plan::size_deployment(c, settings.target_rate_rps);
  }

  Json deployments = Json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PlanPoint& p = points[i];
    const Json& r = records[i];
    const plan::Sizing& z = sizing[i];
    Json d;
    d["index"] = i;
    Json axes = Json::object();
    for (const auto& a : p.axes) axes[a.path] = a.value;
    d["axes"] = std::move(axes);
    d["label"] = p.label;
    d["inputs"] = p.inputs;
    d["slo"] = slo_json(p.slo);
    d["status"] = r["status"];
    d["error"] = r["error"];
    d["base_rate_rps"] = r["base_rate_rps"];
    d["num_requests"] = r["num_requests"];
    d["max_rate_rps"] = r["max_rate_rps"];
    d["limiting_slo"] = r["limiting_slo"];
    d["fail_rate_rps"] = r["fail_rate_rps"];
    d["replicas"] = p.replicas;
    d["gpus_per_replica"] = p.gpus_per_replica;
    d["gpu_price_per_hour"] = p.gpu_price_per_hour;
    d["replicas_needed"] = z.replicas_needed;
    d["gpus"] = z.gpus;
    d["cost_per_hour"] = z.cost_per_hour;
    d["capacity_rps"] = z.capacity_rps;
    d["requests_per_gpu"] = z.requests_per_gpu;
    d["throughput_per_gpu"] = z.throughput_per_gpu;
    d["per_user_tokens_per_s"] = capacity[i].per_user_tokens_per_s;
    const bool at_max = r["at_max"].is_object();
    d["attainment"] = at_max ? r["at_max"]["attainment"] : Json();
    d["observed"] = at_max ? r["at_max"]["observed"] : Json();
    d["metrics"] = at_max ? r["at_max"]["metrics"] : Json();
    d["memory"] = at_max ? r["at_max"]["memory"] : Json();
    d["above"] = r["above"];
    // How many request lifetimes the arrivals span at the max rate: a short window (a burst the
    // deployment can absorb) can overstate what it sustains.
    if (at_max && capacity[i].feasible && r["num_requests"].is_number()) {
      const double span =
          static_cast<double>(r["num_requests"].get<std::int64_t>() - 1) / capacity[i].max_rate_rps;
      const double e2e = num(r["at_max"]["metrics"]["e2e_s"], "mean");
      d["arrival_span_s"] = span;
      d["steady_state_ratio"] = e2e > 0 ? Json(span / e2e) : Json();
    } else {
      d["arrival_span_s"] = nullptr;
      d["steady_state_ratio"] = nullptr;
    }
    d["search"] = Json{{"converged", r["converged"]}, {"probes", r["probes"]}};
    d["sizing"] = r.contains("sizing") ? r["sizing"] : Json();
    deployments.push_back(std::move(d));
  }
  doc["deployments"] = std::move(deployments);

  const bool have_target = settings.target_rate_rps.has_value();
  const std::vector<std::size_t> by_cost = plan::rank_by_cost(capacity, sizing, have_target);
  doc["ranking"] =
      Json{{"by_cost", by_cost},
           {"by_throughput_per_gpu", plan::rank_by_throughput_per_gpu(capacity, sizing)}};
  doc["pareto_front"] = plan::pareto_front(capacity, sizing);
  if (!by_cost.empty() && sizing[by_cost[0]].replicas_needed > 0) {
    const Json& d = doc["deployments"][by_cost[0]];
    doc["best"] = Json{{"index", by_cost[0]},
                       {"label", d["label"]},
                       {"axes", d["axes"]},
                       {"max_rate_rps", d["max_rate_rps"]},
                       {"replicas_needed", d["replicas_needed"]},
                       {"gpus", d["gpus"]},
                       {"cost_per_hour", d["cost_per_hour"]}};
  } else {
    doc["best"] = nullptr;
  }
  return doc;
}

std::string plan_table(const Json& plan) {
  const Json& settings = plan["settings"];
  const std::vector<std::string> varying = settings["axes"];
  const bool have_target = settings["target_rate_rps"].is_number();
  const Json& deployments = plan["deployments"];

  std::vector<std::string> headers = {"#"};
  if (varying.empty()) headers.push_back("deployment");
  for (const auto& path : varying) headers.push_back(axis_header(path));
  for (const char* h : {"max rps", "limit", have_target ? "replicas" : "replicas (sim)", "GPUs",
                        "$/h", "tok/s/GPU", "tok/s/user"}) {
    headers.emplace_back(h);
  }
  // The latencies the SLOs constrain, at their percentiles (TTFT and TPOT p99 without SLOs).
  std::vector<std::string> observed;
  for (const auto& d : deployments) {
    if (!d["observed"].is_object()) continue;
    for (auto it = d["observed"].begin(); it != d["observed"].end(); ++it) {
      if (std::find(observed.begin(), observed.end(), it.key()) == observed.end()) {
        observed.push_back(it.key());
      }
    }
  }
  for (const auto& name : observed) headers.push_back(latency_header(name));
  if (observed.empty()) {
    headers.emplace_back("TTFT p99");
    headers.emplace_back("TPOT p99");
  }
  Table table(headers);
  std::string title = "kvsim plan: " + std::to_string(deployments.size()) + " deployment" +
                      (deployments.size() == 1 ? "" : "s");
  if (have_target) title += ", sized for " + rate_text(settings["target_rate_rps"]) + " req/s";
  title += ", best first (";
  title += have_target ? "cost per hour" : "cost per req/s";
  title += ")";
  table.set_title(title);
  table.set_align(0, Align::kRight);

  std::size_t rank = 0;
  for (const auto& index : plan["ranking"]["by_cost"]) {
    const Json& d = deployments[index.get<std::size_t>()];
    ++rank;
    std::vector<std::string> row = {std::to_string(rank)};
    if (varying.empty()) row.push_back(d["label"]);
    for (const auto& path : varying) row.push_back(d["axes"].value(path, std::string("?")));
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
    table.add_row(std::move(row));
  }
  std::string out = table.render();

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
  if (best.is_object()) {
    const Json& d = deployments[best["index"].get<std::size_t>()];
    const std::string name =
        varying.empty() ? d["label"].get<std::string>()
                        : axes_text(d, varying) + " (" + d["label"].get<std::string>() + ")";
    out += "Best: " + name + ": " + with_commas(d["replicas_needed"].get<std::int64_t>()) +
           " replica" + (d["replicas_needed"] == 1 ? "" : "s") + ", " +
           with_commas(d["gpus"].get<std::int64_t>()) + " GPUs, $" + fixed(d["cost_per_hour"], 2) +
           "/h, up to " + rate_text(d["capacity_rps"]) + " req/s\n";
  } else {
    out += "Best: no deployment meets the SLOs\n";
  }
  return out;
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
    for (const auto& path : varying) row.push_back(d["axes"].value(path, std::string()));
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
