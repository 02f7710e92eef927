// cost/aiconfigurator.cpp: NVIDIA aiconfigurator's measured tables to kernel shapes.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/aiconfigurator.h"
#include "cost/measurements.h"
#include "cost/ops.h"
#include "test_util.h"

using namespace kvsim;
using cost::MeasurementFormat;
using cost::OpClass;

namespace {

struct Loaded {
  std::vector<cost::Measurement> rows;
  std::vector<std::string> notes;
};

Loaded load(const std::string& name, const std::string& text,
            MeasurementFormat format = MeasurementFormat::kAuto) {
  const std::string path = test::write_temp_file(test::temp_dir(), name, text);
  Loaded l;
  l.rows = cost::load_measurements(path, format, &l.notes);
  return l;
}

std::string error_loading(const std::string& name, const std::string& text) {
  return test::error_of([&] { (void)load(name, text); });
}

}  // namespace

TEST_CASE("aiconfigurator GEMM table: m, n, k and dtype, latency in ms", "[cost]") {
  const auto l = load("0.24.0_gemm_perf.csv",
                      "kernel_source,gemm_dtype,m,n,k,latency\n"
                      "torch.nn.functional.linear,bfloat16,32,4096,8192,0.0125\n"
                      "CutlassFP8ScaledMMLinearKernel,fp8,32,4096,8192,0.0080\n"
                      "FlashInferCuteDslNvFp4LinearKernel,nvfp4,32,4096,8192,0.0060\n"
                      "DeepGemm,fp8_block,32,4096,8192,0.0070\n");
  REQUIRE(l.rows.size() == 3);
  const auto& g = l.rows[0].shape;
  CHECK(g.op == OpClass::kGemm);
  CHECK(g.dtype == model::Dtype::kBf16);
  CHECK((g.m == 32 && g.n == 4096 && g.k == 8192 && g.batch == 1));
  CHECK(l.rows[0].time_s == Approx(12.5e-6));
  CHECK(l.rows[0].line == 2);
  CHECK(l.rows[1].shape.dtype == model::Dtype::kFp8);
  CHECK(l.rows[2].shape.dtype == model::Dtype::kFp4);
  REQUIRE(l.notes.size() == 1);
  CHECK_THAT(l.notes[0], Catch::Contains("3 rows imported") &&
                             Catch::Contains("1 fp8_block rows (no kvsim dtype)"));
}

