// aiperf's per-request export, profile_export.jsonl (replay_run.h: read_aiperf_jsonl).
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "trace/replay_detail.h"
#include "trace/replay_run.h"

namespace kvsim::trace {
namespace {

using detail::run_error;
using nlohmann::json;

// One record's place, for errors: the file, its line and the field.
struct Where {
  const std::string& file;
  int line;
  Error operator()(const std::string& field, const std::string& message) const {
    return run_error(file, line, 1, field, message);
  }
};

// Seconds per unit of an aiperf metric's "unit".
double seconds_per(const std::string& unit, const Where& where, const std::string& field) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s" || unit == "sec") return 1.0;
  throw where(field + ".unit", "expected a time unit (ns, us, ms or s), got '" + unit + "'");
}

// The metric's unit ("ms" when absent).
std::string unit_of(const json& m, const Where& where, const std::string& field) {
  const auto it = m.find("unit");
  if (it == m.end()) return "ms";
  if (!it->is_string()) throw where(field + ".unit", "expected a unit name");
  return it->get<std::string>();
}

const json* metric(const json& metrics, const char* name) {
  if (!metrics.is_object()) return nullptr;
  const auto it = metrics.find(name);
  if (it == metrics.end() || !it->is_object() || !it->contains("value")) return nullptr;
  return &*it;
}

// A token-count metric's value, when present.
std::optional<std::int64_t> tokens(const json& metrics, const char* name, const Where& where) {
  const json* m = metric(metrics, name);
  if (m == nullptr) return std::nullopt;
  const json& v = (*m)["value"];
  if (!v.is_number()) throw where(std::string("metrics.") + name, "expected a number of tokens");
  return detail::positive_count(v.get<double>(), where.file, where.line, 1,
                                std::string("metrics.") + name);
}

// A duration metric in seconds, when present: one value, or (`list`) each of a list.
std::optional<double> seconds(const json& metrics, const char* name, const Where& where) {
  const json* m = metric(metrics, name);
  if (m == nullptr) return std::nullopt;
  const std::string field = std::string("metrics.") + name;
  const json& v = (*m)["value"];
  const double scale = seconds_per(unit_of(*m, where, field), where, field);
  if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>())) {
    throw where(field, "expected a non-negative duration");
  }
  return v.get<double>() * scale;
}

std::vector<double> gaps(const json& metrics, const char* name, const Where& where) {
  const json* m = metric(metrics, name);
  if (m == nullptr) return {};
  const std::string field = std::string("metrics.") + name;
  const json& v = (*m)["value"];
  const double scale = seconds_per(unit_of(*m, where, field), where, field);
  if (!v.is_array()) throw where(field, "expected a list of durations");
  std::vector<double> out;
  out.reserve(v.size());
  for (const json& g : v) {
    if (!g.is_number() || !(g.get<double>() >= 0)) {
      throw where(field, "expected non-negative durations");
    }
    out.push_back(g.get<double>() * scale);
  }
  return out;
}

// The record's request, or nullopt for a record to skip (a warm-up's).
std::optional<RealRequest> aiperf_request(const json& o, const Where& where) {
  if (!o.is_object()) throw where("", "expected a JSON object (an aiperf record)");
  const auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) throw where("metadata", "missing field");
  if (const auto phase = meta->find("benchmark_phase");
      phase != meta->end() && phase->is_string() && phase->get<std::string>() != "profiling") {
    return std::nullopt;
  }
  const auto start = meta->find("request_start_ns");
  if (start == meta->end() || !start->is_number()) {
    throw where("metadata.request_start_ns", "expected the send time (epoch ns)");
  }
  RealRequest r;
  // Epoch seconds as a double keep 0.3 us: far below any latency compared here.
  r.arrival_s = start->get<double>() * 1e-9;
  const json& metrics = o.contains("metrics") ? o["metrics"] : json();
  const auto cancel = meta->find("was_cancelled");
  const bool cancelled = cancel != meta->end() && cancel->is_boolean() && cancel->get<bool>();
  r.failed = cancelled || (o.contains("error") && !o["error"].is_null());
  if (r.failed) {
    r.prompt_tokens = tokens(metrics, "error_isl", where)
                          .value_or(tokens(metrics, "input_sequence_length", where).value_or(1));
    r.output_tokens = tokens(metrics, "output_sequence_length", where).value_or(1);
    return r;
  }
  const auto isl = tokens(metrics, "input_sequence_length", where);
  if (!isl) throw where("metrics.input_sequence_length", "missing token count");
  auto osl = tokens(metrics, "output_sequence_length", where);
  if (!osl) osl = tokens(metrics, "output_token_count", where);
  if (!osl) throw where("metrics.output_sequence_length", "missing token count");
  r.prompt_tokens = *isl;
  r.output_tokens = *osl;
  r.ttft_s = seconds(metrics, "time_to_first_token", where).value_or(-1);
  r.e2e_s = seconds(metrics, "request_latency", where).value_or(-1);
  if (r.ttft_s >= 0 && r.e2e_s >= 0 && r.ttft_s > r.e2e_s) {
    throw where("metrics.time_to_first_token", "expected TTFT <= request_latency");
  }
  std::vector<double> chunks = gaps(metrics, "inter_chunk_latency", where);
  if (static_cast<std::int64_t>(chunks.size()) == r.output_tokens - 1) r.itl_s = std::move(chunks);
  detail::set_tpot(r);
  return r;
}

}  // namespace

RealRun read_aiperf_jsonl(const std::string& path) {
  RealRun run;
  run.format = RunFormat::kAiperf;
  run.arrivals = "recorded (aiperf request_start_ns)";
  detail::for_each_json_line(path, [&](const json& o, int number) {
    if (auto r = aiperf_request(o, Where{path, number})) run.requests.push_back(std::move(*r));
  });
  detail::normalize_arrivals(run.requests);
  run.duration_s = detail::span_of(run.requests);
  return run;
}

}  // namespace kvsim::trace
