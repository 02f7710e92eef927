#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "cost/cost_fixtures.h"
#include "cost/roofline_model.h"
#include "model/quantization.h"

using namespace kvsim;
using cost::StepBatch;
using model::Dtype;
using model::QuantMethod;

namespace {

std::map<std::string, cost::OpCost> decode_ops(const cost::CostModel& m, std::int64_t batch,
                                               std::int64_t context) {
  const std::vector<std::int64_t> ctx(static_cast<std::size_t>(batch), context);
  StepBatch b;
  b.decode_context_tokens = ctx;
  b.num_sampling = batch;
  std::map<std::string, cost::OpCost> out;
  for (const auto& op : m.breakdown(b).ops) out[op.name] = op;
  return out;
}

model::ModelSpec quantized(QuantMethod method) {
  model::ModelSpec m = test::llama3_70b();
  m.quantization = model::default_quantization(method);
  return m;
}

cost::RooflineCostModel tp4(const model::ModelSpec& m, const model::HardwareSpec& hw) {
  cost::CostOptions o;
  o.tensor_parallel_size = 4;
  return cost::RooflineCostModel(m, hw, o);
}

}  // namespace

// Llama-3-70B TP 4, one decode sequence: per GPU the MLP is gate+up (n 14336, k 8192) and down
// (n 8192, k 7168), 80 layers. At m = 1 both GEMMs are memory-bound on an H100 (3.35 TB/s, the
// default GEMM efficiency 0.8 and 4 µs launch), so their time is bytes / 2.68 TB/s + 4 µs.
TEST_CASE("fp8 W8A8 decode: the MLP's bytes and time halve against bf16, by hand",
          "[cost][quant]") {
  const auto bf16 = decode_ops(tp4(test::llama3_70b(), test::h100_sxm()), 1, 10);
  const auto fp8_model = tp4(quantized(QuantMethod::kFp8), test::h100_sxm());
  CHECK(fp8_model.dtypes().quant_compute == Dtype::kFp8);
  CHECK_FALSE(fp8_model.dtypes().quant_dequantizes);
  CHECK(fp8_model.dtypes().kv == Dtype::kBf16);  // the KV cache stays at the model's dtype
  const auto fp8 = decode_ops(fp8_model, 1, 10);
  // bf16: (8192·2 + 8192·14336·2 + 14336·2) + (7168·2 + 7168·8192·2 + 8192·2) = 352,397,312 B.
  const double bf16_up = 8192.0 * 2 + 8192.0 * 14336 * 2 + 14336.0 * 2;
  const double bf16_down = 7168.0 * 2 + 7168.0 * 8192 * 2 + 8192.0 * 2;
  CHECK(bf16.at("mlp").bytes == 80.0 * (bf16_up + bf16_down));
  // fp8 inputs and weights (1 B), bf16 outputs: 117,477,376 + 58,743,808 = 176,221,184 B.
  const double fp8_up = 8192.0 + 8192.0 * 14336 + 14336.0 * 2;
  const double fp8_down = 7168.0 + 7168.0 * 8192 + 8192.0 * 2;
  CHECK(fp8.at("mlp").bytes == 80.0 * (fp8_up + fp8_down));
  const double bw = 3.35e12 * 0.8;
  CHECK(bf16.at("mlp").time_s == Approx(80.0 * ((bf16_up + bf16_down) / bw + 8e-6)));
  CHECK(fp8.at("mlp").time_s == Approx(80.0 * ((fp8_up + fp8_down) / bw + 8e-6)));  // 5.90 ms
  // Half the bytes (0.50006); the time a little more than half for the two 4 µs launches.
  CHECK(fp8.at("mlp").bytes / bf16.at("mlp").bytes == Approx(0.5).epsilon(0.001));
  CHECK(fp8.at("mlp").time_s / bf16.at("mlp").time_s == Approx(0.5287).epsilon(0.001));
  // Same FLOPs; the LM head stays bf16 (not quantized, as vLLM serves it).
  CHECK(fp8.at("mlp").flops == bf16.at("mlp").flops);
  CHECK(fp8.at("lm_head").bytes == bf16.at("lm_head").bytes);
}

