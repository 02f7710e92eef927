// inference-perf's lifecycle reports (replay_run.h: read_inference_perf_json).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "trace/field_parse.h"
#include "trace/replay_detail.h"
#include "trace/replay_run.h"

namespace kvsim::trace {
namespace {

using detail::run_error;
using nlohmann::json;

// Record fields that hold texts (prompts, responses, streamed chunks): skipped while parsing, so
// a report of hundreds of MB costs the memory of its numbers only.
bool is_text_field(const std::string& key) {
  return key == "request" || key == "response" || key == "request_data" || key == "response_data" ||
         key == "response_chunks" || key == "chunk_times";
}

json parse_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw run_error(path, 0, 0, "", "cannot open the file");
  const json::parser_callback_t skip_texts = [](int, json::parse_event_t event, json& parsed) {
    return !(event == json::parse_event_t::key && parsed.is_string() &&
             is_text_field(parsed.get<std::string>()));
  };
  try {
    return json::parse(in, skip_texts);
  } catch (const json::parse_error& e) {
    std::ifstream again(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(again)),
                           std::istreambuf_iterator<char>());
    const auto [line, col] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    throw run_error(path, line, col, "", "malformed JSON");
  } catch (const json::exception&) {
    throw run_error(path, 0, 0, "", "malformed JSON: a number out of range");
  }
}

// The member `key` of object `o`, or null when absent (or `o` is no object).
const json* member(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

// A finite, non-negative number at `field`.
double number(const json& v, const std::string& path, const std::string& field) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    throw run_error(path, 0, 0, field, "expected a finite, non-negative number");
  }
  return v.get<double>();
}

// ---- per_request_lifecycle_metrics.json ----

// A token count at `o.key`, when present and positive (0 = not counted).
std::optional<std::int64_t> count_at(const json& o, const char* key, const std::string& path,
                                     const std::string& field) {
  const json* v = member(o, key);
  if (v == nullptr) return std::nullopt;
  const double n = number(*v, path, field + "." + key);
  if (n != std::floor(n) || n > 1e12) {
    throw run_error(path, 0, 0, field + "." + key, "expected a whole number of tokens");
  }
  if (n == 0) return std::nullopt;
  return static_cast<std::int64_t>(n);
}

struct Record {
  std::optional<std::int64_t> stage;
  RealRequest request;
};

