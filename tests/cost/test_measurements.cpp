// cost/measurements.cpp: measurement CSV (kvsim's own and Vidur's profiles) to kernel shapes.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/measurements.h"
#include "test_util.h"

using namespace kvsim;
using cost::OpClass;

TEST_CASE("Measurement CSV: round trip and located errors", "[cost]") {
  const std::string dir = test::temp_dir();
  const std::string header =
      "op,dtype,m,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,bytes,num_gpus,time_us\n";
  const std::string good = test::write_temp_file(dir, "m.csv",
                                                 header +
                                                     "gemm,bf16,64,2560,8192,,,,,,,,,12.5\n"
                                                     "attn_decode,fp16,,,,32,,4096,16,2,128,,,140\n"
                                                     "attn_prefill,fp16,,,,1,512,0,16,2,128,,,90\n"
                                                     "allreduce,bf16,,,,,,,,,,1048576,4,30\n"
                                                     "memcpy,fp16,,,,,,,,,,1073741824,,700\n");
  const auto rows = cost::load_measurements(good, cost::MeasurementFormat::kAuto);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].shape.m == 64);
  CHECK(rows[0].time_s == Approx(12.5e-6));
  CHECK(rows[1].shape.op == OpClass::kAttnDecode);
  CHECK(rows[1].shape.kv_len == 4096);
  CHECK(rows[3].shape.num_gpus == 4);
  CHECK(rows[4].line == 6);
  const std::string again = test::write_temp_file(dir, "again.csv", cost::measurements_csv(rows));
  CHECK(cost::measurements_csv(cost::load_measurements(again, cost::MeasurementFormat::kKvsim)) ==
        cost::measurements_csv(rows));

  const auto bad = [&](const std::string& row) {
    const std::string path = test::write_temp_file(dir, "bad.csv", header + row);
    return test::error_of([&] { cost::load_measurements(path, cost::MeasurementFormat::kAuto); });
  };
  CHECK_THAT(bad("gemn,bf16,64,2560,8192,,,,,,,,,12.5\n"),
             Catch::Contains("bad.csv:2:1: op:") && Catch::Contains("did you mean 'gemm'"));
  CHECK_THAT(bad("gemm,bf16,,2560,8192,,,,,,,,,12.5\n"),
             Catch::Contains(":2:3: m: expected an integer"));
  CHECK_THAT(bad("gemm,bf16,64,2560,8192,,,,,,,,,0\n"),
             Catch::Contains("time_us: expected a positive time"));
  CHECK_THAT(bad("gemm,bf17,64,2560,8192,,,,,,,,,1\n"), Catch::Contains("dtype"));
  CHECK_THAT(bad("gemm,bf16,64\n"), Catch::Contains("bad.csv:2: expected 14 cells, got 3"));
  // Fused-MoE rows need the experts and top_k columns; the writer adds them.
  const std::string moe_header = header.substr(0, header.size() - 1) + ",experts,top_k\n";
  const std::string moe =
      test::write_temp_file(dir, "moe.csv",
                            moe_header + "moe,fp8,16,704,2816,,,,,,,,,45,128,8\n" +
                                "gemm,bf16,64,2560,8192,,,,,,,,,12.5,,\n");
  const auto moe_rows = cost::load_measurements(moe, cost::MeasurementFormat::kAuto);
  REQUIRE(moe_rows.size() == 2);
  CHECK(moe_rows[0].shape.op == OpClass::kMoe);
  CHECK((moe_rows[0].shape.m == 16 && moe_rows[0].shape.n == 704 && moe_rows[0].shape.k == 2816));
  CHECK((moe_rows[0].shape.experts == 128 && moe_rows[0].shape.top_k == 8));
  const std::string moe_again =
      test::write_temp_file(dir, "moe-again.csv", cost::measurements_csv(moe_rows));
  CHECK(cost::measurements_csv(cost::load_measurements(
            moe_again, cost::MeasurementFormat::kKvsim)) == cost::measurements_csv(moe_rows));
  const std::string act_header = moe_header.substr(0, moe_header.size() - 1) + ",activation_bits\n";
  CHECK(cost::measurements_csv(moe_rows).starts_with(act_header));
  // A kernel with wider activations than weights (MXFP4 x BF16) keeps them through a round trip.
  const std::string a16 = test::write_temp_file(
      dir, "moe-a16.csv", act_header + "moe,fp4,16,360,2880,,,,,,,,,38,128,4,16\n");
  const auto a16_rows = cost::load_measurements(a16, cost::MeasurementFormat::kAuto);
  REQUIRE(a16_rows.size() == 1);
  CHECK(a16_rows[0].shape.activation_bits == 16);
  CHECK(cost::entry_key(a16_rows[0].shape) == "moe.fp4.a16");
  CHECK(cost::measurements_csv(a16_rows) ==
        act_header + "moe,fp4,16,360,2880,,,,,,,,,38,128,4,16\n");
  const std::string fp8_a8 = test::write_temp_file(
      dir, "moe-a8.csv", act_header + "moe,fp8,16,360,2880,,,,,,,,,38,128,4,8\n");
  CHECK_THAT(
      test::error_of([&] { cost::load_measurements(fp8_a8, cost::MeasurementFormat::kAuto); }),
      Catch::Contains("moe-a8.csv:2:17: activation_bits: expected empty, or 8 or 16 wider "
                      "than the fp8 weights of a moe row, got 8"));
  // fp8 experts with block scales keep them through a round trip (their own entry).
  const std::string block_header = act_header.substr(0, act_header.size() - 1) + ",block_scales\n";
  const std::string block = test::write_temp_file(
      dir, "moe-block.csv",
      block_header +
          "moe,fp8,16,256,7168,,,,,,,,,40,256,8,,1\nmoe,fp8,16,256,7168,,,,,,,,,90,256,8,,\n");
  const auto block_rows = cost::load_measurements(block, cost::MeasurementFormat::kAuto);
  REQUIRE(block_rows.size() == 2);
  CHECK(block_rows[0].shape.block_scales);
  CHECK_FALSE(block_rows[1].shape.block_scales);
  CHECK(cost::entry_key(block_rows[0].shape) == "moe.fp8.block");
  CHECK(cost::entry_key(block_rows[1].shape) == "moe.fp8");
  CHECK(cost::measurements_csv(block_rows) ==
        block_header +
            "moe,fp8,16,256,7168,,,,,,,,,40,256,8,,1\nmoe,fp8,16,256,7168,,,,,,,,,90,256,8,,\n");
  CHECK(cost::measurements_csv(moe_rows).starts_with(act_header + "moe,"));  // no block column
  const std::string bf16_block = test::write_temp_file(
      dir, "moe-bf16-block.csv", block_header + "moe,bf16,16,256,7168,,,,,,,,,40,256,8,,1\n");
  CHECK_THAT(
      test::error_of([&] { cost::load_measurements(bf16_block, cost::MeasurementFormat::kAuto); }),
      Catch::Contains("moe-bf16-block.csv:2:18: block_scales: expected empty or 0, or 1 for a moe "
                      "row of fp8 weights with block scales, got 1"));
  CHECK_THAT(bad("moe,fp8,16,704,2816,,,,,,,,,45\n"),
             Catch::Contains("bad.csv:2:1: op: moe rows need the experts and top_k columns"));
  const auto bad_moe = [&](const std::string& row) {
    const std::string path = test::write_temp_file(dir, "bad-moe.csv", moe_header + row);
    return test::error_of([&] { cost::load_measurements(path, cost::MeasurementFormat::kAuto); });
  };
  CHECK_THAT(bad_moe("moe,fp8,16,704,2816,,,,,,,,,45,8,128\n"),
             Catch::Contains("bad-moe.csv:2:16: top_k: expected at most experts (8), got 128"));
  CHECK_THAT(bad_moe("moe,fp8,16,704,2816,,,,,,,,,45,,8\n"),
             Catch::Contains("bad-moe.csv:2:15: experts: expected an integer"));
  CHECK_THROWS_WITH(cost::parse_measurement_format("vidr"),
                    Catch::Contains("did you mean 'vidur'"));
}

