#pragma once
// The kvsim.report/v1 document of `kvsim simulate` (JSON, table, CSV), and the optional
// --requests / --timeline CSV files.
//
// JSON (stable names; added fields may follow, never renamed):
//   schema, kvsim_version, command,
//   inputs   {model, hardware, serving, workload, seed}
//   kv       {...}  (report/kv_report.h)
//   summary  {requests_completed, requests_rejected, requests_unfinished,
//             rejected_by_reason{prompt_too_long, too_long, never_fits}, sim_duration_s,
//             throughput_rps, output_tokens_per_s, total_tokens_per_s, goodput_rps,
//             slo_attainment, ttft_s{mean,p50,p90,p95,p99,max}, tpot_s{…}, itl_s{…}, e2e_s{…},
//             queue_s{…}, normalized_latency_s{…} (E2E / output tokens), preemptions,
//             preemptions_recompute, preemptions_swap, mean_running, max_running, mean_waiting,
//             max_waiting, slo{ttft_s, tpot_s, e2e_s, percentile, ttft_at_percentile_s,
//             tpot_at_percentile_s, e2e_at_percentile_s, met} (null without SLOs),
//             saturation{verdict, queue_delay_slope, outstanding_at_last_arrival}, steps,
//             sequence_steps, swap_out_bytes, swap_in_bytes, percentile_method}
//   memory   {fraction{token_states, reservation, internal_fragmentation,
//             external_fragmentation, free}, peak_used_bytes, prefix_cache_hit_rate,
//             capacity_bytes, capacity_tokens, peak_used_fraction}
//   replicas [{completed}]           (one per replica)
//   workload_reader {rows_read, ...} (what the workload reader saw)
//   timeline [{t, running, waiting, used_bytes, reserved_bytes, free_bytes}]  (with --timeline)
// Times are seconds, bytes integers (per GPU), fractions 0..1.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "report/json.h"
#include "sim/options.h"
#include "sim/simulator.h"

namespace kvsim::report {

// The resolved inputs, as JSON objects built by their owners' writers (spec_json.h,
// trace_report.h, kv_report.h). Any may be null.
struct SimReportInputs {
  Json model;            // model_json
  Json hardware;         // hardware_json
  Json serving;          // serving_json(...) + sim_serving_json(...)
  Json workload;         // workload_json(resolved)
  Json workload_reader;  // reader_stats_json (after the run)
  std::uint64_t seed = 0;
  Json kv;  // kv_json
  // Short labels for tables: "llama-3-70b", "4 × h100-sxm (TP 4)", the workload's description.
  std::string model_label, deployment_label, workload_label;
};

// The simulator's serving settings, added to `serving` (which may already hold the memory
// settings): replicas, router, scheduler, max_num_seqs, max_num_batched_tokens (effective),
// long_prefill_token_threshold, preemption, swap_space_bytes, enable_prefix_caching,
// time_limit_s (null = none), slo{ttft_ms, tpot_ms, e2e_ms, percentile}.
void add_sim_serving_json(Json& serving, const sim::SimOptions& options);

// {mean, p50, p90, p95, p99, max} in seconds (zeros when empty).
Json latency_json(const sim::LatencyHistogram& histogram);

// The summary and memory objects (shared with compare).
Json summary_json(const sim::SimResult& result, const sim::SloOptions& slo);
Json memory_json(const sim::SimResult& result);

// The whole document.
Json sim_report_json(const SimReportInputs& inputs, const sim::SimResult& result,
                     const sim::SloOptions& slo, std::string_view command = "simulate");
// For people: deployment and workload, requests and throughput, a latency table, memory, verdict.
std::string sim_report_table(const SimReportInputs& inputs, const sim::SimResult& result,
                             const sim::SloOptions& slo);
// One header line and one row of the summary and memory fields, flattened (ttft_s_p99, ...).
std::string sim_report_csv(const sim::SimResult& result, const sim::SloOptions& slo);
// The same, led by the deployment's inputs (sim_csv_input_header), so that rows of different
// runs concatenate into one table.
std::string sim_report_csv(const SimReportInputs& inputs, const sim::SimResult& result,
                           const sim::SloOptions& slo);
// model, gpu, tensor_parallel_size, replicas, kv_cache_dtype, kv_dtype, allocator, placement,
// scheduler, preemption, block_size, max_num_seqs, max_num_batched_tokens,
// enable_prefix_caching, workload, seed: what a row's numbers belong to.
std::vector<std::string> sim_csv_input_header();
std::vector<std::string> sim_csv_input_row(const SimReportInputs& inputs);
// The header and row cells behind sim_report_csv (compare adds a label column).
std::vector<std::string> sim_csv_header();
std::vector<std::string> sim_csv_row(const sim::SimResult& result, const sim::SloOptions& slo);

// --timeline: "t_s,running,waiting,used_bytes,reserved_bytes,free_bytes", one line per point.
std::string timeline_csv(const sim::SimResult& result);

// --requests: one CSV row per request as it ends (finished or rejected; at a time limit, also
// those still in flight, and those read but not yet sent: "waiting" with no replica and no
// arrival), in the order they end. Streams to "<path>.tmp.<pid>" and renames it over `path` in
// commit(), so the file is complete or absent. Columns:
//   id,replica,state,reject_reason,prompt_tokens,output_tokens,arrival_s,first_scheduled_s,
//   first_token_s,finish_s,queue_s,ttft_s,tpot_s,e2e_s,preemptions,cached_tokens
// (times empty when they did not happen; replica empty before the request reaches an engine).
class RequestLog final : public sim::SimObserver {
 public:
  // Throws kvsim::Error naming `path` when it cannot be created.
  explicit RequestLog(std::string path);
  ~RequestLog() override;  // removes the temporary file unless committed
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  void on_request_end(const sim::Request& request) override;
  // Flushes and renames into place. Throws kvsim::Error on a write failure.
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  std::string line_;
};

}  // namespace kvsim::report