Record per_request_record(const json& o, std::size_t index, const std::string& path) {
  const std::string at = "[" + std::to_string(index) + "]";
  if (!o.is_object()) throw run_error(path, 0, 0, at, "expected an object (a request record)");
  Record rec;
  if (const json* s = member(o, "stage_id")) {
    if (!s->is_number_integer()) throw run_error(path, 0, 0, at + ".stage_id", "expected an int");
    rec.stage = s->get<std::int64_t>();
  }
  const json* start = member(o, "start_time");
  const json* end = member(o, "end_time");
  if (start == nullptr) throw run_error(path, 0, 0, at + ".start_time", "missing field");
  if (end == nullptr) throw run_error(path, 0, 0, at + ".end_time", "missing field");
  RealRequest& r = rec.request;
  r.arrival_s = number(*start, path, at + ".start_time");
  const double end_s = number(*end, path, at + ".end_time");
  if (end_s < r.arrival_s) throw run_error(path, 0, 0, at + ".end_time", "before start_time");
  r.failed = member(o, "error") != nullptr;

  const json* info = member(o, "info");
  if (info == nullptr || !info->is_object()) throw run_error(path, 0, 0, at + ".info", "missing");
  const std::string info_at = at + ".info";
  const json* response = member(*info, "response_metrics");
  const json* usage = response ? member(*response, "server_usage") : nullptr;
  const json* request_metrics = member(*info, "request_metrics");
  const json* text = request_metrics ? member(*request_metrics, "text") : nullptr;
  // The server's counts where it sent them, else the client's.
  std::optional<std::int64_t> input =
      usage ? count_at(*usage, "prompt_tokens", path, info_at + ".response_metrics.server_usage")
            : std::nullopt;
  if (!input) input = count_at(*info, "input_tokens", path, info_at);
  if (!input && text)
    input = count_at(*text, "input_tokens", path, info_at + ".request_metrics.text");
  std::optional<std::int64_t> output = usage ? count_at(*usage, "completion_tokens", path,
                                                        info_at + ".response_metrics.server_usage")
                                             : std::nullopt;
  if (!output) output = count_at(*info, "output_tokens", path, info_at);
  if (!output && response) {
    output = count_at(*response, "output_tokens", path, info_at + ".response_metrics");
  }
  std::vector<double> times;
  const json* times_json = member(*info, "output_token_times");
  std::string times_at = info_at + ".output_token_times";
  if (times_json == nullptr && response != nullptr) {
    times_json = member(*response, "output_token_times");
    times_at = info_at + ".response_metrics.output_token_times";
  }
  if (times_json != nullptr) {
    if (!times_json->is_array()) throw run_error(path, 0, 0, times_at, "expected a list of times");
    times.reserve(times_json->size());
    for (const json& t : *times_json) {
      times.push_back(number(t, path, times_at));
      if (times.size() > 1 && times.back() < times[times.size() - 2]) {
        throw run_error(path, 0, 0, times_at, "expected non-decreasing times");
      }
    }
  }
  if (!output && !times.empty()) output = static_cast<std::int64_t>(times.size());
  if (r.failed) {
    r.prompt_tokens = input.value_or(1);
    r.output_tokens = output.value_or(1);
    return rec;
  }
  if (!input) throw run_error(path, 0, 0, info_at + ".input_tokens", "missing token count");
  if (!output) throw run_error(path, 0, 0, info_at + ".output_tokens", "missing token count");
  r.prompt_tokens = *input;
  r.output_tokens = *output;
  r.e2e_s = end_s - r.arrival_s;
  if (!times.empty()) {
    if (times.front() < r.arrival_s || times.back() > end_s) {
      throw run_error(path, 0, 0, times_at, "expected token times between start_time and end_time");
    }
    r.ttft_s = times.front() - r.arrival_s;
    if (r.output_tokens > 1 && times.size() > 1) {
      r.tpot_s = (times.back() - times.front()) / static_cast<double>(r.output_tokens - 1);
    }
    if (static_cast<std::int64_t>(times.size()) == r.output_tokens) {
      for (std::size_t k = 1; k < times.size(); ++k) r.itl_s.push_back(times[k] - times[k - 1]);
    }
  }
  return rec;
}

RealRun per_request_run(const json& doc, const std::string& path,
                        const InferencePerfOptions& options) {
  RealRun run;
  run.format = RunFormat::kInferencePerf;
  run.arrivals = "recorded (inference-perf start_time)";
  std::vector<std::int64_t> stages;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    Record rec = per_request_record(doc[i], i, path);
    if (rec.stage) stages.push_back(*rec.stage);
    if (options.stage && rec.stage != options.stage) continue;
    run.requests.push_back(std::move(rec.request));
  }
  if (options.stage && run.requests.empty()) {
    std::sort(stages.begin(), stages.end());
    stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
    std::string have;
    for (std::int64_t s : stages) have += (have.empty() ? "" : ", ") + std::to_string(s);
    throw run_error(path, 0, 0, "stage_id",
                    "no request of stage " + std::to_string(*options.stage) +
                        " (stages: " + (have.empty() ? "none recorded" : have) + ")");
  }
  if (options.stage) run.arrivals += ", stage " + std::to_string(*options.stage);
  detail::normalize_arrivals(run.requests);
  run.duration_s = detail::span_of(run.requests);
  return run;
}

// ---- stage_N_lifecycle_metrics.json ----