TEST_CASE("fp8 W8A8 prefill computes at the fp8 peak", "[cost][quant]") {
  const cost::PrefillChunk chunk{8192, 0};
  StepBatch b;
  b.prefills = {&chunk, 1};
  b.num_sampling = 1;
  auto mlp_time = [&](const cost::RooflineCostModel& m) {
    for (const auto& op : m.breakdown(b).ops) {
      if (op.name == "mlp") return op.time_s;
    }
    return 0.0;
  };
  const double bf16 = mlp_time(tp4(test::llama3_70b(), test::h100_sxm()));
  const double fp8 = mlp_time(tp4(quantized(QuantMethod::kFp8), test::h100_sxm()));
  // 80 × 2 × 8192 × 8192 × (14336 + 7168) FLOPs at 989.4 vs 1978.9 TFLOP/s × 0.75.
  const double flops = 80.0 * 2 * 8192 * 8192 * (14336.0 + 7168.0);
  CHECK(bf16 == Approx(flops / (989.4e12 * 0.75) + 160 * 4e-6));
  CHECK(fp8 == Approx(flops / (1978.9e12 * 0.75) + 160 * 4e-6));
}

TEST_CASE("AWQ W4A16: quarter-width weights plus scales, bf16 compute plus dequantization",
          "[cost][quant]") {
  const auto awq_model = tp4(quantized(QuantMethod::kAwq), test::h100_sxm());
  CHECK(awq_model.dtypes().quant_weight == Dtype::kInt4);
  CHECK(awq_model.dtypes().quant_compute == Dtype::kBf16);
  CHECK(awq_model.dtypes().quant_dequantizes);
  const auto awq = decode_ops(awq_model, 1, 10);
  // 0.5 B per weight + 2.5 B per group of 128 (fp16 scale, 4-bit zero); bf16 inputs/outputs.
  const double w = 0.5 + 2.5 / 128;
  CHECK(awq.at("mlp").bytes == Approx(80.0 * ((8192.0 * 2 + 8192.0 * 14336 * w + 14336.0 * 2) +
                                              (7168.0 * 2 + 7168.0 * 8192 * w + 8192.0 * 2))));
  // GEMM FLOPs (2 m n k) plus dequantization (2 per weight, one 128-row tile): twice 2 n k.
  CHECK(awq.at("mlp").flops == 80.0 * 2 * (2.0 * 8192 * 14336 + 2.0 * 7168 * 8192));
}

TEST_CASE("int8 and fp4 compute where the GPU has tensor cores for them", "[cost][quant]") {
  model::HardwareSpec h100 = test::h100_sxm();
  // No int8 peak: dequantize to bf16 (a Marlin-style W8A16 kernel).
  CHECK(tp4(quantized(QuantMethod::kInt8), h100).dtypes().quant_compute == Dtype::kBf16);
  h100.peak_flops[Dtype::kInt8] = 1978.9e12;
  CHECK(tp4(quantized(QuantMethod::kInt8), h100).dtypes().quant_compute == Dtype::kInt8);
  // fp4 only at compute capability >= 10 with an fp4 peak.
  h100.compute_capability = 9.0;
  h100.peak_flops[Dtype::kFp4] = 1978.9e12;
  const auto nv_h100 = tp4(quantized(QuantMethod::kNvfp4), h100);
  CHECK(nv_h100.dtypes().quant_compute == Dtype::kBf16);
  CHECK(nv_h100.dtypes().quant_dequantizes);
  model::HardwareSpec b200 = h100;
  b200.compute_capability = 10.0;
  b200.peak_flops = {{Dtype::kBf16, 2250e12}, {Dtype::kFp8, 4500e12}, {Dtype::kFp4, 9000e12}};
  const auto nv_b200 = tp4(quantized(QuantMethod::kNvfp4), b200);
  CHECK(nv_b200.dtypes().quant_compute == Dtype::kFp4);
  CHECK_FALSE(nv_b200.dtypes().quant_dequantizes);
  const auto ops = decode_ops(nv_b200, 1, 10);
  // fp4 inputs (0.5 B), fp4 weights with an E4M3 scale per 16, bf16 outputs.
  const double w = 0.5 + 1.0 / 16;
  CHECK(ops.at("mlp").bytes == Approx(80.0 * ((8192.0 * 0.5 + 8192.0 * 14336 * w + 14336.0 * 2) +
                                              (7168.0 * 0.5 + 7168.0 * 8192 * w + 8192.0 * 2))));
}
