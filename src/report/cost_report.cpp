#include "report/cost_report.h"

#include <cstdio>

#include "common/format.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

std::string op_bound(const cost::OpCost& op) {
  if (cost::op_kind(op.name) == "step_overhead") return "cpu";
  if (op.flops == 0 && op.bytes == 0) return "fixed";
  return op.compute_bound ? "compute" : "memory";
}

std::int64_t tokens_of(const CostReportInput& in) {
  std::int64_t t = in.decode_batch;
  for (const auto& p : in.prefills) t += p.num_tokens;
  return t;
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

Json batch_json(const std::optional<std::int64_t>& b) {
  return b ? Json(*b) : Json(nullptr);
}

}  // namespace

Json cost_json(const cost::StepCost& c, const CostReportInput& in) {
  Json j = envelope("kvsim.cost/v1", "cost");
  const auto split = cost::bound_split(c);
  j["step_time_s"] = c.time_s;
  j["bound"] = split.compute_bound() ? "compute" : "memory";
  j["compute_bound_time_s"] = split.compute_s;
  j["memory_bound_time_s"] = split.memory_s;
  const std::int64_t tokens = tokens_of(in);
  j["tokens"] = tokens;
  j["tokens_per_s"] = c.time_s > 0 ? static_cast<double>(tokens) / c.time_s : 0.0;
  Json ops = Json::array();
  for (const auto& op : c.ops) {
    Json o;
    o["name"] = op.name;
    o["time_s"] = op.time_s;
    o["fraction"] = c.time_s > 0 ? op.time_s / c.time_s : 0.0;
    o["flops"] = op.flops;
    o["bytes"] = op.bytes;
    o["bound"] = op_bound(op);
    ops.push_back(o);
  }
  j["ops"] = ops;
  if (in.crossover) {
    Json x;
    x["context"] = in.context;
    x["decode_batch_step_compute_bound"] = batch_json(in.crossover->step_batch);
    x["decode_batch_gemm_compute_bound"] = batch_json(in.crossover->gemm_batch);
    j["crossover"] = x;
  }
  Json inputs;
  inputs["model"] = in.model;
  inputs["gpu"] = in.gpu;
  inputs["tensor_parallel_size"] = in.tensor_parallel_size;
  if (in.pipeline_parallel_size > 1) inputs["pipeline_parallel_size"] = in.pipeline_parallel_size;
  inputs["cost_model"] = in.cost_model;
  if (in.cost_model == "roofline") {
    inputs["weight_dtype"] = in.weight_dtype;
    inputs["activation_dtype"] = in.activation_dtype;
    inputs["kv_cache_dtype"] = in.kv_dtype;
    Json profile;
    profile["kind"] = in.profile_kind;
    profile["device"] = in.profile_device;
    profile["default_op_classes"] = in.defaulted_classes;
    profile["measured_op_classes"] = in.measured_classes;
    profile["tables_used"] = in.tables_used;
    inputs["cost_profile"] = profile;
  }
  inputs["step_overhead_s"] = in.step_overhead_s;
  if (in.seq_overhead_s != 0) inputs["seq_overhead_s"] = in.seq_overhead_s;
  if (in.prefill_token_overhead_s != 0)
    inputs["prefill_token_overhead_s"] = in.prefill_token_overhead_s;
  if (in.context_token_overhead_s != 0)
    inputs["context_token_overhead_s"] = in.context_token_overhead_s;
  Json prefills = Json::array();
  for (const auto& p : in.prefills) {
    prefills.push_back(Json{{"tokens", p.num_tokens}, {"cached_tokens", p.num_cached_tokens}});
  }
  inputs["prefills"] = prefills;
  inputs["decode_batch"] = in.decode_batch;
  inputs["context"] = in.context;
  inputs["num_sampling"] = in.num_sampling;
  if (in.expert_shard_ranks > 0) {
    inputs["routed_experts"] =
        Json{{"gpus", in.expert_shard_ranks}, {"expert_parallel", in.expert_parallel}};
  }
  j["inputs"] = inputs;
  return j;
}

