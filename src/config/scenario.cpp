#include "config/scenario.h"

#include <cmath>
#include <filesystem>
#include <initializer_list>

#include "common/error.h"
#include "common/strings.h"
#include "config/scenario_yaml.h"
#include "config/workload_yaml.h"
#include "config/yaml_reader.h"

namespace kvsim::config {
namespace {

constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr double kMaxGib = 1 << 20;  // 1 PiB: far above any GPU

TimeNs ms_to_ns(double ms) {
  return std::llround(ms * 1e6);
}

// Marks every key a section accepts as known up front, so that a misspelt one is reported with
// the closest of them ("did you mean") even when the intended key is absent.
void declare(MapReader& r, std::initializer_list<const char*> keys) {
  for (const char* k : keys) r.ignore(k);
}

template <typename Enum, typename Parse>
Enum read_choice(MapReader& r, const std::string& key, Enum current, Parse parse,
                 const std::vector<std::string>& names) {
  if (!r.has(key)) return current;
  const std::string value = r.get_choice(key, names);
  return *parse(value);
}

void read_serving(MapReader& r, Scenario& s) {
  declare(r, {"replicas", "router", "scheduler", "max_num_seqs", "max_num_batched_tokens",
              "long_prefill_token_threshold", "allocator", "placement", "watermark", "preemption",
              "swap_space_gib", "enable_prefix_caching", "time_limit_s"});
  sim::SimOptions& o = s.sim;
  o.num_replicas = r.optional_int("replicas", 1, 100000).value_or(o.num_replicas);
  o.router = read_choice(r, "router", o.router, sim::parse_router, sim::router_names());
  o.scheduler.kind =
      read_choice(r, "scheduler", o.scheduler.kind, sim::parse_scheduler, sim::scheduler_names());
  o.scheduler.max_num_seqs =
      r.optional_int("max_num_seqs", 1, kMaxCount).value_or(o.scheduler.max_num_seqs);
  o.scheduler.max_num_batched_tokens = r.optional_int("max_num_batched_tokens", 0, kMaxCount)
                                           .value_or(o.scheduler.max_num_batched_tokens);
  o.scheduler.long_prefill_token_threshold =
      r.optional_int("long_prefill_token_threshold", 0, kMaxCount)
          .value_or(o.scheduler.long_prefill_token_threshold);
  s.allocator = read_choice(r, "allocator", s.allocator, memory::parse_allocator_kind,
                            memory::allocator_kind_names());
  s.placement =
      read_choice(r, "placement", s.placement, memory::parse_placement, memory::placement_names());
  if (r.has("watermark")) {
    const double w = r.get_double("watermark", 0.0, 1.0);
    if (w >= 1.0) throw r.error("watermark", "expected a fraction in [0, 1), got 1");
    s.watermark = w;
  }
  o.scheduler.preemption = read_choice(r, "preemption", o.scheduler.preemption,
                                       sim::parse_preemption, sim::preemption_names());
  if (r.has("swap_space_gib")) {
    const double gib = r.get_double("swap_space_gib", 0.0, 1e6);
    o.scheduler.swap_space_bytes =
        static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
  }
  o.enable_prefix_caching = r.optional_bool("enable_prefix_caching", o.enable_prefix_caching);
  if (r.has("time_limit_s")) {
    o.time_limit_ns = seconds_to_ns(r.get_double("time_limit_s", 0.0, 1e9));
  }
  r.finish();
}

void read_slo(MapReader& r, sim::SloOptions& slo) {
  declare(r, {"ttft_ms", "tpot_ms", "e2e_ms", "percentile"});
  if (r.has("ttft_ms")) slo.ttft_ns = ms_to_ns(r.get_double("ttft_ms", 0.0, 1e9));
  if (r.has("tpot_ms")) slo.tpot_ns = ms_to_ns(r.get_double("tpot_ms", 0.0, 1e9));
  if (r.has("e2e_ms")) slo.e2e_ns = ms_to_ns(r.get_double("e2e_ms", 0.0, 1e9));
  if (r.has("percentile")) {
    const double p = r.get_double("percentile", 0.0, 100.0);
    if (p <= 0.0) throw r.error("percentile", "expected a percentile in (0, 100], got 0");
    slo.percentile = p;
  }
  r.finish();
}

void read_cost_model(MapReader& top, Scenario& s) {
  if (!top.has("cost_model")) return;
  const YAML::Node node = top.get_node("cost_model");
  if (node.IsScalar()) {
    const ErrorLocation where = node_location(node, top.file(), top.field("cost_model"));
    s.cost = parse_cost_model_spec(node.as<std::string>(), where);
    return;
  }
  MapReader r(node, top.file(), top.field("cost_model"));
  declare(r, {"kind", "base_us", "prefill_us_per_token", "decode_us_per_seq",
              "context_us_per_token", "swap_gb_per_s", "step_overhead_us"});
  const std::string kind = r.get_choice("kind", {"roofline", "linear"});
  const std::vector<std::string> only_linear = {"base_us", "prefill_us_per_token",
                                                "decode_us_per_seq", "context_us_per_token",
                                                "swap_gb_per_s"};
  for (const std::string& key :
       kind == "linear" ? std::vector<std::string>{"step_overhead_us"} : only_linear) {
    if (r.has(key)) {
      throw r.error(key,
                    "applies to kind: " + std::string(kind == "linear" ? "roofline" : "linear") +
                        " only, and kind is " + kind);
    }
  }
  s.cost = cost::CostModelConfig{};
  if (kind == "linear") {
    s.cost.kind = cost::CostModelKind::kLinear;
    cost::LinearCostParams& p = s.cost.linear;
    p.base_ns = r.optional_double("base_us", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_prefill_token_ns =
        r.optional_double("prefill_us_per_token", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_decode_seq_ns = r.optional_double("decode_us_per_seq", 0.0, 1e12).value_or(0.0) * 1e3;
    p.per_context_token_ns =
        r.optional_double("context_us_per_token", 0.0, 1e12).value_or(0.0) * 1e3;
    if (r.has("swap_gb_per_s")) {
      const double gbps = r.get_double("swap_gb_per_s", 0.0, 1e6);
      if (gbps <= 0.0) throw r.error("swap_gb_per_s", "expected a positive bandwidth, got 0");
      p.swap_bytes_per_s = gbps * 1e9;
    }
  } else if (r.has("step_overhead_us")) {
    s.cost.roofline.step_overhead_s = r.get_double("step_overhead_us", 0.0, 1e9) * 1e-6;
  }
  r.finish();
}

// A model or GPU given as a relative path is relative to the scenario file's folder (names of
// shipped configs are left alone: a value is a path when it has a '/' or a YAML/JSON suffix).
std::string resolve_config_path(const std::string& value, const std::string& base_dir) {
  const bool looks_like_path = value.find('/') != std::string::npos || value.ends_with(".yaml") ||
                               value.ends_with(".yml") || value.ends_with(".json");
  if (!looks_like_path || value.empty() || value.front() == '/' || base_dir.empty()) return value;
  return (std::filesystem::path(base_dir) / value).lexically_normal().string();
}

std::string folder_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

}  // namespace

cost::CostModelConfig parse_cost_model_spec(const std::string& spec, const ErrorLocation& where) {
  cost::CostModelConfig config;
  if (spec == "roofline") return config;
  const auto parts = split(spec, ':');
  if (parts.empty() || parts[0] != "linear" || parts.size() < 4 || parts.size() > 5) {
    throw Error(where,
                "expected 'roofline' or 'linear:BASE_US:PREFILL_US_PER_TOKEN:DECODE_US_PER_SEQ"
                "[:CONTEXT_US_PER_TOKEN]', got '" +
                    spec + "'" + did_you_mean(spec, {"roofline", "linear"}));
  }
  double v[4] = {0, 0, 0, 0};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto d = parse_double(parts[i]);
    if (!d || *d < 0.0) {
      throw Error(where, "expected a non-negative number of microseconds, got '" +
                             std::string(parts[i]) + "' in '" + spec + "'");
    }
    v[i - 1] = *d;
  }
  config.kind = cost::CostModelKind::kLinear;
  config.linear.base_ns = v[0] * 1e3;
  config.linear.per_prefill_token_ns = v[1] * 1e3;
  config.linear.per_decode_seq_ns = v[2] * 1e3;
  config.linear.per_context_token_ns = v[3] * 1e3;
  return config;
}

void reject_lists(const YAML::Node& root, const std::string& file) {
  if (root.IsSequence()) {
    throw Error(node_location(root, file, ""), "lists make a sweep: use kvsim plan");
  }
  if (!root.IsMap()) return;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (kv.second.IsSequence()) {
      throw Error(node_location(kv.second, file, key), "lists make a sweep: use kvsim plan");
    }
    try {
      reject_lists(kv.second, file);
    } catch (const Error& e) {
      // Prefix the nested key so the field reads "serving.scheduler".
      ErrorLocation where = e.location();
      where.field = where.field.empty() ? key : key + "." + where.field;
      throw Error(where, e.message());
    }
  }
}

Scenario parse_scenario(const YAML::Node& root, const std::string& file,
                        const std::string& base_dir) {
  MapReader top(root, file);
  declare(top,
          {"model", "gpu", "tensor_parallel_size", "gpu_memory_utilization", "block_size",
           "max_model_len", "kv_cache_dtype", "kv_scale_group_size", "activation_reserve_gib",
           "runtime_overhead_gib", "engine", "serving", "cost_model", "slo", "seed", "workload"});
  Scenario s;
  s.source = file;
  ScenarioDeployment& d = s.deployment;
  d.model = resolve_config_path(top.optional_string("model").value_or(""), base_dir);
  d.gpu = resolve_config_path(top.optional_string("gpu").value_or(""), base_dir);
  d.tensor_parallel_size =
      top.optional_int("tensor_parallel_size", 1, 4096).value_or(d.tensor_parallel_size);
  if (top.has("gpu_memory_utilization")) {
    const double u = top.get_double("gpu_memory_utilization", 0.0, 1.0);
    if (u <= 0.0) {
      throw top.error("gpu_memory_utilization", "expected a fraction in (0, 1], got 0");
    }
    d.gpu_memory_utilization = u;
  }
  d.block_size = top.optional_int("block_size", 1, 1'048'576).value_or(d.block_size);
  d.max_model_len = top.optional_int("max_model_len", 0, kMaxCount).value_or(d.max_model_len);
  d.kv_cache_dtype = top.optional_string("kv_cache_dtype").value_or(d.kv_cache_dtype);
  d.kv_scale_group_size =
      top.optional_int("kv_scale_group_size", 0, kMaxCount).value_or(d.kv_scale_group_size);
  d.activation_reserve_gib = top.optional_double("activation_reserve_gib", 0.0, kMaxGib);
  d.runtime_overhead_gib =
      top.optional_double("runtime_overhead_gib", 0.0, kMaxGib).value_or(d.runtime_overhead_gib);
  d.engine = top.optional_choice("engine", {"v1", "v0"}).value_or(d.engine);
  if (auto serving = top.optional_map("serving")) read_serving(*serving, s);
  read_cost_model(top, s);
  if (auto slo = top.optional_map("slo")) read_slo(*slo, s.sim.slo);
  if (top.has("seed")) s.seed = static_cast<std::uint64_t>(top.get_int("seed", 0));
  if (auto workload = top.optional_map("workload")) {
    s.workload = parse_workload(*workload, base_dir);
    s.has_workload = true;
  }
  top.finish();
  return s;
}

Scenario parse_scenario_text(std::string_view yaml, const std::string& display_name,
                             const std::string& base_dir) {
  const YAML::Node root = load_yaml_text(yaml, display_name);
  reject_lists(root, display_name);
  return parse_scenario(root, display_name, base_dir);
}

Scenario load_scenario(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  reject_lists(root, path);
  return parse_scenario(root, path, folder_of(path));
}

}  // namespace kvsim::config
