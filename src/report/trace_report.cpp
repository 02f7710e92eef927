#include "report/trace_report.h"

#include <charconv>

#include "common/format.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json length_json(const trace::LengthSummary& s) {
  Json j;
  if (s.count == 0) {
    for (const char* key : {"mean", "p50", "p90", "p99", "max", "min"}) j[key] = nullptr;
    return j;
  }
  j["mean"] = s.mean;
  j["p50"] = s.p50;
  j["p90"] = s.p90;
  j["p99"] = s.p99;
  j["max"] = s.max;
  j["min"] = s.min;
  return j;
}

Json trace_file_json(const trace::TraceFileOptions& f) {
  Json j;
  j["path"] = f.path;
  j["format"] = std::string(trace::format_name(f.format));
  j["skip_bad_rows"] = f.skip_bad_rows;
  j["prefix_block_tokens"] = f.prefix_block_tokens;
  return j;
}

// The shortest decimal that reads back as `value` (for the CSV, like JSON does).
std::string csv_number(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

std::string optional_csv(const std::optional<double>& value) {
  return value ? csv_number(*value) : "";
}

std::string rate_text(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : "-";
}

}  // namespace

Json reader_stats_json(const trace::ReaderStats& s) {
  Json j;
  j["rows_read"] = s.rows_read;
  j["requests"] = s.requests;
  j["bad_rows_skipped"] = s.bad_rows_skipped;
  j["failed_requests"] = s.failed_requests;
  j["truncated_prompts"] = s.truncated_prompts;
  j["clamped_arrivals"] = s.clamped_arrivals;
  return j;
}

Json workload_json(const trace::WorkloadOptions& w) {
  Json j;
  if (w.source == trace::WorkloadOptions::Source::kTrace) {
    j["source"] = "trace";
    j["trace"] = trace_file_json(w.trace);
  } else {
    const trace::SyntheticOptions& s = w.synthetic;
    j["source"] = "synthetic";
    Json g;
    g["arrival"] = std::string(trace::arrival_process_name(s.arrival));
    if (s.arrival == trace::ArrivalProcess::kReplay) {
      g["arrival_trace"] = trace_file_json(s.arrival_trace);
    } else {
      g["rate_rps"] = s.rate_rps;
      if (s.arrival == trace::ArrivalProcess::kGamma) g["cv"] = s.cv;
    }
    g["num_requests"] = s.num_requests;
    g["duration_s"] = s.duration_s;
    g["prompt_tokens"] = trace::to_spec(s.prompt);
    g["output_tokens"] = trace::to_spec(s.output);
    g["lengths_from"] =
        s.lengths_from.path.empty() ? Json(nullptr) : trace_file_json(s.lengths_from);
    if (s.shared_prefix.fraction > 0.0) {
      Json p;
      p["fraction"] = s.shared_prefix.fraction;
      p["num_prompts"] = s.shared_prefix.num_prompts;
      p["prompt_tokens"] = s.shared_prefix.prompt_tokens;
      p["block_tokens"] = s.shared_prefix.block_tokens;
      g["shared_prefix"] = p;
    } else {
      g["shared_prefix"] = nullptr;
    }
    if (s.prompt_pool > 0) g["prompt_pool"] = s.prompt_pool;
    g["seed"] = s.seed;
    j["synthetic"] = g;
  }
  const trace::TransformOptions& t = w.transforms;
  Json tj;
  tj["rate_scale"] = t.rate_scale;
  tj["max_requests"] = t.max_requests;
  tj["window_start_s"] = static_cast<double>(t.window_start_ns) / 1e9;
  tj["window_end_s"] = t.window_end_ns == kTimeNever
                           ? Json(nullptr)
                           : Json(static_cast<double>(t.window_end_ns) / 1e9);
  tj["max_model_len"] = t.max_model_len;
  j["transforms"] = tj;
  // Only a closed loop has it (open-loop reports stay as they were).
  if (w.max_concurrency > 0) j["max_concurrency"] = w.max_concurrency;
  if (w.serial_sessions) j["serial_sessions"] = true;
  return j;
}

Json trace_stats_json(const trace::TraceStats& s, std::string_view command,
                      const std::string& source, const trace::WorkloadOptions& resolved) {
  Json j = envelope("kvsim.trace-stats/v1", command);
  j["source"] = source;
  j["workload"] = workload_json(resolved);
  j["requests"] = s.requests;
  j["rejected_rows"] = s.rejected_rows();
  j["bad_rows_skipped"] = s.reader.bad_rows_skipped;
  j["failed_requests"] = s.reader.failed_requests;
  j["truncated_prompts"] = s.reader.truncated_prompts;
  j["clamped_arrivals"] = s.reader.clamped_arrivals;
  j["rows_read"] = s.reader.rows_read;
  j["duration_s"] = s.duration_s;
  j["rate_rps"] = optional_number(s.rate_rps);
  j["interarrival_cv"] = optional_number(s.interarrival_cv);
  j["prompt_tokens"] = length_json(s.prompt_tokens);
  j["output_tokens"] = length_json(s.output_tokens);
  j["total_tokens"] = length_json(s.total_tokens);
  if (s.has_prefix_hashes) {
    j["prefix_block_reuse_fraction"] = optional_number(s.prefix_block_reuse_fraction);
    j["prefix_token_reuse_fraction"] = optional_number(s.prefix_token_reuse_fraction);
    j["prefix_block_tokens"] = s.prefix_block_tokens;
    j["prefix_blocks"] = s.prefix_blocks;
    j["distinct_prefix_hashes"] = s.distinct_prefix_hashes;
  }
  if (s.sessions > 0) {
    j["sessions"] = {{"count", s.sessions},
                     {"requests", s.requests_with_session},
                     {"max_requests", s.max_session_requests}};
  }
  return j;
}

