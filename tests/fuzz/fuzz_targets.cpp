#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "config/cost_profile_yaml.h"
#include "config/hardware_yaml.h"
#include "config/hf_import.h"
#include "config/inference_perf_config.h"
#include "config/model_yaml.h"
#include "config/scenario.h"
#include "config/scenario_grid.h"
#include "config/yaml_reader.h"
#include "cost/measurements.h"
#include "report/diff.h"
#include "trace/replay_run.h"
#include "trace/trace_format.h"
#include "trace/workload.h"

namespace kvsim::fuzz {
namespace {

// Readers that take a path get the input through one scratch file per process.
std::string scratch_file(std::string_view data, const char* suffix) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvsim-fuzz-" + std::to_string(::getpid()) + suffix))
                               .string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

template <class F>
void swallow_errors(F&& f) {
  try {
    f();
  } catch (const Error&) {
    // Bad input, reported the one allowed way.
  }
}

void scenario(std::string_view data) {
  swallow_errors([&] { (void)config::parse_scenario_text(data, "fuzz.yaml", "."); });
}

void grid(std::string_view data) {
  const std::string path = scratch_file(data, ".grid.yaml");
  swallow_errors([&] { (void)config::load_scenario_grid(path, {}, 1000); });
}

void model(std::string_view data) {
  swallow_errors([&] { (void)config::parse_model_yaml(data, "fuzz.yaml"); });
}

void hardware(std::string_view data) {
  swallow_errors([&] { (void)config::parse_hardware_yaml(data, "fuzz.yaml"); });
}

void cost_profile(std::string_view data) {
  swallow_errors([&] {
    // A hardware YAML's cost_model section, or the section alone.
    const auto root = config::load_yaml_text(data, "fuzz.yaml");
    const bool whole = root.IsMap() && root["cost_model"].IsDefined();
    config::MapReader r(whole ? root["cost_model"] : root, "fuzz.yaml", "cost_model");
    (void)config::parse_cost_profile(r);
  });
}

void hf_config(std::string_view data) {
  swallow_errors([&] { (void)config::parse_hf_config(data, "config.json"); });
}

void diff_json(std::string_view data) {
  swallow_errors([&] {
    // The input against itself and against a small report: both walks of the parsed document.
    const report::Json doc = report::parse_json_text(data, "fuzz.json");
    const report::Json other =
        report::parse_json_text(R"({"schema":"kvsim.report/v1","kv":{"a":1}})", "base.json");
    report::DiffOptions options;
    (void)report::diff_json(doc, doc, options);
    (void)report::diff_json(other, doc, options);
  });
}

void trace(std::string_view data, trace::TraceFormat format, const char* suffix) {
  const std::string path = scratch_file(data, suffix);
  swallow_errors([&] {
    trace::TraceFileOptions options;
    options.path = path;
    options.format = format;
    auto reader = trace::open_trace_file(options);
    trace::RequestSpec request;
    for (int i = 0; i < 100000 && reader->next(request); ++i) {
    }
  });
}

void calibrate_csv(std::string_view data) {
  const std::string path = scratch_file(data, ".measurements.csv");
  for (const char* format : {"auto", "kvsim", "vidur", "aiconfigurator"}) {
    swallow_errors(
        [&] { (void)cost::load_measurements(path, cost::parse_measurement_format(format)); });
  }
  // aiconfigurator tells prefill from decode attention by the file name.
  const std::string attention = scratch_file(data, "_context_attention_perf.csv");
  std::vector<std::string> notes;
  swallow_errors([&] {
    (void)cost::load_measurements(attention, cost::MeasurementFormat::kAiconfigurator, &notes);
  });
  std::filesystem::remove(attention);
}

// The input as each kind of real run `kvsim validate` reads.
void replay_run(std::string_view data) {
  const std::string jsonl = scratch_file(data, ".profile_export.jsonl");
  swallow_errors([&] { (void)trace::read_aiperf_jsonl(jsonl); });
  swallow_errors([&] { (void)trace::read_requests_jsonl(jsonl); });
  const std::string exp = scratch_file(data, ".exp");
  swallow_errors([&] { (void)trace::read_distserve_exp(exp); });
  const std::string json = scratch_file(data, ".json");
  swallow_errors([&] { (void)trace::read_vllm_benchmark_json(json, {}); });
  for (const bool poisson : {false, true}) {
    trace::InferencePerfOptions options;
    options.poisson = poisson;
    swallow_errors([&] { (void)trace::read_inference_perf_json(json, options); });
  }
  trace::InferencePerfOptions stage;
  stage.stage = 0;
  swallow_errors([&] { (void)trace::read_inference_perf_json(json, stage); });
  // inference-perf's configuration, read beside its reports (YAML; its JSON form too).
  swallow_errors([&] { (void)config::read_inference_perf_config(json); });
  for (const std::string& path : {jsonl, exp, json}) std::filesystem::remove(path);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> kTargets = {
      {"scenario", scenario},
      {"grid", grid},
      {"model", model},
      {"hardware", hardware},
      {"cost_profile", cost_profile},
      {"hf_config", hf_config},
      {"diff_json", diff_json},
      {"trace_native", [](std::string_view d) { trace(d, trace::TraceFormat::kNative, ".csv"); }},
      {"trace_azure", [](std::string_view d) { trace(d, trace::TraceFormat::kAzure, ".csv"); }},
      {"trace_burstgpt",
       [](std::string_view d) { trace(d, trace::TraceFormat::kBurstGpt, ".csv"); }},
      {"trace_vidur", [](std::string_view d) { trace(d, trace::TraceFormat::kVidur, ".csv"); }},
      {"trace_mooncake",
       [](std::string_view d) { trace(d, trace::TraceFormat::kMooncake, ".jsonl"); }},
      {"calibrate_csv", calibrate_csv},
      {"replay_run", replay_run},
  };
  return kTargets;
}

const Target* find_target(std::string_view name) {
  for (const Target& t : targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace kvsim::fuzz
