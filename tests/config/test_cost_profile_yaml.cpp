#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/cost_profile_yaml.h"
#include "config/yaml_reader.h"
#include "test_util.h"

using namespace kvsim;

namespace {

model::CostProfile parse(const std::string& text) {
  const YAML::Node root = config::load_yaml_text(text, "gpu.yaml");
  config::MapReader r(root, "gpu.yaml");
  config::MapReader section = r.get_map("cost_model");
  return config::parse_cost_profile(section);
}

}  // namespace

TEST_CASE("cost_model section: curves, tables and provenance round-trip", "[config][cost]") {
  model::CostProfile p;
  p.provenance.kind = "calibrated";
  p.provenance.device = "NVIDIA H200";
  p.provenance.date = "2026-11-29";
  p.step_overhead_s = 0.0015;
  model::OpClassProfile g;
  g.compute.knots_x = {8, 10, 12};
  g.compute.knots_y = {0.2, 0.6, 0.8};
  g.memory.value = 0.85;
  g.launch_latency_s = 4.5e-6;
  p.op_classes["gemm"] = g;
  model::MeasuredTable t;
  t.op = "attn_decode";
  t.dtype = "fp16";
  t.shape = {{"q_heads", 16}, {"kv_heads", 2}, {"head_dim", 128}};
  t.points = {{1, 0, 12.5e-6}, {64, 0, 20e-6}, {1, 4096, 30e-6}, {67108864, 4096, 1.5e-3}};
  p.tables.push_back(t);
  const std::string yaml = "name: x\ncost_model:\n" + config::emit_cost_profile_yaml(p, 2);
  const auto q = parse(yaml);
  CHECK(q.provenance.device == "NVIDIA H200");
  CHECK(q.step_overhead_s == Approx(0.0015));
  CHECK(q.op_classes.at("gemm").compute.knots_y == std::vector<double>{0.2, 0.6, 0.8});
  CHECK(q.op_classes.at("gemm").launch_latency_s == Approx(4.5e-6));
  REQUIRE(q.tables.size() == 1);
  CHECK(q.tables[0].shape == t.shape);
  REQUIRE(q.tables[0].points.size() == 4);
  CHECK(q.tables[0].points[3].x1 == 67108864);  // coordinates are exact
  CHECK(q.tables[0].points[3].time_s == Approx(1.5e-3));
  CHECK(config::emit_cost_profile_yaml(q, 2) == config::emit_cost_profile_yaml(p, 2));
}

TEST_CASE("cost_model section: fitted classes and held-out errors round-trip", "[config][cost]") {
  model::CostProfile p;
  p.provenance.kind = "imported";
  p.provenance.fitted_op_classes = {"gemm", "attn_decode"};
  p.provenance.held_out_fraction = 0.1;
  p.provenance.held_out_seed = 7;
  p.provenance.held_out["gemm"] = {700, 12.5, 40.25};
  p.provenance.held_out["attn_decode"] = {30, 3.5, 9};
  p.provenance.held_out["attn_decode.fp8"] = {31, 4.5, 10};  // an entry with a dtype
  const std::string emitted = config::emit_cost_profile_yaml(p, 2);
  CHECK_THAT(emitted, Catch::Contains("fitted_op_classes: [gemm, attn_decode]") &&
                          Catch::Contains("gemm: {rows: 700, median_ape: 12.5, p90_ape: 40.25}"));
  const auto q = parse("name: x\ncost_model:\n" + emitted);
  CHECK(q.provenance.fitted_op_classes == p.provenance.fitted_op_classes);
  CHECK(q.provenance.held_out_fraction == Approx(0.1));
  CHECK(q.provenance.held_out_seed == 7);
  REQUIRE(q.provenance.held_out.size() == 3);
  CHECK(q.provenance.held_out.at("attn_decode.fp8").rows == 31);
  CHECK(q.provenance.held_out.at("gemm").rows == 700);
  CHECK(q.provenance.held_out.at("gemm").p90_ape == Approx(40.25));
  CHECK(config::emit_cost_profile_yaml(q, 2) == emitted);

  const auto error = [](const std::string& provenance) {
    return test::error_of(
        [&] { parse("name: x\ncost_model:\n  provenance:\n    kind: imported\n" + provenance); });
  };
  CHECK_THAT(error("    fitted_op_classes: [gemm, gem]\n"),
             Catch::Contains("fitted_op_classes") && Catch::Contains("did you mean 'gemm'"));
  CHECK_THAT(error("    fitted_op_classes: [gemm, gemm]\n"), Catch::Contains("distinct"));
  CHECK_THAT(error("    held_out: {fraction: 1.5, seed: 1}\n"), Catch::Contains("fraction"));
  CHECK_THAT(error("    held_out: {fraction: 0.1, seed: 1, gemmm: {rows: 1, median_ape: 1, "
                   "p90_ape: 1}}\n"),
             Catch::Contains("gemmm") && Catch::Contains("did you mean 'gemm'"));
  CHECK_THAT(error("    held_out: {fraction: 0.1, seed: 1, gemm.fp9: {rows: 1, median_ape: 1, "
                   "p90_ape: 1}}\n"),
             Catch::Contains("gemm.fp9") && Catch::Contains("gemm.fp8"));
  CHECK_THAT(error("    held_out: {fraction: 0.1, seed: 1, gemm: {rows: 0, median_ape: 1, "
                   "p90_ape: 1}}\n"),
             Catch::Contains("rows"));
}

