#include "plan/plan_record.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/assert.h"
#include "common/error.h"
#include "config/settings.h"
#include "sim/simulator.h"

namespace kvsim::plan {
namespace {

RecordJson null_if_empty(const std::string& s) {
  return s.empty() ? RecordJson() : RecordJson(s);
}
template <typename T>
RecordJson null_or(const std::optional<T>& v) {
  return v ? RecordJson(*v) : RecordJson();
}

// Reads a record's fields, naming the record in errors.
class Reader {
 public:
  explicit Reader(std::string what) : what_(std::move(what)) {}
  const RecordJson& at(const RecordJson& j, const char* key) const {
    if (!j.is_object() || !j.contains(key)) fail(std::string("missing '") + key + "'");
    return j[key];
  }
  double number(const RecordJson& j, const char* key) const {
    const RecordJson& v = at(j, key);
    if (!v.is_number()) fail(std::string("'") + key + "' is not a number");
    return v.get<double>();
  }
  std::int64_t integer(const RecordJson& j, const char* key) const {
    const RecordJson& v = at(j, key);
    if (!v.is_number_integer()) fail(std::string("'") + key + "' is not an integer");
    return v.get<std::int64_t>();
  }
  bool boolean(const RecordJson& j, const char* key) const {
    const RecordJson& v = at(j, key);
    if (!v.is_boolean()) fail(std::string("'") + key + "' is not a boolean");
    return v.get<bool>();
  }
  std::string text(const RecordJson& j, const char* key) const {  // null reads as ""
    const RecordJson& v = at(j, key);
    if (v.is_null()) return {};
    if (!v.is_string()) fail(std::string("'") + key + "' is not a string");
    return v.get<std::string>();
  }
  std::optional<std::string> optional_text(const RecordJson& j, const char* key) const {
    if (at(j, key).is_null()) return std::nullopt;
    return text(j, key);
  }
  std::optional<double> optional_number(const RecordJson& j, const char* key) const {
    if (at(j, key).is_null()) return std::nullopt;
    return number(j, key);
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error({"", 0, 0, what_}, "not a deployment record of this kvsim version: " + message);
  }

 private:
  std::string what_;
};

AtMaxRecord at_max_from_json(const RecordJson& j, const Reader& r) {
  AtMaxRecord a;
  a.rate_rps = r.number(j, "rate_rps");
  a.attainment = r.number(j, "attainment");
  a.per_user_tokens_per_s = r.number(j, "per_user_tokens_per_s");
  a.observed = r.at(j, "observed");
  a.memory = r.at(j, "memory");
  a.set_metrics(r.at(j, "metrics"));
  return a;
}

AboveRecord above_from_json(const RecordJson& j, const Reader& r) {
  AboveRecord a;
  a.rate_rps = r.number(j, "rate_rps");
  a.limiting = r.text(j, "limiting");
  a.attainment = r.number(j, "attainment");
  a.observed = r.at(j, "observed");
  a.saturation = r.text(j, "saturation");
  return a;
}

TargetSizing sizing_from_json(const RecordJson& j, const Reader& r) {
  TargetSizing s;
  s.target_rate_rps = r.number(j, "target_rate_rps");
  s.estimate = r.integer(j, "estimate");
  s.replicas_needed = r.integer(j, "replicas_needed");
  for (const RecordJson& c : r.at(j, "checks")) {
    s.checks.push_back({r.integer(c, "replicas"), r.boolean(c, "ok"), r.text(c, "limiting")});
  }
  return s;
}

// A YAML scalar's value when it reads as a number or boolean (YAML 1.2 core schema), else null.
RecordJson scalar_value(const std::string& text, bool integer_only = false) {
  std::int64_t i = 0;
  const char* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, i); ec == std::errc() && p == end) {
    return RecordJson(i);
  }
  if (integer_only || text.empty()) return RecordJson();
  char* stop = nullptr;
  const double d = std::strtod(text.c_str(), &stop);
  const bool numeric = text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (numeric && stop == text.c_str() + text.size() && std::isfinite(d)) return RecordJson(d);
  if (text == "true") return RecordJson(true);
  if (text == "false") return RecordJson(false);
  return RecordJson();
}

}  // namespace