TEST_CASE("aiconfigurator attention tables: prefill and decode by file name, skips counted",
          "[cost]") {
  const std::string header =
      "kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,beam_width,attn_dtype,"
      "kv_cache_dtype,step,window_size,latency\n";
  const std::string body =
      "vllm_flash_attn_fa3,4,2048,32,8,128,1,bfloat16,bfloat16,0,0,0.5\n"
      "vllm_flash_attn_fa3,4,2048,32,8,128,1,bfloat16,fp8,0,0,0.4\n"
      "vllm_flash_attn_fa3,4,2048,32,8,128,1,bfloat16,bfloat16,0,128,0.3\n"
      "vllm_flash_attn_fa4,4,2048,32,8,128,1,bfloat16,bfloat16,0,0,0.45\n"
      "vllm_flash_attn_fa3,8,2048,32,8,128,1,bfloat16,bfloat16,0,0,0.9\n";
  const auto ctx = load("0.24.0_context_attention_perf.csv", header + body);
  REQUIRE(ctx.rows.size() == 3);
  const auto& p = ctx.rows[0].shape;
  CHECK(p.op == OpClass::kAttnPrefill);
  // isl new tokens after `step` cached ones; heads already per GPU.
  CHECK((p.batch == 4 && p.q_len == 2048 && p.kv_len == 0));
  CHECK((p.q_heads == 32 && p.kv_heads == 8 && p.head_dim == 128));
  CHECK(p.dtype == model::Dtype::kBf16);
  CHECK(ctx.rows[0].time_s == Approx(0.5e-3));
  // The fp8-cache row: the same shape, its dtype the cache's. Its bytes: 4 sequences × 2048
  // tokens × (Q and O: 2 × 32 heads × 128 × 2 B, K and V written and read: 2 × 2 × 8 × 128 × 1 B).
  const auto& f = ctx.rows[1].shape;
  CHECK(f.dtype == model::Dtype::kFp8);
  CHECK(f.batch == 4);
  CHECK(cost::kernel_work(f).bytes == 4.0 * 2048 * (2 * 32 * 128 * 2 + 2 * 2 * 8 * 128 * 1));
  REQUIRE(ctx.notes.size() == 1);
  CHECK_THAT(ctx.notes[0],
             Catch::Contains("kernel_source bfloat16 kv bfloat16: vllm_flash_attn_fa3, "
                             "bfloat16 kv fp8: vllm_flash_attn_fa3") &&
                 Catch::Contains("1 sliding-window rows") &&
                 Catch::Contains("1 rows of kernel_source vllm_flash_attn_fa4"));
  // A cache type kvsim lacks, and attention computed in 8 bits, are skipped and counted.
  const auto odd = load("0.24.0_generation_attention_perf.csv",
                        header +
                            "k,32,1,32,8,128,1,bfloat16,e5m2x,4095,0,0.02\n"
                            "k,32,1,32,8,128,1,fp8,fp8,4095,0,0.02\n");
  CHECK(odd.rows.empty());
  CHECK_THAT(odd.notes[0], Catch::Contains("1 e5m2x KV-cache rows (no kvsim dtype)") &&
                               Catch::Contains("1 fp8 attention-compute rows"));

  const auto gen = load("0.24.0_generation_attention_perf.csv",
                        header +
                            "vllm_flash_attn_fa3,32,1,32,8,128,1,bfloat16,bfloat16,4095,0,"
                            "0.02\n");
  REQUIRE(gen.rows.size() == 1);
  const auto& d = gen.rows[0].shape;
  CHECK(d.op == OpClass::kAttnDecode);
  // `step` tokens are cached; the new token's query sees step + 1.
  CHECK((d.batch == 32 && d.kv_len == 4095 && d.q_len == 0));

  CHECK_THAT(error_loading("attention.csv", header + body),
             Catch::Contains("attention.csv:1:") && Catch::Contains("neither 'context_attention'"));
}

TEST_CASE("aiconfigurator all-reduce: the CUDA-graph rows, message size in elements", "[cost]") {
  const auto l = load("0.24.0_custom_allreduce_perf.csv",
                      "kernel_source,allreduce_dtype,num_gpus,message_size,latency,backend\n"
                      "vLLM_custom_graph,bfloat16,8,1048576,0.0214,vllm_graph\n"
                      "vLLM_custom_eager,bfloat16,8,1048576,0.0400,vllm_eager\n");
  REQUIRE(l.rows.size() == 1);
  CHECK(l.rows[0].shape.op == OpClass::kAllreduce);
  CHECK(l.rows[0].shape.num_gpus == 8);
  CHECK(l.rows[0].shape.bytes == 2.0 * 1048576);  // bf16 elements
  CHECK(l.rows[0].time_s == Approx(21.4e-6));
  CHECK_THAT(l.notes[0],
             Catch::Contains("1 rows imported") && Catch::Contains("skipped: 1 vllm_eager rows"));
}