std::string trace_stats_table(const trace::TraceStats& s, const std::string& source) {
  KeyValueTable kv;
  kv.set_title("Trace statistics: " + source);
  kv.add("requests", with_commas(s.requests));
  kv.add("rejected rows", with_commas(s.rejected_rows()),
         "bad rows skipped " + with_commas(s.reader.bad_rows_skipped) + ", failed requests " +
             with_commas(s.reader.failed_requests));
  if (s.reader.truncated_prompts > 0) {
    kv.add("truncated prompts", with_commas(s.reader.truncated_prompts));
  }
  if (s.reader.clamped_arrivals > 0) {
    kv.add("clamped arrivals", with_commas(s.reader.clamped_arrivals), "within 1 ms backwards");
  }
  kv.add("duration", fixed(s.duration_s, 3) + " s");
  kv.add("mean rate", rate_text(s.rate_rps, 3) + " req/s", "(requests - 1) / duration");
  kv.add("interarrival CV", rate_text(s.interarrival_cv, 3), "1 for Poisson");
  if (s.has_prefix_hashes) {
    kv.add("prefix block reuse",
           s.prefix_block_reuse_fraction ? fixed(*s.prefix_block_reuse_fraction, 3) : "-",
           "infinite prefix cache hit ratio (blocks)");
    kv.add("prefix token reuse",
           s.prefix_token_reuse_fraction ? fixed(*s.prefix_token_reuse_fraction, 3) : "-",
           "(prompt tokens)");
    kv.add("prefix blocks", with_commas(s.prefix_blocks),
           with_commas(s.distinct_prefix_hashes) + " distinct, " +
               std::to_string(s.prefix_block_tokens) + " tokens each");
  }
  if (s.sessions > 0) {
    kv.add("sessions", with_commas(s.sessions),
           with_commas(s.requests_with_session) + " requests with a session id, at most " +
               with_commas(s.max_session_requests) + " in one");
  }
  Table lengths({"tokens", "mean", "p50", "p90", "p99", "max", "min"});
  const auto row = [&](const char* name, const trace::LengthSummary& l) {
    if (l.count == 0) {
      lengths.add_row({name, "-", "-", "-", "-", "-", "-"});
      return;
    }
    lengths.add_row({name, fixed(l.mean, 1), fixed(l.p50, 1), fixed(l.p90, 1), fixed(l.p99, 1),
                     with_commas(l.max), with_commas(l.min)});
  };
  row("prompt", s.prompt_tokens);
  row("output", s.output_tokens);
  row("total", s.total_tokens);
  return kv.render() + "\n" + lengths.render();
}

std::string trace_stats_csv(const trace::TraceStats& s, const std::string& source) {
  std::vector<std::string> header = {"source",           "requests",        "rejected_rows",
                                     "bad_rows_skipped", "failed_requests", "truncated_prompts",
                                     "duration_s",       "rate_rps",        "interarrival_cv"};
  std::vector<std::string> row = {source,
                                  std::to_string(s.requests),
                                  std::to_string(s.rejected_rows()),
                                  std::to_string(s.reader.bad_rows_skipped),
                                  std::to_string(s.reader.failed_requests),
                                  std::to_string(s.reader.truncated_prompts),
                                  csv_number(s.duration_s),
                                  optional_csv(s.rate_rps),
                                  optional_csv(s.interarrival_cv)};
  const auto lengths = [&](const std::string& prefix, const trace::LengthSummary& l) {
    for (const char* stat : {"mean", "p50", "p90", "p99", "max", "min"}) {
      header.push_back(prefix + "_" + stat);
    }
    if (l.count == 0) {
      row.insert(row.end(), 6, "");
      return;
    }
    row.push_back(csv_number(l.mean));
    row.push_back(csv_number(l.p50));
    row.push_back(csv_number(l.p90));
    row.push_back(csv_number(l.p99));
    row.push_back(std::to_string(l.max));
    row.push_back(std::to_string(l.min));
  };
  lengths("prompt_tokens", s.prompt_tokens);
  lengths("output_tokens", s.output_tokens);
  lengths("total_tokens", s.total_tokens);
  header.push_back("prefix_block_reuse_fraction");
  row.push_back(s.has_prefix_hashes ? optional_csv(s.prefix_block_reuse_fraction) : "");
  return csv_line(header) + csv_line(row);
}

}  // namespace kvsim::report
