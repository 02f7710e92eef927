#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "kernels/device.h"
#include "test_util.h"

using kvsim::test::run_kvsim;
using Json = nlohmann::json;

namespace {

const char* kHeader =
    "op,dtype,m,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,bytes,num_gpus,time_us\n";

// A small measurement file: a GEMM sweep and decode attention on an "A100".
std::string measurements() {
  std::string csv = kHeader;
  for (int m = 1; m <= 4096; m *= 2) {
    // ~78% of 312 TFLOP/s when compute-bound, ~80% of 2.039 TB/s otherwise, + 5 us.
    const double flops = 2.0 * m * 4096 * 4096;
    const double bytes = 2.0 * (m * 4096.0 + 4096.0 * 4096 + m * 4096.0);
    const double t = std::max(flops / (312e12 * 0.78), bytes / (2.039e12 * 0.8)) + 5e-6;
    csv +=
        "gemm,bf16," + std::to_string(m) + ",4096,4096,,,,,,,,," + std::to_string(t * 1e6) + "\n";
  }
  for (int b = 1; b <= 64; b *= 4) {
    csv += "attn_decode,fp16,,,," + std::to_string(b) + ",,2048,32,8,128,,," +
           std::to_string(10 + b * 4) + "\n";
  }
  return csv;
}

}  // namespace

TEST_CASE("kvsim calibrate --from: fits, writes a loadable profile, validates", "[cli][cost]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string m = kvsim::test::write_temp_file(dir, "m.csv", measurements());
  const std::string profile = dir + "/a100-cal.yaml";
  const std::vector<std::string> args = {
      "calibrate", "--from",     m,     "--gpu",  "a100-80gb",  "--out",
      profile,     "--validate", m,     "--date", "2026-01-02", "--device-name",
      "test A100", "--format",   "json"};
  const auto r = run_kvsim(args);
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["schema"] == "kvsim.calibration/v1");
  CHECK(j["profile"] == profile);
  CHECK(j["fitted"]["gemm"]["rows"] == 13);
  CHECK(j["fitted"]["attn_decode"]["rows"] == 4);
  CHECK(j["validation"]["gemm"]["rows"] == 13);
  // Validated on its own measurements, every point is in a table: exact.
  CHECK(j["validation"]["gemm"]["mape"].get<double>() < 1e-6);
  CHECK(j["provenance"]["kind"] == "imported");
  const std::string yaml = kvsim::read_file(profile);
  CHECK_THAT(yaml, Catch::Contains("name: a100-80gb") && Catch::Contains("kind: imported") &&
                       Catch::Contains("device: \"test A100\"") &&
                       Catch::Contains("date: \"2026-01-02\"") && Catch::Contains("tables:"));
  // The profile works as --gpu, and the run is reproducible byte for byte.
  const auto c = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", profile, "--decode-batch",
                            "4", "--context", "1000", "--format", "json"});
  REQUIRE(c.exit_code == 0);
  CHECK(Json::parse(c.out)["inputs"]["cost_profile"]["kind"] == "imported");
  CHECK(run_kvsim(args).out == r.out);
  CHECK(kvsim::read_file(profile) == yaml);
}

