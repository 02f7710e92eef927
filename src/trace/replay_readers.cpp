// Readers of real benchmark runs (replay_run.h): vLLM benchmark_serving JSON, requests.jsonl and
// DistServe .exp (a Python literal, parsed by python_literal.h); aiperf's is aiperf_reader.cpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "trace/field_parse.h"
#include "trace/python_literal.h"
#include "trace/replay_detail.h"
#include "trace/replay_run.h"

namespace kvsim::trace {
namespace detail {

Error run_error(const std::string& file, int line, int column, const std::string& field,
                const std::string& message) {
  return Error(ErrorLocation{file, line, column, field}, message);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file, int line_offset) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, col] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    throw run_error(file, line + line_offset, col, "", "malformed JSON");
  } catch (const nlohmann::json::exception&) {
    // out_of_range: a number beyond a double's range.
    throw run_error(file, line_offset + 1, 0, "", "malformed JSON: a number out of range");
  }
}

void for_each_json_line(const std::string& path,
                        const std::function<void(const nlohmann::json&, int line)>& fn) {
  std::ifstream in(path);
  if (!in) throw run_error(path, 0, 0, "", "cannot open the file");
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    fn(parse_json_text(line, path, number - 1), number);
  }
}

std::int64_t positive_count(double v, const std::string& file, int line, int column,
                            const std::string& field) {
  if (!(v >= 1) || v != std::floor(v) || v > 1e12) {
    throw run_error(file, line, column, field, "expected a positive integer (tokens)");
  }
  return static_cast<std::int64_t>(v);
}

void normalize_arrivals(std::vector<RealRequest>& requests) {
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const RealRequest& a, const RealRequest& b) { return a.arrival_s < b.arrival_s; });
  if (requests.empty()) return;
  const double first = requests.front().arrival_s;
  for (RealRequest& r : requests) r.arrival_s -= first;
}

void set_tpot(RealRequest& r) {
  r.tpot_s = (r.output_tokens > 1 && r.ttft_s >= 0 && r.e2e_s >= 0)
                 ? (r.e2e_s - r.ttft_s) / static_cast<double>(r.output_tokens - 1)
                 : -1;
}

double span_of(const std::vector<RealRequest>& requests) {
  double end = 0;
  for (const RealRequest& r : requests) {
    if (r.e2e_s >= 0) end = std::max(end, r.arrival_s + r.e2e_s);
  }
  return end;
}

}  // namespace detail

