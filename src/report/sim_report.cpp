#include "report/sim_report.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>

#include "common/error.h"
#include "common/format.h"
#include "report/table.h"
#include "sim/slo.h"

namespace kvsim::report {
namespace {

double per_second(double count, TimeNs duration_ns) {
  return duration_ns > 0 ? count * 1e9 / static_cast<double>(duration_ns) : 0.0;
}

// Seconds from nanoseconds by division, so exact decimals stay exact (5,800,000 ns → 0.0058).
double ns_s(double ns) {
  return ns / 1e9;
}
double seconds(TimeNs ns) {
  return static_cast<double>(ns) / 1e9;
}

const char* const kPercentileMethod =
    "nearest rank; exact up to 1024 samples, beyond that a log-bucketed histogram (128 buckets "
    "per power of two) with relative error <= 0.39%; mean and max exact";

struct Latency {
  const char* name;
  const sim::LatencyHistogram* histogram;
};

std::vector<Latency> latencies(const sim::Metrics& m) {
  return {{"ttft_s", &m.ttft}, {"tpot_s", &m.tpot},   {"itl_s", &m.itl},
          {"e2e_s", &m.e2e},   {"queue_s", &m.queue}, {"normalized_latency_s", &m.normalized}};
}

Json null_or_seconds(TimeNs ns) {
  return ns > 0 ? Json(seconds(ns)) : Json(nullptr);
}

// Whether the SLO targets hold at their percentiles (true without targets), every request done.
bool slo_met(const sim::SimResult& result, const sim::SloOptions& slo) {
  return sim::check_slos(slo, sim::observe(result.metrics)).met && result.requests_unfinished == 0;
}

std::string ms(double ns) {
  return fixed(ns * 1e-6, 2);
}

}  // namespace

void add_sim_serving_json(Json& serving, const sim::SimOptions& o) {
  if (!serving.is_object()) serving = Json::object();
  serving["replicas"] = o.num_replicas;
  serving["router"] = std::string(sim::router_name(o.router));
  serving["scheduler"] = std::string(sim::scheduler_name(o.scheduler.kind));
  serving["max_num_seqs"] = o.scheduler.max_num_seqs;
  const std::int64_t budget = sim::effective_max_num_batched_tokens(o.scheduler);
  serving["max_num_batched_tokens"] =
      budget == std::numeric_limits<std::int64_t>::max() ? Json(nullptr) : Json(budget);
  serving["long_prefill_token_threshold"] = o.scheduler.long_prefill_token_threshold;
  if (o.scheduler.kind == sim::SchedulerKind::kVllmV1) {
    // The largest CUDA-graph capture size (0: eager).
    serving["cuda_graph_max_size"] = o.scheduler.cuda_graph_max_size;
    serving["cudagraph_mode"] = std::string(sim::cuda_graph_mode_name(o.scheduler.cuda_graph_mode));
  }
  serving["preemption"] = std::string(sim::preemption_name(o.scheduler.preemption));
  serving["swap_space_bytes"] = o.scheduler.swap_space_bytes;
  serving["enable_prefix_caching"] = o.enable_prefix_caching;
  if (o.warm_prefix_cache) serving["warm_prefix_cache"] = true;
  if (o.kv_offload_bytes > 0) {
    serving["kv_offload_bytes"] = o.kv_offload_bytes;
    // null: the GPU profile's PCIe bandwidth (the cost model's swap time).
    serving["kv_offload_bandwidth_gb_s"] = o.kv_offload_bandwidth_bytes_per_s > 0
                                               ? Json(o.kv_offload_bandwidth_bytes_per_s / 1e9)
                                               : Json(nullptr);
  }
  serving["time_limit_s"] = null_or_seconds(o.time_limit_ns);
  Json slo;
  slo["ttft_ms"] =
      o.slo.ttft_ns > 0 ? Json(static_cast<double>(o.slo.ttft_ns) / 1e6) : Json(nullptr);
  slo["tpot_ms"] =
      o.slo.tpot_ns > 0 ? Json(static_cast<double>(o.slo.tpot_ns) / 1e6) : Json(nullptr);
  slo["e2e_ms"] = o.slo.e2e_ns > 0 ? Json(static_cast<double>(o.slo.e2e_ns) / 1e6) : Json(nullptr);
  slo["percentile"] = o.slo.percentile;
  serving["slo"] = slo;
}

Json latency_json(const sim::LatencyHistogram& h) {
  Json j;
  j["mean"] = ns_s(h.mean());
  j["p50"] = ns_s(h.percentile(50));
  j["p90"] = ns_s(h.percentile(90));
  j["p95"] = ns_s(h.percentile(95));
  j["p99"] = ns_s(h.percentile(99));
  j["max"] = ns_s(static_cast<double>(h.max()));
  return j;
}

Json summary_json(const sim::SimResult& result, const sim::SloOptions& slo) {
  const sim::Metrics& m = result.metrics;
  const TimeNs d = result.duration_ns;
  Json s;
  s["requests_completed"] = m.completed;
  s["requests_rejected"] = m.rejected();
  s["requests_unfinished"] = result.requests_unfinished;
  s["rejected_by_reason"] = Json{{"prompt_too_long", m.rejected_prompt_too_long},
                                 {"too_long", m.rejected_too_long},
                                 {"never_fits", m.rejected_never_fits}};
  s["sim_duration_s"] = seconds(d);
  s["throughput_rps"] = per_second(static_cast<double>(m.completed), d);
  s["output_tokens_per_s"] = per_second(static_cast<double>(m.output_tokens), d);
  s["total_tokens_per_s"] = per_second(static_cast<double>(m.prompt_tokens + m.output_tokens), d);
  s["goodput_rps"] = per_second(static_cast<double>(m.slo_good), d);
  s["slo_attainment"] = sim::slo_attainment(m);
  for (const Latency& l : latencies(m)) s[l.name] = latency_json(*l.histogram);
  s["preemptions"] = m.preemptions_recompute + m.preemptions_swap;
  s["preemptions_recompute"] = m.preemptions_recompute;
  s["preemptions_swap"] = m.preemptions_swap;
  s["mean_running"] = result.mean_running;
  s["max_running"] = result.max_running;
  s["mean_waiting"] = result.mean_waiting;
  s["max_waiting"] = result.max_waiting;
  if (slo.any_latency()) {
    Json j;
    j["ttft_s"] = null_or_seconds(slo.ttft_ns);
    j["tpot_s"] = null_or_seconds(slo.tpot_ns);
    j["e2e_s"] = null_or_seconds(slo.e2e_ns);
    j["percentile"] = slo.percentile;
    const sim::SloObservation observed = sim::observe(m);
    for (const sim::LatencyTarget& t : sim::latency_targets(slo)) {
      j[std::string(t.metric_name) + "_at_percentile_s"] =
          ns_s(observed.latency_ns(t.metric, t.percentile));
    }
    j["met"] = slo_met(result, slo);
    s["slo"] = j;
  } else {
    s["slo"] = nullptr;
  }
  s["saturation"] = Json{{"verdict", sim::saturation_name(result.saturation)},
                         {"queue_delay_slope", result.queue_delay_slope},
                         {"outstanding_at_last_arrival", result.outstanding_at_end_of_arrivals}};
  s["steps"] = m.num_steps;
  s["sequence_steps"] = m.num_sequence_steps;
  s["swap_out_bytes"] = m.swap_out_bytes;
  s["swap_in_bytes"] = m.swap_in_bytes;
  if (m.kv_transfer.count() > 0) {
    // Disaggregated serving: first token (prefill) to KV arrival at the decode pool.
    Json t = latency_json(m.kv_transfer);
    t["count"] = m.kv_transfer.count();
    t["bytes"] = m.kv_transfer_bytes;
    s["kv_transfer_s"] = t;
  }
  s["percentile_method"] = kPercentileMethod;
  return s;
}

// Per-tier prefix-cache hits with KV offload: the GPU's (memory.prefix_cache_hit_rate's) and the
// CPU tier's, whose hits were loaded over PCIe; the tier's traffic and occupancy.
Json prefix_cache_tiers_json(const sim::SimResult& result) {
  const sim::Metrics& m = result.metrics;
  const memory::OffloadStats& o = result.offload;
  const auto rate = [&](std::int64_t tokens) {
    return result.prefix_query_tokens > 0
               ? static_cast<double>(tokens) / static_cast<double>(result.prefix_query_tokens)
               : 0.0;
  };
  Json j;
  j["query_tokens"] = result.prefix_query_tokens;
  j["gpu_hit_tokens"] = result.prefix_hit_tokens;
  j["gpu_hit_rate"] = rate(result.prefix_hit_tokens);
  j["cpu_hit_tokens"] = result.prefix_cpu_hit_tokens;
  j["cpu_hit_rate"] = rate(result.prefix_cpu_hit_tokens);
  j["cpu_loads"] = m.offload_loads;
  j["cpu_loaded_bytes"] = m.offload_load_bytes;
  j["cpu_load_time_s"] = seconds(m.offload_load_ns);
  j["cpu_stored_blocks"] = o.stored_blocks;
  j["cpu_stored_bytes"] = o.stored_bytes;
  j["cpu_dropped_blocks"] = o.dropped_blocks;
  // Per GPU (a replica's engines share it).
  const std::int64_t engines = result.num_replicas > 0 ? result.num_replicas : 1;
  j["cpu_tier_blocks"] = o.capacity_blocks / engines;
  j["cpu_tier_used_fraction_at_end"] =
      o.capacity_blocks > 0
          ? static_cast<double>(o.blocks_held) / static_cast<double>(o.capacity_blocks)
          : 0.0;
  return j;
}

Json memory_json(const sim::SimResult& result) {
  const sim::MemoryFractions& f = result.fraction;
  Json j;
  j["fraction"] = Json{{"token_states", f.token_states},
                       {"reservation", f.reservation},
                       {"internal_fragmentation", f.internal_fragmentation},
                       {"external_fragmentation", f.external_fragmentation},
                       {"free", f.free}};
  j["peak_used_bytes"] = result.peak_used_bytes;
  j["prefix_cache_hit_rate"] = result.prefix_cache_hit_rate();
  if (result.offload_enabled) j["prefix_cache"] = prefix_cache_tiers_json(result);
  j["capacity_bytes"] = result.capacity_bytes;
  j["capacity_tokens"] = result.capacity_slots;
  j["peak_used_fraction"] =
      result.capacity_bytes > 0
          ? static_cast<double>(result.peak_used_bytes) / static_cast<double>(result.capacity_bytes)
          : 0.0;
  return j;
}

Json sim_report_json(const SimReportInputs& inputs, const sim::SimResult& result,
                     const sim::SloOptions& slo, std::string_view command) {
  Json j = envelope("kvsim.report/v1", command);
  Json in;
  in["model"] = inputs.model;
  in["hardware"] = inputs.hardware;
  in["serving"] = inputs.serving;
  in["workload"] = inputs.workload;
  in["seed"] = inputs.seed;
  j["inputs"] = in;
  j["kv"] = inputs.kv;
  j["summary"] = summary_json(result, slo);
  j["memory"] = memory_json(result);
  Json replicas = Json::array();
  for (std::int64_t n : result.completed_per_replica) replicas.push_back(Json{{"completed", n}});
  j["replicas"] = replicas;
  j["workload_reader"] = inputs.workload_reader;
  if (!result.timeline.empty()) {
    Json t = Json::array();
    for (const sim::TimelinePoint& p : result.timeline) {
      t.push_back(Json{{"t", seconds(p.t)},
                       {"running", p.running},
                       {"waiting", p.waiting},
                       {"used_bytes", p.used_bytes},
                       {"reserved_bytes", p.reserved_bytes},
                       {"free_bytes", p.free_bytes},
                       {"token_state_bytes", p.token_state_bytes},
                       {"internal_fragmentation_bytes", p.internal_fragmentation_bytes},
                       {"external_fragmentation_bytes", p.external_fragmentation_bytes}});
    }
    j["timeline"] = t;
  }
  return j;
}

std::string sim_report_table(const SimReportInputs& inputs, const sim::SimResult& result,
                             const sim::SloOptions& slo) {
  const sim::Metrics& m = result.metrics;
  const TimeNs d = result.duration_ns;
  KeyValueTable kv;
  kv.set_title("kvsim simulate");
  kv.add_section("Deployment");
  if (!inputs.model_label.empty()) kv.add("model", inputs.model_label);
  if (!inputs.deployment_label.empty()) kv.add("deployment", inputs.deployment_label);
  if (!inputs.workload_label.empty()) kv.add("workload", inputs.workload_label);
  kv.add_section("Requests");
  kv.add("completed", with_commas(m.completed));
  kv.add("rejected", with_commas(m.rejected()),
         m.rejected() > 0
             ? "prompt > max_model_len " + with_commas(m.rejected_prompt_too_long) +
                   ", prompt + output > max_model_len " + with_commas(m.rejected_too_long) +
                   ", never fit " + with_commas(m.rejected_never_fits)
             : "");
  if (result.requests_unfinished > 0) {
    kv.add("unfinished", with_commas(result.requests_unfinished), "at the time limit");
  }
  kv.add("simulated time", human_seconds(seconds(d)));
  kv.add("throughput", fixed(per_second(static_cast<double>(m.completed), d), 3) + " req/s");
  kv.add("output tokens", fixed(per_second(static_cast<double>(m.output_tokens), d), 1) + " tok/s");
  kv.add(
      "total tokens",
      fixed(per_second(static_cast<double>(m.prompt_tokens + m.output_tokens), d), 1) + " tok/s");
  if (slo.any_latency()) {
    kv.add("goodput", fixed(per_second(static_cast<double>(m.slo_good), d), 3) + " req/s");
    kv.add("SLO attainment", percent(sim::slo_attainment(m)));
    kv.add("SLO at p" +
               fixed(slo.percentile, slo.percentile == static_cast<int>(slo.percentile) ? 0 : 1),
           slo_met(result, slo) ? "met" : "not met");
  }
  kv.add("preemptions", with_commas(m.preemptions_recompute + m.preemptions_swap),
         m.preemptions_swap > 0 ? with_commas(m.preemptions_swap) + " by swap" : "");
  kv.add("running batch", fixed(result.mean_running, 1) + " mean",
         "max " + with_commas(result.max_running));
  kv.add("saturation", sim::saturation_name(result.saturation),
         "queueing delay slope " + fixed(result.queue_delay_slope, 3) + " s/s");

  Table lat({"latency (ms)", "mean", "p50", "p90", "p95", "p99", "max"});
  const char* labels[] = {"TTFT", "TPOT", "ITL", "E2E", "queueing", "E2E / output token"};
  int i = 0;
  for (const Latency& l : latencies(m)) {
    const sim::LatencyHistogram& h = *l.histogram;
    lat.add_row({labels[i++], ms(h.mean()), ms(h.percentile(50)), ms(h.percentile(90)),
                 ms(h.percentile(95)), ms(h.percentile(99)), ms(static_cast<double>(h.max()))});
  }

  KeyValueTable mem;
  mem.add_section("KV cache (time-weighted, per GPU " + human_bytes(result.capacity_bytes) + ")");
  const sim::MemoryFractions& f = result.fraction;
  mem.add("token states", percent(f.token_states));
  mem.add("reservation", percent(f.reservation));
  mem.add("internal fragmentation", percent(f.internal_fragmentation));
  mem.add("external fragmentation", percent(f.external_fragmentation));
  mem.add("free", percent(f.free));
  mem.add("peak used", human_bytes(result.peak_used_bytes));
  if (result.prefix_query_tokens > 0)
    mem.add("prefix-cache hit rate", percent(result.prefix_cache_hit_rate()));
  if (result.offload_enabled) {
    const Json t = prefix_cache_tiers_json(result);
    mem.add("CPU offload tier hit rate", percent(t["cpu_hit_rate"].get<double>()),
            human_bytes(t["cpu_loaded_bytes"].get<Bytes>()) + " loaded in " +
                fixed(t["cpu_load_time_s"].get<double>(), 3) + " s");
  }
  return kv.render() + "\n" + lat.render() + mem.render();
}

namespace {

// The CSV's columns, shared by its header and its row.
constexpr const char* kCsvSummaryKeys[] = {
    "requests_completed", "requests_rejected", "requests_unfinished",
    "sim_duration_s",     "throughput_rps",    "output_tokens_per_s",
    "total_tokens_per_s", "goodput_rps",       "slo_attainment"};
constexpr const char* kCsvLatencies[] = {"ttft_s", "tpot_s",  "itl_s",
                                         "e2e_s",  "queue_s", "normalized_latency_s"};
constexpr const char* kCsvLatencyStats[] = {"mean", "p50", "p90", "p95", "p99", "max"};
constexpr const char* kCsvFractions[] = {"token_states", "reservation", "internal_fragmentation",
                                         "external_fragmentation", "free"};

}  // namespace

std::vector<std::string> sim_csv_header() {
  std::vector<std::string> h(std::begin(kCsvSummaryKeys), std::end(kCsvSummaryKeys));
  for (const char* name : kCsvLatencies) {
    for (const char* stat : kCsvLatencyStats) h.push_back(std::string(name) + "_" + stat);
  }
  for (const char* name : {"preemptions", "mean_running", "max_running", "saturation"}) {
    h.push_back(name);
  }
  for (const char* name : kCsvFractions) h.push_back(name);
  for (const char* name : {"peak_used_bytes", "prefix_cache_hit_rate"}) h.push_back(name);
  return h;
}

std::vector<std::string> sim_csv_row(const sim::SimResult& result, const sim::SloOptions& slo) {
  const Json s = summary_json(result, slo);
  const Json mem = memory_json(result);
  auto str = [](const Json& v) { return v.dump(); };
  std::vector<std::string> row;
  for (const char* k : kCsvSummaryKeys) row.push_back(str(s[k]));
  for (const char* name : kCsvLatencies) {
    for (const char* stat : kCsvLatencyStats) row.push_back(str(s[name][stat]));
  }
  row.push_back(str(s["preemptions"]));
  row.push_back(str(s["mean_running"]));
  row.push_back(str(s["max_running"]));
  row.push_back(sim::saturation_name(result.saturation));
  for (const char* k : kCsvFractions) row.push_back(str(mem["fraction"][k]));
  row.push_back(str(mem["peak_used_bytes"]));
  row.push_back(str(mem["prefix_cache_hit_rate"]));
  return row;
}

std::string sim_report_csv(const sim::SimResult& result, const sim::SloOptions& slo) {
  return csv_line(sim_csv_header()) + csv_line(sim_csv_row(result, slo));
}

std::vector<std::string> sim_csv_input_header() {
  return {"model",
          "gpu",
          "tensor_parallel_size",
          "replicas",
          "kv_cache_dtype",
          "kv_dtype",
          "allocator",
          "placement",
          "scheduler",
          "preemption",
          "block_size",
          "max_num_seqs",
          "max_num_batched_tokens",
          "enable_prefix_caching",
          "workload",
          "seed"};
}

std::vector<std::string> sim_csv_input_row(const SimReportInputs& in) {
  auto cell = [](const Json& obj, std::initializer_list<const char*> keys) {
    const Json* v = &obj;
    for (const char* k : keys) {
      if (!v->is_object() || !v->contains(k)) return std::string();
      v = &(*v)[k];
    }
    if (v->is_null()) return std::string();
    return v->is_string() ? v->get<std::string>() : v->dump();
  };
  const Json& sv = in.serving;
  return {cell(in.model, {"name"}),
          cell(in.hardware, {"name"}),
          cell(sv, {"tensor_parallel_size"}),
          cell(sv, {"replicas"}),
          cell(sv, {"kv_cache_dtype"}),
          cell(sv, {"kv_format", "dtype"}),
          cell(sv, {"allocator"}),
          cell(sv, {"placement"}),
          cell(sv, {"scheduler"}),
          cell(sv, {"preemption"}),
          cell(sv, {"block_size"}),
          cell(sv, {"max_num_seqs"}),
          cell(sv, {"max_num_batched_tokens"}),
          cell(sv, {"enable_prefix_caching"}),
          in.workload_label,
          std::to_string(in.seed)};
}

std::string sim_report_csv(const SimReportInputs& inputs, const sim::SimResult& result,
                           const sim::SloOptions& slo) {
  std::vector<std::string> header = sim_csv_input_header();
  for (auto& h : sim_csv_header()) header.push_back(std::move(h));
  std::vector<std::string> row = sim_csv_input_row(inputs);
  for (auto& c : sim_csv_row(result, slo)) row.push_back(std::move(c));
  return csv_line(header) + csv_line(row);
}

std::string timeline_csv(const sim::SimResult& result) {
  std::string out =
      "t_s,running,waiting,used_bytes,reserved_bytes,free_bytes,token_state_bytes,"
      "internal_fragmentation_bytes,external_fragmentation_bytes\n";
  for (const sim::TimelinePoint& p : result.timeline) {
    out += Json(seconds(p.t)).dump() + "," + std::to_string(p.running) + "," +
           std::to_string(p.waiting);
    for (const Bytes b : {p.used_bytes, p.reserved_bytes, p.free_bytes, p.token_state_bytes,
                          p.internal_fragmentation_bytes, p.external_fragmentation_bytes}) {
      out += ',';
      out += std::to_string(b);
    }
    out += '\n';
  }
  return out;
}

RequestLog::RequestLog(std::string path)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw Error(ErrorLocation{path_, 0, 0, "--requests"},
                std::string("cannot create the file: ") + std::strerror(errno));
  }
  static const char kHeader[] =
      "id,replica,state,reject_reason,prompt_tokens,output_tokens,arrival_s,first_scheduled_s,"
      "first_token_s,finish_s,queue_s,ttft_s,tpot_s,e2e_s,preemptions,cached_tokens\n";
  std::fputs(kHeader, file_);
}