TEST_CASE("aiconfigurator fused-MoE table: balanced, TP-split rows; a kernel per layer shape",
          "[cost]") {
  const auto l = load("0.24.0_moe_perf.csv",
                      "kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,"
                      "moe_tp_size,moe_ep_size,distribution,latency\n"
                      "cutlass,bfloat16,4,2048,768,8,128,2,1,balanced,0.05\n"
                      "cutlass,bfloat16,4,2048,768,8,128,2,1,power_law_1.2,0.06\n"
                      "cutlass,bfloat16,4,2048,768,8,128,1,2,balanced,0.07\n"
                      "cutlass,bfloat16,8,2048,768,8,128,1,1,balanced,0.08\n"
                      "triton,bfloat16,16,2048,768,8,128,1,1,balanced,0.09\n"
                      "wide_ep,bfloat16,16,2048,768,8,128,1,4,balanced,0.01\n"
                      "wide_ep,bfloat16,32,2048,768,8,128,1,4,balanced,0.01\n"
                      "wide_ep,bfloat16,64,2048,768,8,128,1,4,balanced,0.01\n"
                      "vllm_gptossmxfp4moe,w4a16_mxfp4,1,2880,2880,4,128,8,1,balanced,0.04\n"
                      "block,fp8_block,1,2048,768,8,128,1,1,balanced,0.03\n");
  // Three kernels ran the bf16 2048/768 layer: of those with rows the reader imports, the one
  // with more (cutlass) is kept; the expert-parallel kernel's rows do not count.
  REQUIRE(l.rows.size() == 4);
  const auto& m = l.rows[0].shape;
  CHECK(m.op == OpClass::kMoe);
  CHECK(m.dtype == model::Dtype::kBf16);
  // moe_tp_size 2: each GPU holds half of every expert's width.
  CHECK((m.m == 4 && m.n == 384 && m.k == 2048 && m.experts == 128 && m.top_k == 8));
  CHECK(l.rows[0].time_s == Approx(50e-6));
  CHECK(l.rows[1].shape.n == 768);
  // gpt-oss's layer on 8 GPUs: each holds 2880 / 8 of every expert's width, in fp4.
  const auto& g = l.rows[2].shape;
  CHECK((g.dtype == model::Dtype::kFp4 && g.m == 1 && g.n == 360 && g.k == 2880));
  CHECK((g.experts == 128 && g.top_k == 4));
  // A block-scaled fp8 layer: fp8 weights, its own entry (vLLM's block-fp8 kernel).
  const auto& b = l.rows[3].shape;
  CHECK((b.dtype == model::Dtype::kFp8 && b.block_scales && b.activation_bits == 0));
  CHECK(entry_key(b) == "moe.fp8.block");
  REQUIRE(l.notes.size() == 1);
  CHECK_THAT(l.notes[0], Catch::Contains("4 rows imported") &&
                             Catch::Contains("1 power_law_1.2 rows") &&
                             Catch::Contains("1 expert-parallel rows") &&
                             Catch::Contains("1 rows of kernel_source triton") &&
                             Catch::Contains("3 rows of kernel_source wide_ep"));
  CHECK_THAT(error_loading("0.24.0_moe_perf.csv",
                           "kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,"
                           "num_experts,moe_tp_size,moe_ep_size,distribution,latency\n"
                           "x,fp8,0,2816,704,8,128,1,1,balanced,0.1\n"),
             Catch::Contains("0.24.0_moe_perf.csv:2:3: num_tokens: expected an integer"));
}

TEST_CASE("aiconfigurator MoE rows: each weight x activation kernel apart, gpt-oss's MXFP4 method",
          "[cost]") {
  const auto l =
      load("0.24.0_moe_perf.csv",
           "kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,"
           "moe_tp_size,moe_ep_size,distribution,latency\n"
           "fi_nvfp4,nvfp4,4,2048,768,8,128,1,1,balanced,0.05\n"
           "vllm_gptossmxfp4moe_trtllm,w4a16_mxfp4,4,2880,2880,4,128,1,1,balanced,0.07\n"
           "vllm_mxfp4moe_trtllm_mxfp8,w4a8_mxfp4_mxfp8,4,4096,2048,6,256,1,1,balanced,"
           "0.06\n"
           "marlin,int4_wo,4,7168,2048,8,384,1,1,balanced,0.09\n"
           "vllm_compressedtensorsw4a4mxfp4moe_marlin,w4a16_mxfp4,4,3584,3072,16,896,1,1,"
           "balanced,0.08\n");
  REQUIRE(l.rows.size() == 4);
  // NVFP4 is W4A4 (the "moe.fp4" entry); MXFP4 x BF16 and AWQ/GPTQ int4 multiply in 16 bits,
  // MXFP4 x MXFP8 in 8: entries of their own.
  CHECK(l.rows[0].shape.dtype == model::Dtype::kFp4);
  CHECK(cost::entry_key(l.rows[0].shape) == "moe.fp4");
  CHECK(cost::entry_key(l.rows[1].shape) == "moe.fp4.a16");
  CHECK(cost::entry_key(l.rows[2].shape) == "moe.fp4.a8");
  CHECK(cost::entry_key(l.rows[3].shape) == "moe.int4.a16");
  // MXFP4 x MXFP8 reads 8-bit rows in and out: 4 tokens x 6 of 256 experts, 24 touched.
  const double w = 3.0 * 4096 * 2048 * 0.5;
  CHECK(cost::kernel_work(l.rows[2].shape).bytes ==
        Approx(24 * w + 24 * (4096 + 2 * 2048) * 1.0 + 24 * (2048 + 4096) * 1.0));
  // A compressed-tensors MXFP4 checkpoint's Marlin kernel is not gpt-oss's.
  REQUIRE(l.notes.size() == 1);
  CHECK_THAT(l.notes[0], Catch::Contains("1 w4a16_mxfp4 rows of compressed-tensors' MXFP4 method"));
}