TEST_CASE("cost_model section: bad tables are located errors", "[config][cost]") {
  const std::string head =
      "cost_model:\n  tables:\n    - op: gemm\n      dtype: bf16\n      shape: {n: 1, k: 2, batch: "
      "1}\n";
  CHECK_THROWS_WITH(parse(head + "      points: [[1, 0, 5], [1, 0, 6]]\n"),
                    Catch::Contains("gpu.yaml:6") && Catch::Contains("sorted"));
  CHECK_THROWS_WITH(parse(head + "      points: [[1, 0, -5]]\n"), Catch::Contains("positive time"));
  CHECK_THROWS_WITH(parse(head + "      points: [[1, 0]]\n"), Catch::Contains("[x1, x2, time_us]"));
  CHECK_THROWS_WITH(
      parse(
          "cost_model:\n  tables:\n    - op: gemn\n      dtype: bf16\n      points: [[1, 0, 1]]\n"),
      Catch::Contains("tables[0].op"));
  CHECK_THROWS_WITH(
      parse("cost_model:\n  op_classes:\n    gemm: {compute: {log10_x: [1, 2], y: [0.5, x]}}\n"),
      Catch::Contains("expected a number"));
  // Absent step_overhead_us keeps the documented default.
  CHECK(parse("cost_model:\n  op_classes: {}\n").step_overhead_s ==
        model::CostProfile{}.step_overhead_s);
}

TEST_CASE("replace_cost_model_section keeps everything else", "[config][cost]") {
  model::CostProfile p;
  p.provenance.kind = "imported";
  const std::string yaml =
      "# A100\nname: a100\ncost_model:\n  provenance: {kind: datasheet}\n  step_overhead_us: 5\n"
      "# next\nprice_per_hour: 2\n";
  const std::string out = config::replace_cost_model_section(yaml, p);
  CHECK(out.find("# A100\nname: a100\ncost_model:\n  provenance:\n    kind: imported\n") == 0);
  CHECK(out.find("step_overhead_us: 5\n") == std::string::npos);
  CHECK(out.find("# next\nprice_per_hour: 2\n") != std::string::npos);
  CHECK(parse(out).provenance.kind == "imported");
  const std::string appended = config::replace_cost_model_section("name: b\n", p);
  CHECK(appended.find("name: b\ncost_model:\n") == 0);
}