namespace {

using detail::normalize_arrivals;
using detail::parse_json_text;
using detail::positive_count;
using detail::run_error;
using detail::set_tpot;
using detail::span_of;
using nlohmann::json;

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw run_error(path, 0, 0, "", "cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double py_number(const PyValue& d, const std::string& key, const std::string& file,
                 std::size_t index) {
  const PyValue* v = dict_get(d, key);
  const std::string field = "[" + std::to_string(index) + "]." + key;
  if (v == nullptr) throw run_error(file, d.line, d.column, field, "missing field");
  if (v->kind != PyValue::Kind::kNumber || !std::isfinite(v->number)) {
    throw run_error(file, v->line, v->column, field, "expected a finite number");
  }
  return v->number;
}

std::vector<double> read_arrivals_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw run_error(path, 0, 0, "", "cannot open the arrivals file");
  std::vector<double> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string first = line.substr(start, line.find(',', start) - start);
    char* end = nullptr;
    const double v = std::strtod(first.c_str(), &end);
    if (end == first.c_str()) {
      if (out.empty() && number == 1) continue;  // a header
      throw run_error(path, number, 1, "arrival_s", "expected a number of seconds");
    }
    if (!std::isfinite(v) || v < 0 || (!out.empty() && v < out.back())) {
      throw run_error(path, number, 1, "arrival_s",
                      "expected a finite, non-negative, non-decreasing time (s)");
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::string_view run_format_name(RunFormat format) {
  switch (format) {
    case RunFormat::kVllmBenchmark:
      return "vllm-benchmark";
    case RunFormat::kRequestsJsonl:
      return "requests-jsonl";
    case RunFormat::kDistServe:
      return "distserve";
    case RunFormat::kAiperf:
      return "aiperf";
    case RunFormat::kInferencePerf:
      return "inference-perf";
  }
  return "?";
}

std::optional<RunFormat> parse_run_format(std::string_view name) {
  for (RunFormat f : {RunFormat::kVllmBenchmark, RunFormat::kRequestsJsonl, RunFormat::kDistServe,
                      RunFormat::kAiperf, RunFormat::kInferencePerf}) {
    if (run_format_name(f) == name) return f;
  }
  return std::nullopt;
}

std::vector<std::string> run_format_names() {
  return {"vllm-benchmark", "requests-jsonl", "distserve", "aiperf", "inference-perf"};
}

std::optional<RunFormat> detect_run_format(const std::string& path) {
  const auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           std::string_view(path).substr(path.size() - suffix.size()) == suffix;
  };
  if (ends(".exp")) return RunFormat::kDistServe;
  if (ends("profile_export.jsonl")) return RunFormat::kAiperf;
  if (ends(".jsonl")) return RunFormat::kRequestsJsonl;
  if (ends("lifecycle_metrics.json")) return RunFormat::kInferencePerf;
  if (ends(".json")) return RunFormat::kVllmBenchmark;
  return std::nullopt;
}

std::vector<double> vllm_client_arrivals(std::int64_t n, double request_rate, double burstiness,
                                         std::uint32_t seed) {
  if (burstiness != 1.0) {
    throw Error(ErrorLocation{"", 0, 0, "burstiness"},
                "only burstiness 1 (Poisson arrivals) can be regenerated; give --arrivals FILE");
  }
  if (!(request_rate > 0)) {
    throw Error(ErrorLocation{"", 0, 0, "request_rate"}, "expected a positive request rate");
  }
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, n)));
  if (std::isinf(request_rate)) {
    out.assign(static_cast<std::size_t>(n), 0.0);
    return out;
  }
  std::mt19937 mt(seed);  // numpy's legacy seeding of an integer seed: init_genrand(seed)
  const double scale = 1.0 / (request_rate * burstiness);
  double t = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back(t);
    const std::uint32_t a = mt() >> 5, b = mt() >> 6;
    const double u = (a * 67108864.0 + b) / 9007199254740992.0;
    t += scale * -std::log(1.0 - u);
  }
  return out;
}

