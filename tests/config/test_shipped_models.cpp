#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include "config/catalog.h"
#include "model/hardware_spec.h"
#include "model/kv_math.h"
#include "model/weights.h"

using namespace kvsim;
using namespace kvsim::model;

namespace {

KvFormat auto_format(const ModelSpec& m) {
  return *kv_format_from_name(m, "auto");
}

}  // namespace

TEST_CASE("the catalog ships the 15 models and 11 GPUs the issues name", "[config][catalog]") {
  CHECK(config::model_names() ==
        std::vector<std::string>{"deepseek-v2-lite", "deepseek-v3.2", "falcon-7b", "gemma-2-9b",
                                 "llama-2-70b", "llama-2-7b", "llama-3-70b", "llama-3-8b",
                                 "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "opt-13b",
                                 "opt-66b", "qwen2.5-7b", "qwen3-next-80b-a3b"});
  CHECK(config::hardware_names() ==
        std::vector<std::string>{"a100-40gb", "a100-80gb", "b200", "b300", "gb200", "h100-pcie",
                                 "h100-sxm", "h200-sxm", "l4", "l40s", "mi300x"});
}

TEST_CASE("B300 and GB200: datasheet peaks per GPU, GB200's 72-GPU NVLink domain",
          "[config][catalog]") {
  const model::HardwareSpec b300 = config::load_hardware("b300");
  // HGX B300, 8 GPUs, sparse: FP4 144 PF (108 dense), FP8 72 PF, BF16 36 PF, INT8 2 POPS.
  CHECK(*b300.peak_flops_for(model::Dtype::kFp4) == Approx(13.5e15));
  CHECK(*b300.peak_flops_for(model::Dtype::kFp8) == Approx(4.5e15));
  CHECK(*b300.peak_flops_for(model::Dtype::kBf16) == Approx(2.25e15));
  CHECK(*b300.peak_flops_for(model::Dtype::kInt8) == Approx(0.125e15));
  CHECK(b300.gpus_per_node == 8);
  const model::HardwareSpec gb200 = config::load_hardware("gb200");
  // GB200 NVL72, 72 GPUs, sparse: BF16 360 PF -> 2.5 PF dense per GPU; 576 TB/s -> 8 TB/s.
  CHECK(*gb200.peak_flops_for(model::Dtype::kBf16) == Approx(2.5e15));
  CHECK(gb200.memory_bandwidth == Approx(8e12));
  CHECK(gb200.gpus_per_node == 72);
  // TP 16 stays inside the NVLink domain but is past vLLM's custom all-reduce: NCCL's ring.
  CHECK(model::allreduce_hops(gb200, 8) == 1);
  CHECK(model::allreduce_hops(gb200, 16) == 30);
  CHECK_FALSE(model::allreduce_link(gb200, 16).internode);
}

TEST_CASE("every shipped model loads, names itself after its file and cites a source",
          "[config][catalog]") {
  for (const std::string& name : config::model_names()) {
    INFO(name);
    const ModelSpec m = config::load_model(name);
    CHECK(m.name == name);
    CHECK(!m.source.empty());
    CHECK(!m.display_name.empty());
    CHECK(static_cast<std::int64_t>(m.layer_kinds.size()) == m.num_layers);
  }
}

// Hand-checked from each architecture: 2 × layers × kv_heads × head_dim × 2 bytes (16-bit
// cache), or for MLA (kv_lora_rank + qk_rope_head_dim) × layers × 2.
TEST_CASE("KV bytes per token of every shipped model at --kv-cache-dtype auto", "[config][kv]") {
  const std::map<std::string, Bytes> expected{
      {"llama-2-7b", 2ULL * 32 * 32 * 128 * 2},         // 524,288 (MHA)
      {"llama-2-70b", 2ULL * 80 * 8 * 128 * 2},         // 327,680
      {"llama-3-8b", 2ULL * 32 * 8 * 128 * 2},          // 131,072
      {"llama-3-70b", 2ULL * 80 * 8 * 128 * 2},         // 327,680 (the seed)
      {"llama-3.1-405b", 2ULL * 126 * 8 * 128 * 2},     // 516,096
      {"mistral-7b", 2ULL * 32 * 8 * 128 * 2},          // 131,072, window 4,096
      {"mixtral-8x7b", 2ULL * 32 * 8 * 128 * 2},        // 131,072
      {"falcon-7b", 2ULL * 32 * 1 * 64 * 2},            // 8,192 (MQA)
      {"opt-13b", 2ULL * 40 * 40 * 128 * 2},            // 819,200 (the paper's 800 KB)
      {"opt-66b", 2ULL * 64 * 72 * 128 * 2},            // 2,359,296
      {"qwen2.5-7b", 2ULL * 28 * 4 * 128 * 2},          // 57,344
      {"gemma-2-9b", 2ULL * 42 * 8 * 256 * 2},          // 344,064, 21 layers windowed
      {"deepseek-v2-lite", (512ULL + 64) * 27 * 2},     // 31,104 (MLA latent)
      {"qwen3-next-80b-a3b", 2ULL * 12 * 2 * 256 * 2},  // 24,576: 12 of 48 layers attend
      // 48,068: "auto" is vLLM's fp8_ds_mla latent (656 B) + the indexer's key (132 B)
      {"deepseek-v3.2", 61ULL * (656 + 132)},
  };
  REQUIRE(expected.size() == config::model_names().size());
  for (const auto& [name, bytes] : expected) {
    INFO(name);
    const ModelSpec m = config::load_model(name);
    CHECK(kv_bytes_per_token(m, auto_format(m)) == bytes);
  }
}

