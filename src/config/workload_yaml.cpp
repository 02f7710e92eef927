#include "config/workload_yaml.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>

#include "common/strings.h"

namespace kvsim::config {
namespace {

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

// `key:` as a path string or {path, format, skip_bad_rows, prefix_block_tokens}.
trace::TraceFileOptions parse_trace_file(MapReader& parent, const std::string& key,
                                         const std::string& base_dir) {
  trace::TraceFileOptions file;
  const YAML::Node node = parent.get_node(key);
  if (node.IsScalar()) {
    file.path = resolve_path(node.Scalar(), base_dir);
    if (file.path.empty()) throw parent.error(key, "expected a trace file path, got ''");
    return file;
  }
  MapReader map = parent.get_map(key);
  file.path = resolve_path(map.get_string("path"), base_dir);
  if (const auto format = map.optional_string("format")) {
    file.format = trace::parse_trace_format(
        *format, node_location(map.get_node("format"), map.file(), map.field("format")));
  }
  file.skip_bad_rows = map.optional_bool("skip_bad_rows", false);
  if (const auto block = map.optional_int("prefix_block_tokens", 1)) {
    file.prefix_block_tokens = *block;
  }
  map.finish();
  return file;
}

// A length distribution: an integer (fixed), a spec string, or {dist, value, min, max, mean,
// std, exponent}.
trace::LengthDist parse_length(MapReader& parent, const std::string& key) {
  const YAML::Node node = parent.get_node(key);
  const ErrorLocation where = node_location(node, parent.file(), parent.field(key));
  if (node.IsScalar()) return trace::parse_length_dist(node.Scalar(), where);
  MapReader map = parent.get_map(key);
  const std::string kind =
      map.get_choice("dist", {"fixed", "uniform", "normal", "lognormal", "zipf", "empirical"});
  trace::LengthDist d;
  const auto positive = [&](const char* k) { return map.get_int(k, 1); };
  if (kind == "fixed") {
    d.kind = trace::LengthKind::kFixed;
    d.value = positive("value");
  } else if (kind == "uniform" || kind == "zipf") {
    d.kind = kind == "uniform" ? trace::LengthKind::kUniform : trace::LengthKind::kZipf;
    d.min = positive("min");
    d.max = positive("max");
    if (kind == "zipf") d.zipf_exponent = map.get_double("exponent", 0.0);
  } else if (kind == "normal" || kind == "lognormal") {
    d.kind = kind == "normal" ? trace::LengthKind::kNormal : trace::LengthKind::kLognormal;
    d.mean = map.get_double("mean", 0.0);
    d.stddev = map.get_double("std", 0.0);
    d.min = map.optional_int("min", 1).value_or(1);
    d.max = map.optional_int("max", 0).value_or(0);
  } else {
    d.kind = trace::LengthKind::kEmpirical;
  }
  map.finish();
  trace::validate_length_dist(d, where);
  return d;
}

// The `synthetic:` map; `shared_prefix` keeps its reader for relabelling validation errors.
trace::SyntheticOptions parse_synthetic(MapReader& synthetic, const std::string& base_dir,
                                        std::optional<MapReader>& shared_prefix) {
  trace::SyntheticOptions s;
  const std::string arrival =
      synthetic.optional_choice("arrival", {"poisson", "gamma", "constant", "replay"})
          .value_or("poisson");
  const std::vector<std::string> kinds = {"poisson", "gamma", "constant", "replay"};
  s.arrival = static_cast<trace::ArrivalProcess>(std::find(kinds.begin(), kinds.end(), arrival) -
                                                 kinds.begin());
  s.rate_rps = synthetic.optional_double("rate", 0.0).value_or(0.0);
  s.cv = synthetic.optional_double("cv", 0.0).value_or(1.0);
  if (synthetic.has("arrival_trace")) {
    s.arrival_trace = parse_trace_file(synthetic, "arrival_trace", base_dir);
  }
  s.num_requests = synthetic.optional_int("num_requests", 0).value_or(0);
  s.duration_s = synthetic.optional_double("duration_s", 0.0).value_or(0.0);
  if (synthetic.has("prompt_tokens")) s.prompt = parse_length(synthetic, "prompt_tokens");
  if (synthetic.has("output_tokens")) s.output = parse_length(synthetic, "output_tokens");
  if (synthetic.has("lengths_from")) {
    s.lengths_from = parse_trace_file(synthetic, "lengths_from", base_dir);
  }
  s.prompt_pool = synthetic.optional_int("prompt_pool", 0).value_or(0);
  shared_prefix = synthetic.optional_map("shared_prefix");
  if (shared_prefix) {
    s.shared_prefix.fraction = shared_prefix->get_double("fraction", 0.0, 1.0);
    s.shared_prefix.num_prompts = shared_prefix->optional_int("num_prompts", 1).value_or(1);
    s.shared_prefix.prompt_tokens = shared_prefix->get_int("prompt_tokens", 1);
    s.shared_prefix.block_tokens =
        shared_prefix->optional_int("block_tokens", 1).value_or(trace::kDefaultPrefixBlockTokens);
    shared_prefix->finish();
  }
  if (const auto seed = synthetic.optional_int("seed", 0)) {
    s.seed = static_cast<std::uint64_t>(*seed);
  }
  synthetic.finish();
  return s;
}

// rate_scale, max_requests, time_window and max_model_len of the workload section.
trace::TransformOptions parse_transforms(MapReader& section) {
  trace::TransformOptions t;
  t.rate_scale = section.optional_double("rate_scale", 0.0).value_or(1.0);
  t.max_requests = section.optional_int("max_requests", 0).value_or(0);
  if (auto window = section.optional_map("time_window")) {
    const double start = window->optional_double("start_s", 0.0, 1e9).value_or(0.0);
    const auto end = window->optional_double("end_s", 0.0, 1e9);
    t.window_start_ns = seconds_to_ns(start);
    if (end) t.window_end_ns = seconds_to_ns(*end);
    if (end && *end <= start) throw section.error("time_window", "expected start_s < end_s");
    window->finish();
  }
  t.max_model_len = section.optional_int("max_model_len", 0).value_or(0);
  return t;
}

// Contradictions and ranges (trace::validate_workload), located at the key they name.
void validate_located(const trace::WorkloadOptions& o, const MapReader& section,
                      const std::optional<MapReader>& synthetic,
                      const std::optional<MapReader>& shared_prefix) {
  trace::WorkloadOptions check = o;
  trace::apply_workload_defaults(check);
  try {
    trace::validate_workload(check);
  } catch (const Error& e) {
    const std::vector<std::string> path = [&] {
      std::vector<std::string> parts;
      for (const auto p : split(e.location().field, '.')) parts.emplace_back(p);
      return parts;
    }();
    if (path.size() >= 2 && path[0] == "synthetic" && synthetic) {
      if (path.size() >= 3 && path[1] == "shared_prefix" && shared_prefix) {
        throw shared_prefix->error(path[2], e.message());
      }
      throw synthetic->error(path[1], e.message());
    }
    throw section.error(path.empty() ? "" : path[0], e.message());
  }
}

}  // namespace

trace::WorkloadOptions parse_workload(MapReader& section, const std::string& base_dir) {
  trace::WorkloadOptions o;
  const bool has_trace = section.has("trace");
  const bool has_synthetic = section.has("synthetic");
  if (has_trace == has_synthetic) {
    throw section.error(has_trace ? "synthetic" : "trace",
                        "expected exactly one of 'trace' (a file to replay) or 'synthetic' (a "
                        "generator)");
  }
  std::optional<MapReader> synthetic, shared_prefix;
  if (has_trace) {
    o.source = trace::WorkloadOptions::Source::kTrace;
    o.trace = parse_trace_file(section, "trace", base_dir);
  } else {
    o.source = trace::WorkloadOptions::Source::kSynthetic;
    synthetic = section.get_map("synthetic");
    o.synthetic = parse_synthetic(*synthetic, base_dir, shared_prefix);
  }
  o.transforms = parse_transforms(section);
  o.max_concurrency = section.optional_int("max_concurrency", 0).value_or(0);
  o.serial_sessions = section.optional_bool("serial_sessions", false);
  section.finish();
  validate_located(o, section, synthetic, shared_prefix);
  return o;
}

}  // namespace kvsim::config