namespace {

// The result's per-request lists are there and equally long; returns their length.
std::size_t vllm_num_requests(const json& doc, const std::string& path) {
  if (!doc.is_object()) {
    throw run_error(path, 0, 0, "", "expected a JSON object (benchmark_serving result)");
  }
  for (const char* key : {"input_lens", "output_lens", "ttfts", "itls"}) {
    if (!doc.contains(key) || !doc[key].is_array()) {
      throw run_error(path, 0, 0, key, "missing or not a list (save the run with --save-result)");
    }
  }
  const std::size_t n = doc["input_lens"].size();
  for (const char* key : {"output_lens", "ttfts", "itls"}) {
    if (doc[key].size() != n) {
      throw run_error(path, 0, 0, key,
                      "expected " + std::to_string(n) + " entries (one per input_lens)");
    }
  }
  return n;
}

// request_rate ("inf" included) and duration into `run`; returns the burstiness (1 if absent).
double read_vllm_settings(const json& doc, RealRun& run) {
  double burstiness = 1.0;
  if (doc.contains("burstiness") && doc["burstiness"].is_number()) {
    burstiness = doc["burstiness"].get<double>();
  }
  if (doc.contains("request_rate")) {
    const json& rate = doc["request_rate"];
    if (rate.is_number()) {
      run.request_rate = rate.get<double>();
    } else if (rate.is_string() && rate.get<std::string>() == "inf") {
      run.request_rate = HUGE_VAL;
    }
  }
  if (doc.contains("duration") && doc["duration"].is_number()) {
    run.duration_s = doc["duration"].get<double>();
  }
  // --max-concurrency N: the client sent each request when one of N slots was free.
  if (doc.contains("max_concurrency") && doc["max_concurrency"].is_number_integer() &&
      doc["max_concurrency"].get<std::int64_t>() > 0) {
    run.concurrency = doc["max_concurrency"].get<std::int64_t>();
  }
  return burstiness;
}

// The n arrival times: from options.arrivals_path, else regenerated as the vLLM client drew
// them; sets run.arrivals to say which.
std::vector<double> vllm_arrivals(const std::string& path, const VllmBenchmarkOptions& options,
                                  std::size_t n, double burstiness, RealRun& run) {
  if (!options.arrivals_path.empty()) {
    std::vector<double> arrivals = read_arrivals_file(options.arrivals_path);
    if (arrivals.size() != n) {
      throw run_error(options.arrivals_path, 0, 0, "",
                      "expected " + std::to_string(n) + " arrivals (one per request of " + path +
                          "), got " + std::to_string(arrivals.size()));
    }
    run.arrivals = "file " + options.arrivals_path;
    return arrivals;
  }
  if (!run.request_rate) {
    throw run_error(path, 0, 0, "request_rate",
                    "missing: cannot regenerate arrivals; give --arrivals FILE");
  }
  run.arrivals = "regenerated: numpy RandomState(" + std::to_string(options.seed) +
                 ") exponential gaps at the recorded request_rate";
  if (run.concurrency > 0) {
    run.arrivals += ", at most " + std::to_string(run.concurrency) +
                    " outstanding (the recorded max_concurrency)";
  }
  return vllm_client_arrivals(static_cast<std::int64_t>(n), *run.request_rate, burstiness,
                              options.seed);
}

// Request i: lengths, failure, and (when it did not fail) TTFT, ITLs, E2E and TPOT.
RealRequest vllm_request(const json& doc, std::size_t i, const std::string& path) {
  const auto field_error = [&](const std::string& field, const std::string& message) {
    return run_error(path, 0, 0, field, message);
  };
  const std::string idx = "[" + std::to_string(i) + "]";
  RealRequest r;
  const json& in = doc["input_lens"][i];
  const json& out = doc["output_lens"][i];
  if (!in.is_number_integer() || in.get<std::int64_t>() < 1) {
    throw field_error("input_lens" + idx, "expected a positive integer (tokens)");
  }
  if (!out.is_number_integer() || out.get<std::int64_t>() < 0) {
    throw field_error("output_lens" + idx, "expected a non-negative integer (tokens)");
  }
  r.prompt_tokens = in.get<std::int64_t>();
  r.output_tokens = out.get<std::int64_t>();
  if (doc.contains("errors") && doc["errors"].is_array() && i < doc["errors"].size()) {
    const json& e = doc["errors"][i];
    r.failed = e.is_string() && !e.get<std::string>().empty();
  }
  r.failed = r.failed || r.output_tokens < 1;
  if (r.output_tokens < 1) r.output_tokens = 1;  // still arrives and is simulated
  if (r.failed) return r;
  const json& ttft = doc["ttfts"][i];
  if (!ttft.is_number() || ttft.get<double>() < 0) {
    throw field_error("ttfts" + idx, "expected a non-negative number (s)");
  }
  r.ttft_s = ttft.get<double>();
  double e2e = r.ttft_s;
  for (const json& gap : doc["itls"][i]) {
    if (!gap.is_number() || gap.get<double>() < 0) {
      throw field_error("itls" + idx, "expected non-negative numbers (s)");
    }
    r.itl_s.push_back(gap.get<double>());
    e2e += gap.get<double>();
  }
  r.e2e_s = e2e;
  set_tpot(r);
  return r;
}

}  // namespace

RealRun read_vllm_benchmark_json(const std::string& path, const VllmBenchmarkOptions& options) {
  const std::string text = read_whole(path);
  const json doc = parse_json_text(text, path, 0);
  const std::size_t n = vllm_num_requests(doc, path);
  RealRun run;
  run.format = RunFormat::kVllmBenchmark;
  const double burstiness = read_vllm_settings(doc, run);
  const std::vector<double> arrivals = vllm_arrivals(path, options, n, burstiness, run);
  for (std::size_t i = 0; i < n; ++i) {
    RealRequest r = vllm_request(doc, i, path);
    r.arrival_s = arrivals[i];
    run.requests.push_back(std::move(r));
  }
  normalize_arrivals(run.requests);
  if (run.duration_s <= 0) run.duration_s = span_of(run.requests);
  return run;
}