TEST_CASE("kvsim calibrate --validate alone scores the shipped profile", "[cli][cost]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string m = kvsim::test::write_temp_file(dir, "m.csv", measurements());
  const auto r =
      run_kvsim({"calibrate", "--validate", m, "--gpu", "a100-80gb", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["profile"].is_null());
  CHECK(j["provenance"]["kind"] == "imported");  // the shipped a100-80gb profile (Vidur fit)
  CHECK(j["validation"]["gemm"]["rows"] == 13);
  CHECK(j["validation"]["gemm"]["mape"].get<double>() > 0);
}

TEST_CASE("kvsim calibrate: bad input and no GPU are clear errors", "[cli][cost]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string bad = kvsim::test::write_temp_file(
      dir, "bad.csv", std::string(kHeader) + "gemm,bf16,1,2,3,,,,,,,,,-1\n");
  const auto r =
      run_kvsim({"calibrate", "--from", bad, "--gpu", "a100-80gb", "--out", dir + "/p.yaml"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.csv:2:14: time_us"));
  CHECK_FALSE(kvsim::test::shared_data_file("../../nonexistent").has_value());
  const auto none = run_kvsim({"calibrate", "--gpu", "a100-80gb"});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("--from"));
  if (kvsim::kernels::device_count() == 0) {
    const auto dev = run_kvsim(
        {"calibrate", "--device", "0", "--model", "llama-3-8b", "--out", dir + "/p.yaml"});
    CHECK(dev.exit_code == 2);
    CHECK_THAT(dev.err, Catch::Contains("--device") && Catch::Contains("--from FILE"));
    // One line.
    CHECK(std::count(dev.err.begin(), dev.err.end(), '\n') == 1);
  }
}

TEST_CASE("kvsim calibrate --from-format vidur: Vidur's A100 profiles, validated on held-out data",
          "[cli][cost]") {
  KVSIM_REQUIRE_SHARED(mlp7, "profiles/vidur_a100/a100_Llama-2-7b-hf_mlp.csv");
  KVSIM_REQUIRE_SHARED(mlp70, "profiles/vidur_a100/a100_Llama-2-70b-hf_mlp.csv");
  KVSIM_REQUIRE_SHARED(mlp8, "profiles/vidur_a100/a100_Meta-Llama-3-8B_mlp.csv");
  const std::string dir = kvsim::test::temp_dir();
  const std::string profile = dir + "/a100-vidur.yaml";
  // Fit on the two Llama-2 models; validate on Llama-3-8B, whose shapes (but for one O
  // projection family) were not measured in the fit.
  const auto r =
      run_kvsim({"calibrate", "--from-format", "vidur", "--from", mlp7, "--from", mlp70,
                 "--validate", mlp8, "--gpu", "a100-80gb", "--out", profile, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["measurements"]["gemm"] == 4 * 2088);
  CHECK(j["validation"]["gemm"]["rows"] == 4 * 1824);
  CHECK(j["validation"]["gemm"]["mape"].get<double>() < 10.0);
  CHECK(j["validation"]["gemm"]["median_ape"].get<double>() < 7.0);
  CHECK(j["validation"]["elementwise"]["rows"] == 6 * 1824);
}

TEST_CASE("kvsim calibrate --holdout: the fit leaves rows out and records its error on them",
          "[cli][cost]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string m = kvsim::test::write_temp_file(dir, "m.csv", measurements());
  const std::string profile = dir + "/held.yaml";
  const std::vector<std::string> args = {"calibrate", "--from",      m,          "--gpu",
                                         "a100-80gb", "--out",       profile,    "--holdout",
                                         "0.3",       "--no-tables", "--format", "json"};
  const auto r = run_kvsim(args);
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  const Json& held = j["provenance"]["held_out"];
  CHECK(held["fraction"] == 0.3);
  CHECK(held["seed"] == 1);
  // Every row is either fitted or held out.
  std::int64_t fitted = 0, scored = 0;
  for (const auto& [op, f] : j["fitted"].items()) fitted += f["rows"].get<std::int64_t>();
  for (const auto& [op, h] : held["op_classes"].items()) scored += h["rows"].get<std::int64_t>();
  CHECK(fitted + scored == 13 + 4);
  CHECK(scored > 0);
  CHECK(j["validation_sources"][0] == "held out: 30% of the rows (seed 1)");
  const std::string yaml = kvsim::read_file(profile);
  CHECK_THAT(yaml, Catch::Contains("held_out:") && Catch::Contains("fraction: 0.3") &&
                       Catch::Contains("fitted_op_classes: ["));
  // Reports that use the profile say which classes are measured and which are datasheet guesses.
  const auto c = run_kvsim({"cost", "--model", "llama-3-8b", "--gpu", profile, "--decode-batch",
                            "4", "--context", "1000", "--format", "json"});
  REQUIRE(c.exit_code == 0);
  const Json measured = Json::parse(c.out)["inputs"]["cost_profile"]["measured_op_classes"];
  CHECK(std::find(measured.begin(), measured.end(), "gemm") != measured.end());
  CHECK(std::find(measured.begin(), measured.end(), "memcpy") == measured.end());
  const auto s = run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", profile, "--format", "json"});
  REQUIRE(s.exit_code == 0);
  const Json prov = Json::parse(s.out)["inputs"]["hardware"]["cost_model_provenance"];
  CHECK(prov["op_classes"]["gemm"] == "measured");
  CHECK(prov["op_classes"]["memcpy"] == "datasheet");
  CHECK(prov["held_out"]["fraction"] == 0.3);
  CHECK(run_kvsim(args).out == r.out);  // the split is deterministic

  const auto bad = run_kvsim({"calibrate", "--from", m, "--gpu", "a100-80gb", "--holdout", "1"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--holdout") && Catch::Contains("[0, 1)"));
}

TEST_CASE("kvsim calibrate --dtypes fits only the rows of those dtypes", "[cli][cost]") {
  const std::string dir = kvsim::test::temp_dir();
  std::string csv = measurements();
  csv +=
      "gemm,fp8,64,4096,4096,,,,,,,,,9\ngemm,fp8,256,4096,4096,,,,,,,,,20\n"
      "gemm,fp8,1024,4096,4096,,,,,,,,,60\n";
  const std::string m = kvsim::test::write_temp_file(dir, "m.csv", csv);
  const auto all = run_kvsim({"calibrate", "--from", m, "--gpu", "a100-80gb", "--format", "json"});
  REQUIRE(all.exit_code == 0);
  // Without --dtypes the fp8 GEMMs get a curve of their own.
  CHECK(Json::parse(all.out)["fitted"]["gemm.fp8"]["rows"] == 3);
  const auto bf16 = run_kvsim({"calibrate", "--from", m, "--gpu", "a100-80gb", "--dtypes",
                               "bf16,fp16", "--format", "json"});
  REQUIRE(bf16.exit_code == 0);
  const Json j = Json::parse(bf16.out);
  CHECK_FALSE(j["fitted"].contains("gemm.fp8"));
  CHECK(j["fitted"]["gemm"]["rows"] == 13);
  CHECK_THAT(bf16.err, Catch::Contains("--dtypes: left out 3 gemm fp8 rows"));
  const auto bad = run_kvsim({"calibrate", "--from", m, "--gpu", "a100-80gb", "--dtypes", "bf61"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--dtypes") && Catch::Contains("bf61"));
}