// Most requests a regenerated stage may hold (a minute at 80,000 req/s); more is a corrupt count.
constexpr double kMaxStageRequests = 5e6;

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

const json& object_at(const json& o, const char* key, const std::string& path,
                      const std::string& field) {
  const json* v = member(o, key);
  if (v == nullptr || !v->is_object()) throw run_error(path, 0, 0, field, "missing object");
  return *v;
}

double number_at(const json& o, const char* key, const std::string& path,
                 const std::string& field) {
  const json* v = member(o, key);
  if (v == nullptr) throw run_error(path, 0, 0, field, "missing field");
  return number(*v, path, field);
}

// One latency's statistics (seconds), when reported.
std::optional<RealStats> stats_at(const json& latency, const char* key, std::int64_t count,
                                  const std::string& path) {
  const json* s = member(latency, key);
  if (s == nullptr) return std::nullopt;
  const std::string field = std::string("successes.latency.") + key;
  if (!s->is_object()) throw run_error(path, 0, 0, field, "expected an object of statistics");
  RealStats out;
  out.count = count;
  out.mean = number_at(*s, "mean", path, field + ".mean");
  out.p50 = number_at(*s, "median", path, field + ".median");
  out.p90 = number_at(*s, "p90", path, field + ".p90");
  out.p99 = number_at(*s, "p99", path, field + ".p99");
  return out;
}

// A length distribution given by its percentiles: (fraction, tokens) knots, increasing.
using Quantiles = std::vector<std::pair<double, double>>;

Quantiles quantiles_at(const json& successes, const char* key, const std::string& path) {
  const std::string field = std::string("successes.") + key;
  const json& d = object_at(successes, key, path, field);
  Quantiles q;
  for (const auto& [name, value] : d.items()) {
    double fraction = -1;
    if (name == "min") {
      fraction = 0;
    } else if (name == "median") {
      fraction = 0.5;
    } else if (name == "max") {
      fraction = 1;
    } else if (name.size() > 1 && name[0] == 'p') {
      char* end = nullptr;
      const double p = std::strtod(name.c_str() + 1, &end);
      if (*end == '\0' && p >= 0 && p <= 100) fraction = p / 100;
    }
    if (fraction < 0) continue;  // mean and other fields
    std::string at = field;
    at += '.';
    at += name;
    q.emplace_back(fraction, number(value, path, at));
  }
  std::sort(q.begin(), q.end());
  if (q.size() < 2 || q.front().first != 0 || q.back().first != 1) {
    throw run_error(path, 0, 0, field, "expected min, max and percentiles of the lengths");
  }
  for (std::size_t k = 1; k < q.size(); ++k) {
    if (q[k].second < q[k - 1].second) {
      throw run_error(path, 0, 0, field, "expected percentiles that do not decrease");
    }
  }
  if (q.front().second < 1) q.front().second = 1;  // a length is at least one token
  return q;
}