RealRun read_requests_jsonl(const std::string& path) {
  RealRun run;
  run.format = RunFormat::kRequestsJsonl;
  run.arrivals = "recorded";
  const auto first_number = [](const json& o, std::initializer_list<const char*> keys,
                               double scale) -> std::optional<double> {
    for (const char* k : keys) {
      if (o.contains(k) && o[k].is_number()) return o[k].get<double>() * scale;
    }
    return std::nullopt;
  };
  detail::for_each_json_line(path, [&](const json& o, int number) {
    if (!o.is_object()) throw run_error(path, number, 1, "", "expected a JSON object");
    RealRequest r;
    auto arrival = first_number(o, {"arrival_time_s", "arrival_s", "arrival_time", "arrival"}, 1);
    if (!arrival) arrival = first_number(o, {"arrival_time_ms", "timestamp_ms"}, 1e-3);
    if (!arrival || !std::isfinite(*arrival)) {
      throw run_error(path, number, 1, "arrival_time_s", "missing arrival time");
    }
    const auto prompt = first_number(o, {"input_tokens", "prompt_tokens", "input_length"}, 1);
    const auto output = first_number(o, {"output_tokens", "output_length"}, 1);
    if (!prompt) throw run_error(path, number, 1, "input_tokens", "missing token count");
    if (!output) throw run_error(path, number, 1, "output_tokens", "missing token count");
    r.arrival_s = *arrival;
    r.prompt_tokens = positive_count(*prompt, path, number, 1, "input_tokens");
    r.output_tokens = positive_count(*output, path, number, 1, "output_tokens");
    if (const auto first = first_number(o, {"first_token_time"}, 1)) {
      r.ttft_s = *first - r.arrival_s;
    } else if (const auto ttft = first_number(o, {"ttft_s"}, 1)) {
      r.ttft_s = *ttft;
    }
    if (const auto end = first_number(o, {"end_time"}, 1)) {
      r.e2e_s = *end - r.arrival_s;
    } else if (const auto latency = first_number(o, {"latency_s"}, 1)) {
      r.e2e_s = *latency;
    }
    if ((r.ttft_s < 0 && o.contains("first_token_time")) || (r.e2e_s >= 0 && r.ttft_s > r.e2e_s)) {
      throw run_error(path, number, 1, "first_token_time",
                      "expected arrival <= first token <= end");
    }
    set_tpot(r);
    run.requests.push_back(std::move(r));
  });
  normalize_arrivals(run.requests);
  run.duration_s = span_of(run.requests);
  return run;
}

RealRun read_distserve_exp(const std::string& path) {
  const std::string text = read_whole(path);
  std::vector<std::pair<std::string, double>> summary;
  const PyValue doc = parse_python_literal(text, path, summary);
  if (doc.kind != PyValue::Kind::kList) {
    throw run_error(path, doc.line, doc.column, "", "expected a list of request dicts");
  }
  RealRun run;
  run.format = RunFormat::kDistServe;
  run.arrivals = "recorded";
  for (std::size_t i = 0; i < doc.items.size(); ++i) {
    const PyValue& d = doc.items[i];
    const std::string idx = "[" + std::to_string(i) + "]";
    if (d.kind != PyValue::Kind::kDict) {
      throw run_error(path, d.line, d.column, idx, "expected a dict");
    }
    RealRequest r;
    r.prompt_tokens = positive_count(py_number(d, "prompt_len", path, i), path, d.line, d.column,
                                     idx + ".prompt_len");
    r.output_tokens = positive_count(py_number(d, "output_len", path, i), path, d.line, d.column,
                                     idx + ".output_len");
    const double issue = py_number(d, "issue_time", path, i);
    const double first = py_number(d, "first_token_time", path, i);
    const double done = py_number(d, "complete_time", path, i);
    if (!(issue <= first && first <= done)) {
      throw run_error(path, d.line, d.column, idx + ".first_token_time",
                      "expected issue_time <= first_token_time <= complete_time");
    }
    r.arrival_s = issue;
    r.ttft_s = first - issue;
    r.e2e_s = done - issue;
    set_tpot(r);
    run.requests.push_back(std::move(r));
  }
  normalize_arrivals(run.requests);
  run.duration_s = span_of(run.requests);
  for (const auto& [key, value] : summary) {
    if (key == "test_duration_ms" && value > 0) run.duration_s = value / 1e3;
  }
  // vllm-<N>-<rate>.exp names the rate.
  const std::size_t slash = path.find_last_of('/');
  const std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
  const std::size_t dash = base.find_last_of('-');
  if (dash != std::string::npos && base.size() > 4 && base.substr(base.size() - 4) == ".exp") {
    const std::string tail = base.substr(dash + 1, base.size() - 4 - dash - 1);
    char* end = nullptr;
    const double rate = std::strtod(tail.c_str(), &end);
    if (!tail.empty() && *end == '\0' && rate > 0) run.request_rate = rate;
  }
  return run;
}

}  // namespace kvsim::trace
