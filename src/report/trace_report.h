#pragma once
// `kvsim trace stats` output (kvsim.trace-stats/v1 JSON, table, CSV) and the JSON description of
// a workload for every report's inputs.workload.

#include <string>
#include <string_view>

#include "report/json.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"

namespace kvsim::report {

// kvsim.trace-stats/v1:
//   {schema, kvsim_version, command, source, workload, requests, rejected_rows,
//    bad_rows_skipped, failed_requests, truncated_prompts, clamped_arrivals, rows_read,
//    duration_s, rate_rps, interarrival_cv,
//    prompt_tokens{mean,p50,p90,p99,max,min}, output_tokens{…}, total_tokens{…},
//    prefix_block_reuse_fraction, prefix_token_reuse_fraction, prefix_block_tokens,
//    prefix_blocks, distinct_prefix_hashes   (the prefix fields only when the trace has hashes)}
// rate_rps / interarrival_cv are null when undefined (fewer than 2 requests, zero duration).
// `source` says what was read (a reader's describe()); `workload` is workload_json(resolved).
Json trace_stats_json(const trace::TraceStats& stats, std::string_view command,
                      const std::string& source, const trace::WorkloadOptions& resolved);
std::string trace_stats_table(const trace::TraceStats& stats, const std::string& source);
// Header line and one row with the same fields flattened (prompt_tokens_mean, ...).
std::string trace_stats_csv(const trace::TraceStats& stats, const std::string& source);

// The resolved workload as report fields: {source: "trace"|"synthetic", trace{path, format,
// skip_bad_rows, prefix_block_tokens} | synthetic{arrival, rate_rps, cv, num_requests, duration_s,
// prompt_tokens (spec), output_tokens (spec), lengths_from, arrival_trace, shared_prefix{...},
// seed}, transforms{rate_scale, max_requests, window_start_s, window_end_s, max_model_len}}.
Json workload_json(const trace::WorkloadOptions& resolved);

// {rows_read, requests, bad_rows_skipped, failed_requests, truncated_prompts, clamped_arrivals}.
Json reader_stats_json(const trace::ReaderStats& stats);

}  // namespace kvsim::report
