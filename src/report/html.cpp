// The data behind the three HTML pages (html.h); the page and its drawing script are in
// html_page.cpp.
#include "report/html.h"

#include <algorithm>
#include <cmath>

namespace kvsim::report {
namespace {

// 201 points (q = 0, 0.5, ..., 100) of the quantile function, seconds; empty when no samples.
Json cdf_points(const sim::LatencyHistogram& h) {
  Json points = Json::array();
  if (h.count() == 0) return points;
  for (int i = 0; i <= 200; ++i) {
    const double q = i * 0.5;
    points.push_back(Json::array({h.percentile(q) * 1e-9, q / 100.0}));
  }
  return points;
}

Json cdfs(const sim::SimResult& r) {
  const sim::Metrics& m = r.metrics;
  return {{"ttft", cdf_points(m.ttft)}, {"tpot", cdf_points(m.tpot)}, {"e2e", cdf_points(m.e2e)}};
}

Json fractions(const sim::MemoryFractions& f) {
  return {{"token_states", f.token_states},
          {"reservation", f.reservation},
          {"internal_fragmentation", f.internal_fragmentation},
          {"external_fragmentation", f.external_fragmentation},
          {"free", f.free}};
}

// Column arrays of the timeline (bytes per GPU, averaged over replicas).
Json timeline(const sim::SimResult& r) {
  Json t = Json::array(), running = Json::array(), waiting = Json::array(), token = Json::array(),
       reserved = Json::array(), internal = Json::array(), external = Json::array(),
       free = Json::array();
  for (const sim::TimelinePoint& p : r.timeline) {
    t.push_back(static_cast<double>(p.t) * 1e-9);
    running.push_back(p.running);
    waiting.push_back(p.waiting);
    token.push_back(p.token_state_bytes);
    reserved.push_back(p.reserved_bytes);
    internal.push_back(p.internal_fragmentation_bytes);
    external.push_back(p.external_fragmentation_bytes);
    free.push_back(p.free_bytes - p.external_fragmentation_bytes);
  }
  // Keyed like the fractions (MEMORY in the page's script), so the bands and the bars match.
  return {{"t", t},
          {"running", running},
          {"waiting", waiting},
          {"token_states", token},
          {"reservation", reserved},
          {"internal_fragmentation", internal},
          {"external_fragmentation", external},
          {"free", free},
          {"capacity_bytes", r.capacity_bytes}};
}

const Json* find_path(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = &j;
  for (const char* k : keys) {
    if (!v->is_object()) return nullptr;
    const auto it = v->find(k);
    if (it == v->end()) return nullptr;
    v = &*it;
  }
  return v;
}

std::string text_at(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = find_path(j, keys);
  if (v == nullptr || v->is_null()) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

// "llama-3-70b on 4 × h100-sxm (TP 4), paged / vllm": what a page's subtitle says.
std::string deployment_text(const Json& report) {
  const std::string tp = text_at(report, {"inputs", "serving", "tensor_parallel_size"});
  const std::string replicas = text_at(report, {"inputs", "serving", "replicas"});
  std::string s = text_at(report, {"inputs", "model", "name"}) + " on " +
                  (replicas.empty() || replicas == "1" ? "" : replicas + " replicas of ") + tp +
                  " × " + text_at(report, {"inputs", "hardware", "name"});
  const std::string alloc = text_at(report, {"inputs", "serving", "allocator"});
  const std::string sched = text_at(report, {"inputs", "serving", "scheduler"});
  if (!alloc.empty()) s += ", " + alloc + " / " + sched;
  return s;
}

double number_or(const Json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace

std::string simulate_html(const Json& report, const sim::SimResult& result) {
  Json data;
  data["subtitle"] = deployment_text(report);
  data["summary"] = report.value("summary", Json::object());
  data["memory"] = report.value("memory", Json::object());
  data["cdfs"] = cdfs(result);
  data["fractions"] = fractions(result.fraction);
  data["timeline"] = timeline(result);
  Json replicas = Json::array();
  for (const std::int64_t c : result.completed_per_replica) replicas.push_back(c);
  data["replicas"] = replicas;
  return html_page("kvsim simulate: " + deployment_text(report), "simulate", data);
}

std::string compare_html(const std::vector<CompareRun>& runs, const sim::SloOptions& slo) {
  Json data;
  const Json doc = compare_json(runs, slo);
  data["subtitle"] = runs.empty()
                         ? std::string()
                         : runs[0].inputs.model_label + ", " + runs[0].inputs.workload_label;
  Json out = Json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = doc["runs"][i];
    out.push_back({{"label", runs[i].label},
                   {"summary", run.value("summary", Json::object())},
                   {"fractions", fractions(runs[i].result.fraction)},
                   {"cdfs", cdfs(runs[i].result)}});
  }
  data["runs"] = out;
  return html_page("kvsim compare: " + data["subtitle"].get<std::string>(), "compare", data);
}

std::vector<std::size_t> cost_capacity_front(const Json& plan) {
  struct Point {
    std::size_t index;
    double cost, capacity;
  };
  std::vector<Point> points;
  const Json& deployments = plan.at("deployments");
  for (std::size_t i = 0; i < deployments.size(); ++i) {
    const Json& d = deployments[i];
    const double capacity = number_or(d, "max_rate_rps", 0.0);
    if (!(capacity > 0)) continue;
    const double cost = number_or(d, "replicas", 1) * number_or(d, "gpus_per_replica", 1) *
                        number_or(d, "gpu_price_per_hour", 0);
    points.push_back({i, cost, capacity});
  }
  // Ascending cost (ties: higher capacity first, then index): a point is on the front when its
  // capacity beats every cheaper-or-equal point's.
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.capacity != b.capacity) return a.capacity > b.capacity;
    return a.index < b.index;
  });
  std::vector<std::size_t> front;
  double best = -1;
  for (const Point& p : points) {
    if (p.capacity > best) {
      front.push_back(p.index);
      best = p.capacity;
    }
  }
  return front;
}