void AtMaxRecord::set_metrics(RecordJson summary) {
  metrics = std::move(summary);
  auto number = [](const RecordJson& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  output_tokens_per_s = number(metrics, "output_tokens_per_s");
  mean_e2e_s =
      metrics.is_object() && metrics.contains("e2e_s") ? number(metrics["e2e_s"], "mean") : 0.0;
}

RecordJson observed_json(const Probe& probe, const sim::SloOptions& slo) {
  const sim::SloObservation observed = sim::observe(probe.result.metrics);
  RecordJson j = RecordJson::object();
  for (const sim::LatencyTarget& t : sim::latency_targets(slo)) {
    if (t.active()) j[t.name()] = observed.latency_ns(t.metric, t.percentile) * 1e-9;
  }
  return j;
}

DeploymentRecord make_record(const DeploymentPlan& plan, const sim::SloOptions& slo) {
  DeploymentRecord r;
  r.status = std::string(search_status_name(plan.search.status));
  r.base_rate_rps = plan.base_rate_rps;
  r.num_requests = plan.num_requests;
  r.max_rate_rps = plan.search.max_rate_rps;
  const std::string limiting = plan.search.limiting_slo();
  if (!limiting.empty()) r.limiting_slo = limiting;
  if (plan.search.above >= 0) r.fail_rate_rps = plan.search.fail_rate_rps();
  r.converged = plan.search.converged;
  for (const auto& p : plan.search.probes) {
    r.probes.push_back({p.rate_rps, p.verdict.ok(), p.verdict.limiting});
  }
  if (plan.at_max) {
    const Probe& p = *plan.at_max;
    AtMaxRecord& a = r.at_max.emplace();
    a.rate_rps = p.rate_rps;
    a.attainment = p.attainment;
    const sim::Metrics& m = p.result.metrics;
    const double tpot_mean_s = m.tpot.count() > 0 ? m.tpot.mean() * 1e-9 : 0.0;
    a.per_user_tokens_per_s = tpot_mean_s > 0 ? 1.0 / tpot_mean_s : 0.0;
    a.observed = observed_json(p, slo);
  }
  if (plan.above) {
    const Probe& p = *plan.above;
    AboveRecord& a = r.above.emplace();
    a.rate_rps = p.rate_rps;
    a.limiting = p.verdict.limiting;
    a.attainment = p.attainment;
    a.observed = observed_json(p, slo);
    a.saturation = sim::saturation_name(p.result.saturation);
  }
  return r;
}

DeploymentRecord error_record(const std::string& message, const std::string& status) {
  DeploymentRecord r;
  r.status = status;
  r.error = message;
  return r;
}

RecordJson to_json(const TargetSizing& sizing) {
  RecordJson checks = RecordJson::array();
  for (const auto& c : sizing.checks) {
    checks.push_back(RecordJson{
        {"replicas", c.replicas}, {"ok", c.ok}, {"limiting", null_if_empty(c.limiting)}});
  }
  return RecordJson{{"target_rate_rps", sizing.target_rate_rps},
                    {"estimate", sizing.estimate},
                    {"replicas_needed", sizing.replicas_needed},
                    {"verified", sizing.replicas_needed > 0},
                    {"checks", std::move(checks)}};
}

RecordJson to_json(const DeploymentRecord& record) {
  RecordJson r;
  r["status"] = record.status;
  r["error"] = null_or(record.error);
  r["base_rate_rps"] = null_or(record.base_rate_rps);
  r["num_requests"] = null_or(record.num_requests);
  r["max_rate_rps"] = record.max_rate_rps;
  r["limiting_slo"] = null_or(record.limiting_slo);
  r["fail_rate_rps"] = null_or(record.fail_rate_rps);
  r["converged"] = record.converged;
  RecordJson probes = RecordJson::array();
  for (const auto& p : record.probes) {
    probes.push_back(RecordJson{
        {"rate_rps", p.rate_rps}, {"ok", p.ok}, {"limiting", null_if_empty(p.limiting)}});
  }
  r["probes"] = std::move(probes);
  if (record.at_max) {
    const AtMaxRecord& a = *record.at_max;
    r["at_max"] = RecordJson{{"rate_rps", a.rate_rps},
                             {"attainment", a.attainment},
                             {"per_user_tokens_per_s", a.per_user_tokens_per_s},
                             {"observed", a.observed},
                             {"metrics", a.metrics},
                             {"memory", a.memory}};
  } else {
    r["at_max"] = nullptr;
  }
  if (record.above) {
    const AboveRecord& a = *record.above;
    r["above"] = RecordJson{{"rate_rps", a.rate_rps},
                            {"limiting", a.limiting},
                            {"attainment", a.attainment},
                            {"observed", a.observed},
                            {"saturation", a.saturation}};
  } else {
    r["above"] = nullptr;
  }
  if (record.sizing) r["sizing"] = to_json(*record.sizing);
  return r;
}

DeploymentRecord record_from_json(const RecordJson& j, const std::string& what) {
  const Reader r(what);
  DeploymentRecord d;
  d.status = r.text(j, "status");
  d.error = r.optional_text(j, "error");
  d.base_rate_rps = r.optional_number(j, "base_rate_rps");
  if (!r.at(j, "num_requests").is_null()) d.num_requests = r.integer(j, "num_requests");
  d.max_rate_rps = r.number(j, "max_rate_rps");
  d.limiting_slo = r.optional_text(j, "limiting_slo");
  d.fail_rate_rps = r.optional_number(j, "fail_rate_rps");
  d.converged = r.boolean(j, "converged");
  for (const RecordJson& p : r.at(j, "probes")) {
    d.probes.push_back({r.number(p, "rate_rps"), r.boolean(p, "ok"), r.text(p, "limiting")});
  }
  if (!r.at(j, "at_max").is_null()) d.at_max = at_max_from_json(j["at_max"], r);
  if (!r.at(j, "above").is_null()) d.above = above_from_json(j["above"], r);
  if (j.contains("sizing") && !j["sizing"].is_null()) d.sizing = sizing_from_json(j["sizing"], r);
  return d;
}

RecordJson typed_axis_value(const config::AxisValue& axis) {
  const config::Setting* s = config::find_setting_by_path(axis.path);
  RecordJson v;
  if (s == nullptr) {
    v = scalar_value(axis.value);
  } else {
    switch (s->type) {
      case config::SettingType::kInt:
        v = scalar_value(axis.value, /*integer_only=*/true);
        break;
      case config::SettingType::kFloat:
      case config::SettingType::kFraction:
      case config::SettingType::kPercent:
      case config::SettingType::kGib:
      case config::SettingType::kMs:
      case config::SettingType::kSeconds:
        v = scalar_value(axis.value);
        if (v.is_boolean()) v = nullptr;
        break;
      case config::SettingType::kBool:
        if (axis.value == "true" || axis.value == "false") v = axis.value == "true";
        break;
      case config::SettingType::kChoice:
      case config::SettingType::kText:
      case config::SettingType::kSpec:
        break;
    }
  }
  return v.is_null() ? RecordJson(axis.value) : v;
}

PlanOutcome plan_outcome(const std::vector<DeploymentCost>& costs,
                         const std::vector<DeploymentRecord>& records,
                         std::optional<double> target_rate_rps) {
  KVSIM_ASSERT(costs.size() == records.size(), "plan_outcome: one record per deployment");
  PlanOutcome o;
  o.capacity.resize(records.size());
  o.sizing.resize(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const DeploymentRecord& r = records[i];
    CapacityPoint& c = o.capacity[i];
    c.feasible = (r.status == "found" || r.status == "capped") && r.max_rate_rps > 0;
    c.max_rate_rps = r.max_rate_rps;
    c.replicas = costs[i].replicas;
    c.gpus_per_replica = costs[i].gpus_per_replica;
    c.gpu_cost_per_hour = costs[i].gpu_price_per_hour;
    if (r.at_max) {
      c.output_tokens_per_s = r.at_max->output_tokens_per_s;
      c.per_user_tokens_per_s = r.at_max->per_user_tokens_per_s;
    }
    if (target_rate_rps && r.sizing) c.verified_replicas = r.sizing->replicas_needed;
    o.sizing[i] = size_deployment(c, target_rate_rps);
  }
  o.by_cost = rank_by_cost(o.capacity, o.sizing, target_rate_rps.has_value());
  o.by_throughput_per_gpu = rank_by_throughput_per_gpu(o.capacity, o.sizing);
  o.pareto_front = pareto_front(o.capacity, o.sizing);
  if (!o.by_cost.empty() && o.sizing[o.by_cost[0]].replicas_needed > 0) o.best = o.by_cost[0];
  return o;
}

std::optional<SteadyState> steady_state(const DeploymentRecord& record,
                                        const CapacityPoint& capacity) {
  if (!record.at_max || !capacity.feasible || !record.num_requests) return std::nullopt;
  SteadyState s;
  s.arrival_span_s = static_cast<double>(*record.num_requests - 1) / capacity.max_rate_rps;
  const double e2e = record.at_max->mean_e2e_s;
  if (e2e > 0) s.ratio = s.arrival_span_s / e2e;
  return s;
}

}  // namespace kvsim::plan