RequestLog::~RequestLog() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

void RequestLog::on_request_end(const sim::Request& r) {
  auto time = [](TimeNs ns) { return ns < 0 ? std::string() : Json(seconds(ns)).dump(); };
  auto span = [](TimeNs from, TimeNs to) {
    return (from < 0 || to < 0) ? std::string() : Json(seconds(to - from)).dump();
  };
  const bool finished = r.state == sim::RequestState::kFinished;
  std::string tpot;
  if (finished && r.output_tokens > 1) {
    tpot = Json(seconds(r.finish_ns - r.first_token_ns) / static_cast<double>(r.output_tokens - 1))
               .dump();
  }
  line_.clear();
  const std::string replica =
      r.replica == sim::Request::kNoReplica ? std::string() : std::to_string(r.replica);
  line_ += std::to_string(r.id) + "," + replica + "," + sim::request_state_name(r.state) + "," +
           sim::reject_reason_name(r.reject_reason) + "," + std::to_string(r.prompt_tokens) + "," +
           std::to_string(r.output_tokens) + "," + time(r.arrival_ns) + "," +
           time(r.first_scheduled_ns) + "," + time(r.first_token_ns) + "," +
           time(finished || r.state == sim::RequestState::kRejected ? r.finish_ns : -1) + "," +
           span(r.arrival_ns, r.first_scheduled_ns) + "," + span(r.arrival_ns, r.first_token_ns) +
           "," + tpot + "," + (finished ? span(r.arrival_ns, r.finish_ns) : std::string()) + "," +
           std::to_string(r.num_preemptions) + "," + std::to_string(r.cached_tokens) + "\n";
  std::fputs(line_.c_str(), file_);
}

void RequestLog::commit() {
  const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!ok || !closed || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp_path_.c_str());
    throw Error(ErrorLocation{path_, 0, 0, "--requests"}, "cannot write the file: " + reason);
  }
}

}  // namespace kvsim::report