TEST_CASE("aiconfigurator tables kvsim cannot use are refused, bad cells are located", "[cost]") {
  CHECK_THAT(error_loading("2.29.2_nccl_perf.csv",
                           "kernel_source,nccl_dtype,num_gpus,message_size,latency\n"
                           "NCCL,half,2,256,0.00536\n"),
             Catch::Contains("op_name") && Catch::Contains("custom_allreduce"));
  // An NCCL table that kept op_name gives its all_reduce rows.
  const auto nccl = load("nccl.csv",
                         "kernel_source,nccl_dtype,num_gpus,message_size,op_name,latency\n"
                         "NCCL,half,4,1024,all_reduce,0.007\n"
                         "NCCL,half,4,1024,all_gather,0.006\n");
  REQUIRE(nccl.rows.size() == 1);
  CHECK(nccl.rows[0].shape.bytes == 2048);
  const std::string gemm = "kernel_source,gemm_dtype,m,n,k,latency\n";
  CHECK_THAT(error_loading("g.csv", gemm + "t,bfloat16,0,4096,8192,0.01\n"),
             Catch::Contains("g.csv:2:3: m: expected an integer"));
  CHECK_THAT(error_loading("g.csv", gemm + "t,bfloat16,1,4096,8192,-1\n"),
             Catch::Contains("g.csv:2:6: latency: expected a number"));
  CHECK_THAT(error_loading("g.csv", gemm + "t,bfloat16,1,4096,8192,2e6\n"),
             Catch::Contains("at most 1e9 us"));
  // Forced format on a file that is not one of its tables.
  CHECK_THAT(test::error_of([] {
               const std::string p = test::write_temp_file(test::temp_dir(), "x.csv", "a,b\n1,2\n");
               (void)cost::load_measurements(p, MeasurementFormat::kAiconfigurator);
             }),
             Catch::Contains("expected an aiconfigurator gemm"));
  CHECK(cost::parse_measurement_format("aiconfigurator") == MeasurementFormat::kAiconfigurator);
}

TEST_CASE("aiconfigurator H200 tables import whole", "[cost][shared]") {
  KVSIM_REQUIRE_SHARED(gemm, "measured/aiconfigurator/h200_sxm/0.24.0_gemm_perf.csv");
  KVSIM_REQUIRE_SHARED(gen,
                       "measured/aiconfigurator/h200_sxm/0.24.0_generation_attention_perf.csv");
  KVSIM_REQUIRE_SHARED(ar, "measured/aiconfigurator/h200_sxm/0.24.0_custom_allreduce_perf.csv");
  std::vector<std::string> notes;
  // Every bf16 and fp8 GEMM row (35,742 each).
  CHECK(cost::load_measurements(gemm, MeasurementFormat::kAuto, &notes).size() == 2 * 35742);
  const auto g = cost::load_measurements(gen, MeasurementFormat::kAuto, &notes);
  CHECK(g.size() == 2 * 16129);  // FlashAttention 3, bf16 and fp8 KV cache, no window
  for (const auto& m : g) REQUIRE(m.shape.op == OpClass::kAttnDecode);
  // 23 message sizes × 3 GPU counts, graph backend only.
  CHECK(cost::load_measurements(ar, MeasurementFormat::kAuto, &notes).size() == 69);
  CHECK_THAT(notes[1], Catch::Contains("vllm_flash_attn_fa3"));
}