TEST_CASE("cost_model: seq_overhead_us and prefill_token_overhead_us round-trip, 0 by default",
          "[config][cost][overhead]") {
  const auto absent = parse("cost_model:\n  op_classes: {}\n");
  CHECK(absent.seq_overhead_s == 0);
  CHECK(absent.prefill_token_overhead_s == 0);
  CHECK(absent.context_token_overhead_s == 0);
  CHECK(absent.frontend_latency_s == 0);
  // Zero terms are not written: profiles without them keep their text.
  const std::string plain = config::emit_cost_profile_yaml(absent, 2);
  CHECK(plain.find("seq_overhead_us") == std::string::npos);
  CHECK(plain.find("prefill_token_overhead_us") == std::string::npos);
  CHECK(plain.find("context_token_overhead_us") == std::string::npos);
  CHECK(plain.find("frontend_latency_us") == std::string::npos);
  CHECK(plain.find("fitted_overheads") == std::string::npos);

  model::CostProfile p;
  p.provenance.kind = "calibrated";
  p.provenance.fitted_overheads = {"step_overhead_us", "prefill_token_overhead_us",
                                   "frontend_latency_us"};
  p.step_overhead_s = 0.0021;
  p.seq_overhead_s = 42e-6;
  p.prefill_token_overhead_s = 2.5e-6;
  p.context_token_overhead_s = 0.1e-6;
  p.frontend_latency_s = 8.5e-3;
  const std::string emitted = config::emit_cost_profile_yaml(p, 2);
  CHECK(emitted.find("  frontend_latency_us: 8500\n") != std::string::npos);
  CHECK(emitted.find("  seq_overhead_us: 42\n") != std::string::npos);
  CHECK(emitted.find("  prefill_token_overhead_us: 2.5\n") != std::string::npos);
  CHECK(emitted.find("  context_token_overhead_us: 0.1\n") != std::string::npos);
  const auto q = parse("cost_model:\n" + emitted);
  CHECK(q.step_overhead_s == Approx(0.0021));
  CHECK(q.seq_overhead_s == Approx(42e-6));
  CHECK(q.prefill_token_overhead_s == Approx(2.5e-6));
  CHECK(q.context_token_overhead_s == Approx(0.1e-6));
  CHECK(q.frontend_latency_s == Approx(8.5e-3));
  CHECK(q.provenance.fitted_overheads == p.provenance.fitted_overheads);
}

TEST_CASE("cost_model: overhead terms out of range are located errors",
          "[config][cost][overhead]") {
  CHECK_THAT(test::error_of([] { parse("cost_model:\n  seq_overhead_us: -1\n"); }),
             Catch::Contains("gpu.yaml:2:20") && Catch::Contains("seq_overhead_us"));
  CHECK_THAT(test::error_of([] { parse("cost_model:\n  prefill_token_overhead_us: 2e6\n"); }),
             Catch::Contains("gpu.yaml:2:30") && Catch::Contains("prefill_token_overhead_us"));
  CHECK_THAT(test::error_of([] { parse("cost_model:\n  context_token_overhead_us: -0.1\n"); }),
             Catch::Contains("gpu.yaml:2:30") && Catch::Contains("context_token_overhead_us"));
  CHECK_THAT(test::error_of([] { parse("cost_model:\n  frontend_latency_us: -5\n"); }),
             Catch::Contains("gpu.yaml:2:24") && Catch::Contains("frontend_latency_us"));
  CHECK_THAT(
      test::error_of([] {
        parse("cost_model:\n  provenance: {kind: calibrated, fitted_overheads: [step_us]}\n");
      }),
      Catch::Contains("gpu.yaml:2") && Catch::Contains("fitted_overheads") &&
          Catch::Contains("step_overhead_us"));
}

TEST_CASE("cost_model: eager_layer_host_us round-trips, absent (0) by default", "[config][cost]") {
  const auto absent = parse("cost_model:\n  op_classes: {}\n");
  CHECK(absent.eager_layer_host_s == 0);
  CHECK(config::emit_cost_profile_yaml(absent, 2).find("eager_layer_host_us") == std::string::npos);
  const auto p = parse("cost_model:\n  eager_layer_host_us: 850\n  op_classes: {}\n");
  CHECK(p.eager_layer_host_s == Approx(850e-6));
  const std::string emitted = config::emit_cost_profile_yaml(p, 2);
  CHECK(emitted.find("  eager_layer_host_us: 850\n") != std::string::npos);
  CHECK(parse("cost_model:\n" + emitted).eager_layer_host_s == Approx(850e-6));
  // Out of range: located.
  CHECK_THROWS_WITH(parse("cost_model:\n  eager_layer_host_us: -1\n  op_classes: {}\n"),
                    Catch::Matchers::Contains("eager_layer_host_us"));
}