std::string cost_table(const cost::StepCost& c, const CostReportInput& in) {
  Table t({"op", "time", "share", "FLOPs", "bytes", "bound"});
  std::string title = "Step cost: " + in.model + " on " + in.gpu + ", TP " +
                      std::to_string(in.tensor_parallel_size) + " (" + in.cost_model + ")";
  if (in.pipeline_parallel_size > 1) {
    title += "; " + std::to_string(in.pipeline_parallel_size) +
             " pipeline stages, one batch through each in turn";
  }
  if (in.expert_shard_ranks > 0) {
    title += "; routed experts " + std::string(in.expert_parallel ? "whole" : "split") + " over " +
             std::to_string(in.expert_shard_ranks) +
             " GPUs, this rank's tokens only (no other data-parallel rank in the step)";
  }
  t.set_title(title);
  for (const auto& op : c.ops) {
    t.add_row({op.name, human_seconds(op.time_s), percent(c.time_s > 0 ? op.time_s / c.time_s : 0),
               op.flops > 0 ? sci(op.flops) : "-",
               op.bytes > 0 ? human_bytes(static_cast<Bytes>(op.bytes)) : "-", op_bound(op)});
  }
  KeyValueTable kv;
  const auto split = cost::bound_split(c);
  // Consecutive equal chunks as one entry ("200 × prefill 8 (+205 cached)"): a step of many
  // prompts stays one line.
  std::string batch;
  for (std::size_t i = 0; i < in.prefills.size();) {
    const auto& p = in.prefills[i];
    std::size_t n = 1;
    while (i + n < in.prefills.size() && in.prefills[i + n].num_tokens == p.num_tokens &&
           in.prefills[i + n].num_cached_tokens == p.num_cached_tokens) {
      ++n;
    }
    batch += (batch.empty() ? "" : ", ") + (n > 1 ? with_commas(n) + " × " : std::string()) +
             "prefill " + with_commas(p.num_tokens) +
             (p.num_cached_tokens ? " (+" + with_commas(p.num_cached_tokens) + " cached)" : "");
    i += n;
  }
  if (in.decode_batch > 0) {
    batch += (batch.empty() ? "" : ", ") + std::string("decode ") + with_commas(in.decode_batch) +
             " × context " + with_commas(in.context);
  }
  kv.add_text("batch", batch);
  kv.add("step time", human_seconds(c.time_s));
  kv.add("bound", split.compute_bound() ? "compute" : "memory",
         human_seconds(split.compute_s) + " compute-bound vs " + human_seconds(split.memory_s) +
             " memory-bound");
  const std::int64_t tokens = tokens_of(in);
  if (c.time_s > 0) kv.add("tokens/s", fixed(static_cast<double>(tokens) / c.time_s, 0));
  if (in.crossover) {
    auto show = [](const std::optional<std::int64_t>& b) {
      return b ? with_commas(*b) : std::string("none up to 65,536");
    };
    kv.add("decode crossover", show(in.crossover->step_batch),
           "batch at which a decode step at context " + with_commas(in.context) +
               " turns compute-bound");
    kv.add("GEMM crossover", show(in.crossover->gemm_batch), "batch at which the dense GEMMs do");
  }
  if (in.cost_model == "roofline") {
    kv.add_text("dtypes", "weights " + in.weight_dtype + ", activations " + in.activation_dtype +
                              ", KV " + in.kv_dtype);
    std::string prof =
        in.profile_kind + (in.profile_device.empty() ? "" : " (" + in.profile_device + ")");
    if (!in.defaulted_classes.empty()) {
      std::string list;
      for (const auto& d : in.defaulted_classes) list += (list.empty() ? "" : ", ") + d;
      prof += "; default efficiencies for " + list;
    }
    kv.add_text("cost profile", prof);
  }
  if (in.seq_overhead_s != 0 || in.prefill_token_overhead_s != 0 ||
      in.context_token_overhead_s != 0) {
    std::string cpu = human_seconds(in.step_overhead_s) + " per step + " +
                      human_seconds(in.seq_overhead_s) + " per sequence + " +
                      human_seconds(in.prefill_token_overhead_s) + " per prompt token";
    if (in.context_token_overhead_s != 0) {
      cpu += " + " + human_seconds(in.context_token_overhead_s) + " per context token";
    }
    kv.add_text("CPU overhead", cpu);
  }
  return t.render() + "\n" + kv.render();
}

std::string cost_csv(const cost::StepCost& c) {
  std::string out = csv_line({"name", "time_s", "fraction", "flops", "bytes", "bound"});
  for (const auto& op : c.ops) {
    char buf[4][40];
    std::snprintf(buf[0], sizeof buf[0], "%.9g", op.time_s);
    std::snprintf(buf[1], sizeof buf[1], "%.6g", c.time_s > 0 ? op.time_s / c.time_s : 0.0);
    std::snprintf(buf[2], sizeof buf[2], "%.17g", op.flops);
    std::snprintf(buf[3], sizeof buf[3], "%.17g", op.bytes);
    out += csv_line({op.name, buf[0], buf[1], buf[2], buf[3], op_bound(op)});
  }
  return out;
}

}  // namespace kvsim::report