// The length at fraction u in [0, 1) of the distribution.
std::int64_t length_at(const Quantiles& q, double u) {
  const auto hi = std::upper_bound(q.begin(), q.end(), u,
                                   [](double x, const auto& knot) { return x < knot.first; });
  const auto lo = hi - 1;
  double v = lo->second;
  if (hi != q.end() && hi->first > lo->first) {
    v += (u - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
  }
  return std::max<std::int64_t>(1, std::llround(v));
}

RealRun stage_summary_run(const json& doc, const std::string& path,
                          const InferencePerfOptions& options) {
  const json& load = object_at(doc, "load_summary", path, "load_summary");
  const json& successes = object_at(doc, "successes", path, "successes");
  const double count = number_at(load, "count", path, "load_summary.count");
  if (count < 1 || count != std::floor(count) || count > kMaxStageRequests) {
    throw run_error(path, 0, 0, "load_summary.count",
                    "expected a positive number of requests, at most 5,000,000");
  }
  RealRun run;
  run.format = RunFormat::kInferencePerf;
  const auto n = static_cast<std::int64_t>(count);
  const json* concurrency = member(load, "concurrency");
  const json* rate = member(load, "requested_rate");
  if (concurrency == nullptr && rate == nullptr) {
    throw run_error(path, 0, 0, "load_summary.requested_rate",
                    "missing: a summary over several stages has no rate; replay one "
                    "stage_N_lifecycle_metrics.json, or the per-request report");
  }
  const Quantiles prompt = quantiles_at(successes, "prompt_len", path);
  const Quantiles output = quantiles_at(successes, "output_len", path);
  std::mt19937_64 rng(options.seed);
  const auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  double t = 0;
  std::string how;
  if (concurrency != nullptr) {
    const double c = number(*concurrency, path, "load_summary.concurrency");
    if (c < 1 || c != std::floor(c)) {
      throw run_error(path, 0, 0, "load_summary.concurrency", "expected a positive integer");
    }
    run.concurrency = static_cast<std::int64_t>(c);
    how = "closed loop of " + std::to_string(run.concurrency) + " clients (inference-perf " +
          "concurrent load)";
  } else {
    const double r = number(*rate, path, "load_summary.requested_rate");
    if (!(r > 0)) throw run_error(path, 0, 0, "load_summary.requested_rate", "expected > 0");
    run.request_rate = r;
    how = std::string(options.poisson ? "Poisson" : "constant") + " at " + shortest(r) +
          " req/s (inference-perf requested_rate)";
  }
  run.requests.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    RealRequest q;
    if (run.concurrency == 0) {
      if (i > 0) {
        t +=
            options.poisson ? -std::log1p(-uniform()) / *run.request_rate : 1.0 / *run.request_rate;
      }
      q.arrival_s = t;
    }
    q.prompt_tokens = length_at(prompt, uniform());
    q.output_tokens = length_at(output, uniform());
    run.requests.push_back(q);
  }
  run.arrivals = "regenerated: " + std::to_string(n) + " requests, " + how +
                 "; lengths drawn from the stage's prompt_len/output_len percentiles, seed " +
                 std::to_string(options.seed);
  RealSummary s;
  const double done = number_at(successes, "count", path, "successes.count");
  s.completed = static_cast<std::int64_t>(done);
  if (s.completed > 0) {
    const json& latency = object_at(successes, "latency", path, "successes.latency");
    s.ttft = stats_at(latency, "time_to_first_token", s.completed, path);
    s.tpot = stats_at(latency, "time_per_output_token", s.completed, path);
    s.itl = stats_at(latency, "inter_token_latency", s.completed, path);
    s.e2e = stats_at(latency, "request_latency", s.completed, path);
    if (const json* tp = member(successes, "throughput")) {
      if (const json* v = member(*tp, "requests_per_sec")) {
        s.requests_per_s = number(*v, path, "successes.throughput.requests_per_sec");
      }
      if (const json* v = member(*tp, "output_tokens_per_sec")) {
        s.output_tokens_per_s = number(*v, path, "successes.throughput.output_tokens_per_sec");
      }
    }
  }
  if (const json* send = member(load, "send_duration")) {
    run.duration_s = number(*send, path, "load_summary.send_duration");
  }
  run.summary = s;
  return run;
}

}  // namespace

RealRun read_inference_perf_json(const std::string& path, const InferencePerfOptions& options) {
  const json doc = parse_report(path);
  if (doc.is_array()) return per_request_run(doc, path, options);
  if (doc.is_object() && doc.contains("load_summary")) {
    if (options.stage) {
      throw run_error(path, 0, 0, "",
                      "--run-stage picks a stage of a per-request report; this "
                      "is one stage's summary");
    }
    return stage_summary_run(doc, path, options);
  }
  throw run_error(path, 1, 1, "",
                  "expected an inference-perf lifecycle report: a list of request records "
                  "(per_request_lifecycle_metrics.json) or a stage summary with load_summary");
}

}  // namespace kvsim::trace