std::string plan_html(const Json& plan) {
  Json data;
  Json points = Json::array();
  const Json& deployments = plan.at("deployments");
  for (const Json& d : deployments) {
    points.push_back({{"label", d.value("label", "")},
                      {"status", d.value("status", "")},
                      {"max_rate_rps", number_or(d, "max_rate_rps", 0.0)},
                      {"deployment_cost_per_hour", number_or(d, "replicas", 1) *
                                                       number_or(d, "gpus_per_replica", 1) *
                                                       number_or(d, "gpu_price_per_hour", 0)},
                      {"replicas_needed", d.value("replicas_needed", Json())},
                      {"gpus", d.value("gpus", Json())},
                      {"cost_per_hour", d.value("cost_per_hour", Json())},
                      {"throughput_per_gpu", d.value("throughput_per_gpu", Json())},
                      {"limiting_slo", d.value("limiting_slo", Json())}});
  }
  data["deployments"] = points;
  Json front = Json::array();
  for (const std::size_t i : cost_capacity_front(plan)) front.push_back(i);
  data["front"] = front;
  const Json* by_cost = find_path(plan, {"ranking", "by_cost"});
  data["by_cost"] = by_cost != nullptr ? *by_cost : Json::array();
  data["target_rate_rps"] =
      plan.contains("settings") ? plan["settings"].value("target_rate_rps", Json()) : Json();
  data["best"] = plan.value("best", Json());
  const std::string source = text_at(plan, {"settings", "source"});
  data["subtitle"] = std::to_string(deployments.size()) + " deployments" +
                     (source.empty() ? std::string() : " from " + source);
  return html_page("kvsim plan: " + data["subtitle"].get<std::string>(), "plan", data);
}

}  // namespace kvsim::report