TEST_CASE("Vidur importer maps operators to kernel shapes", "[cost]") {
  KVSIM_REQUIRE_SHARED(mlp, "profiles/vidur_a100/a100_Llama-2-70b-hf_mlp.csv");
  KVSIM_REQUIRE_SHARED(attn, "profiles/vidur_a100/a100_legacy_attention_n8192_q64_kv8_tp2.csv");
  KVSIM_REQUIRE_SHARED(ar, "profiles/vidur_a100/a100_dgx_all_reduce.csv");
  const auto m = cost::load_measurements(mlp, cost::MeasurementFormat::kVidur);
  // 1,044 rows × (4 GEMMs + 6 elementwise operators).
  CHECK(m.size() == 1044 * 10);
  // First row: 4,096 tokens at TP 1: QKV n = (64 + 2·8)·128 = 10240, k = 8192; 2.872 ms.
  CHECK(m[0].shape.op == OpClass::kGemm);
  CHECK(m[0].shape.m == 4096);
  CHECK(m[0].shape.n == 10240);
  CHECK(m[0].shape.k == 8192);
  CHECK(m[0].time_s == Approx(2.872e-3));
  const auto a = cost::load_measurements(attn, cost::MeasurementFormat::kAuto);
  std::int64_t prefill = 0, decode = 0;
  for (const auto& r : a) (r.shape.op == OpClass::kAttnPrefill ? prefill : decode) += 1;
  CHECK(prefill == 4418);
  CHECK(decode == 10240);
  CHECK(a[0].shape.q_heads == 32);
  CHECK(a[0].shape.kv_heads == 4);
  CHECK(a[0].shape.head_dim == 128);
  const auto r = cost::load_measurements(ar, cost::MeasurementFormat::kVidur);
  CHECK(r.size() == 2982);  // single-node rows only
  for (const auto& row : r) CHECK(row.shape.num_gpus >= 2);
}
