#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/scenario_grid_yaml.h"
#include "config/yaml_reader.h"

using namespace kvsim::config;

namespace {

std::vector<std::string> dump_points(const std::vector<YamlGridPoint>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) {
    YAML::Emitter e;
    e.SetMapFormat(YAML::Flow);
    e.SetSeqFormat(YAML::Flow);
    e << p.document;
    out.push_back(e.c_str());
  }
  return out;
}

std::vector<std::string> labels(const YamlGridPoint& p) {
  std::vector<std::string> out;
  for (const auto& a : p.axes) out.push_back(a.path + "=" + a.value);
  return out;
}

}  // namespace

TEST_CASE("grid: lists are axes, expanded like nested loops in document order", "[config][grid]") {
  const auto doc = load_yaml_text(R"(
model: llama-3-70b
gpu: [h100-sxm, h200-sxm]
serving:
  tensor_parallel_size: [2, 4, 8]
  block_size: 16
slo: {ttft_ms: 500}
)",
                                  "s.yaml");
  CHECK(count_yaml_grid(doc) == 6);
  const auto points = expand_yaml_grid(doc, "s.yaml");
  CHECK(
      dump_points(points) ==
      std::vector<std::string>{"{model: llama-3-70b, gpu: h100-sxm, serving: "
                               "{tensor_parallel_size: 2, block_size: 16}, slo: {ttft_ms: 500}}",
                               "{model: llama-3-70b, gpu: h100-sxm, serving: "
                               "{tensor_parallel_size: 4, block_size: 16}, slo: {ttft_ms: 500}}",
                               "{model: llama-3-70b, gpu: h100-sxm, serving: "
                               "{tensor_parallel_size: 8, block_size: 16}, slo: {ttft_ms: 500}}",
                               "{model: llama-3-70b, gpu: h200-sxm, serving: "
                               "{tensor_parallel_size: 2, block_size: 16}, slo: {ttft_ms: 500}}",
                               "{model: llama-3-70b, gpu: h200-sxm, serving: "
                               "{tensor_parallel_size: 4, block_size: 16}, slo: {ttft_ms: 500}}",
                               "{model: llama-3-70b, gpu: h200-sxm, serving: "
                               "{tensor_parallel_size: 8, block_size: 16}, slo: {ttft_ms: 500}}"});
  CHECK(labels(points[4]) ==
        std::vector<std::string>{"gpu=h200-sxm", "serving.tensor_parallel_size=4"});
  // Scalars are shared with the original document: their marks (line, column) survive.
  const YAML::Node tp = points[4].document["serving"]["tensor_parallel_size"];
  CHECK(tp.Mark().line == 4);  // 0-based: line 5 of the text
}

TEST_CASE("grid: a document without lists is one point, unchanged", "[config][grid]") {
  const auto doc = load_yaml_text("model: m\nserving: {block_size: 16}\n", "s.yaml");
  const auto points = expand_yaml_grid(doc, "s.yaml");
  REQUIRE(points.size() == 1);
  CHECK(points[0].axes.empty());
  CHECK(points[0].document.Mark().line == doc.Mark().line);
  CHECK(dump_points(points)[0] == "{model: m, serving: {block_size: 16}}");
  // A one-element list is still an axis (of one value): no list is left in the point.
  const auto one = expand_yaml_grid(load_yaml_text("gpu: [a100-80gb]\n", "s.yaml"), "s.yaml");
  CHECK(dump_points(one) == std::vector<std::string>{"{gpu: a100-80gb}"});
  CHECK(labels(one[0]) == std::vector<std::string>{"gpu=a100-80gb"});
}

TEST_CASE("grid: list elements may be maps holding axes of their own", "[config][grid]") {
  const auto doc = load_yaml_text(R"(
workload:
  - {trace: a.csv}
  - synthetic: {rate: [1, 2], prompt_tokens: 100}
kv_cache_dtype: [auto, fp8]
)",
                                  "s.yaml");
  CHECK(count_yaml_grid(doc) == 6);
  const auto points = expand_yaml_grid(doc, "s.yaml");
  REQUIRE(points.size() == 6);
  CHECK(labels(points[0]) ==
        std::vector<std::string>{"workload={trace: a.csv}", "kv_cache_dtype=auto"});
  CHECK(labels(points[3]) ==
        std::vector<std::string>{"workload={synthetic: {rate: 1, prompt_tokens: 100}}",
                                 "kv_cache_dtype=fp8"});
  CHECK(labels(points[5]) ==
        std::vector<std::string>{"workload={synthetic: {rate: 2, prompt_tokens: 100}}",
                                 "kv_cache_dtype=fp8"});
}

TEST_CASE("grid: list fields take a list as one value, a list of lists is their axis",
          "[config][grid]") {
  GridOptions o;
  o.list_fields = {"slo.percentiles"};
  auto doc = load_yaml_text("slo: {percentiles: [50, 99]}\n", "s.yaml");
  auto points = expand_yaml_grid(doc, "s.yaml", o);
  CHECK(dump_points(points) == std::vector<std::string>{"{slo: {percentiles: [50, 99]}}"});
  doc = load_yaml_text("slo: {percentiles: [[50, 99], [90]]}\ngpu: [a, b]\n", "s.yaml");
  CHECK(count_yaml_grid(doc, o) == 4);
  points = expand_yaml_grid(doc, "s.yaml", o);
  CHECK(dump_points(points) == std::vector<std::string>{"{slo: {percentiles: [50, 99]}, gpu: a}",
                                                        "{slo: {percentiles: [50, 99]}, gpu: b}",
                                                        "{slo: {percentiles: [90]}, gpu: a}",
                                                        "{slo: {percentiles: [90]}, gpu: b}"});
  CHECK(labels(points[2]) == std::vector<std::string>{"slo.percentiles=[90]", "gpu=a"});
}

TEST_CASE("grid: empty lists and oversized grids are errors located in the file",
          "[config][grid]") {
  const auto doc = load_yaml_text("model: m\nserving:\n  block_size: []\n", "s.yaml");
  try {
    expand_yaml_grid(doc, "s.yaml");
    FAIL("no error");
  } catch (const kvsim::Error& e) {
    CHECK(e.location().file == "s.yaml");
    CHECK(e.location().line == 3);
    CHECK(e.location().field == "serving.block_size");
    CHECK(e.message().find("empty list") != std::string::npos);
  }
  GridOptions o;
  o.max_points = 10;
  const auto big = load_yaml_text("a: [1, 2, 3]\nb: [1, 2, 3, 4]\n", "s.yaml");
  CHECK(count_yaml_grid(big, o) == 12);
  CHECK_THROWS_WITH(expand_yaml_grid(big, "s.yaml", o),
                    Catch::Contains("the grid has 12 points, more than the limit of 10"));
}