TEST_CASE("window models: Mistral caps every layer, Gemma 2 every other layer",
          "[config][kv][window]") {
  const ModelSpec mistral = config::load_model("mistral-7b");
  CHECK(mistral.num_layers_of(LayerKind::kSlidingWindow) == 32);
  CHECK(mistral.attention.sliding_window == 4096);
  // At 32k tokens only 4,096 stay cached per layer.
  CHECK(kv_bytes_for_sequence(mistral, auto_format(mistral), 32768) == 131'072ULL * 4096);
  const ModelSpec gemma = config::load_model("gemma-2-9b");
  CHECK(gemma.layer_kinds[0] == LayerKind::kSlidingWindow);
  CHECK(gemma.layer_kinds[1] == LayerKind::kFullAttention);
  CHECK(gemma.num_layers_of(LayerKind::kSlidingWindow) == 21);
  CHECK(kv_bytes_for_sequence(gemma, auto_format(gemma), 8192) ==
        21ULL * 8192 * 8192 + 21ULL * 8192 * 4096);
  const auto groups = kv_groups(gemma, auto_format(gemma));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].window_tokens == 4096);
  CHECK(groups[0].num_layers == 21);
}

// Published parameter counts. Exact where kvsim models every tensor of the architecture; a stated
// relative tolerance where a small tensor is not modelled (OPT's 2 extra position rows, Qwen2's
// o_proj having no bias while the other projections do, sub-0.1% differences).
TEST_CASE("parameter counts match published figures", "[config][weights]") {
  struct Case {
    const char* name;
    std::uint64_t published;
    double tolerance;  // relative
  };
  const Case cases[] = {
      {"llama-2-7b", 6'738'415'616ULL, 0},
      {"llama-2-70b", 68'976'648'192ULL, 0},
      {"llama-3-8b", 8'030'261'248ULL, 0},
      {"llama-3-70b", 70'553'706'496ULL, 0},
      {"llama-3.1-405b", 405'853'388'800ULL, 0},
      {"mistral-7b", 7'241'732'096ULL, 0},
      {"mixtral-8x7b", 46'702'792'704ULL, 0},
      {"falcon-7b", 6'921'720'704ULL, 0},
      {"gemma-2-9b", 9'241'705'984ULL, 0},
      {"qwen2.5-7b", 7'615'616'512ULL, 0.0001},
      {"opt-13b", 12'853'473'280ULL, 0.0001},
      {"opt-66b", 65'700'000'000ULL, 0.001},
      {"deepseek-v2-lite", 15'700'000'000ULL, 0.001},
      {"qwen3-next-80b-a3b", 80'000'000'000ULL, 0.005},  // "80B in total"
      // DeepSeek-V3's 671 B and 61 lightning indexers; the config.json fixture's count
      {"deepseek-v3.2", 671'877'929'216ULL, 0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::uint64_t got = parameter_counts(config::load_model(c.name)).total();
    if (c.tolerance == 0) {
      CHECK(got == c.published);
    } else {
      CHECK(std::fabs(static_cast<double>(got) - static_cast<double>(c.published)) <=
            c.tolerance * static_cast<double>(c.published));
    }
  }
}

TEST_CASE("Mixtral's active parameters: 2 of 8 experts", "[config][weights]") {
  const ModelSpec m = config::load_model("mixtral-8x7b");
  CHECK(parameter_counts(m).active(m) == 12'879'925'248ULL);  // the paper's "13B active"
}

TEST_CASE("every shipped GPU loads with its cost-model section and a price", "[config][catalog]") {
  for (const HardwareSpec& hw : config::shipped_hardware()) {
    INFO(hw.name);
    CHECK(hw.memory_bytes > 0);
    CHECK(hw.memory_bandwidth > 0);
    CHECK(hw.peak_flops_for(Dtype::kBf16).has_value());
    CHECK(hw.price_per_hour > 0);
    // Datasheet guesses, or fitted to measurements (a100-80gb: Vidur's A100 timings).
    CHECK((hw.cost.provenance.kind == "datasheet" || hw.cost.provenance.kind == "imported" ||
           hw.cost.provenance.kind == "calibrated"));
    CHECK(hw.cost.op_classes.count("gemm") == 1);
    CHECK(hw.cost.op_classes.count("attn_decode") == 1);
    CHECK(!hw.source.empty());
  }
  const HardwareSpec h100 = config::load_hardware("h100-sxm");
  CHECK(h100.memory_bytes == 81'559ULL * kMiB);
  CHECK(h100.memory_bandwidth == Approx(3.35e12));
  CHECK(h100.peak_flops.at(Dtype::kBf16) == Approx(989.4e12));
  CHECK(h100.peak_flops_for(Dtype::kInt4) == Approx(1978.9e12));  // falls back to int8
  const HardwareSpec a100 = config::load_hardware("a100-40gb");
  CHECK(a100.memory_bytes == 40ULL * kGiB);
  CHECK(a100.peak_flops_for(Dtype::kFp8) == Approx(312e12));  // no fp8 on Ampere
}
