#include <cmath>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/catalog.h"
#include "config/hf_import.h"
#include "model/kv_math.h"
#include "model/weights.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::model;

using kvsim::test::error_of;

namespace {

KvFormat bf16() {
  KvFormat f;
  f.dtype = Dtype::kBf16;
  return f;
}

// One row of ../shared/data/models/README.md ("Key fields"): L, H, KV, d, hidden, max_pos,
// KV B/tok (16-bit cache, all attention layers, no window caps).
struct Row {
  const char* file;
  const char* model_type;
  std::int64_t layers, q_heads, kv_heads, head_dim, hidden, max_pos;
  Bytes kv_bytes_per_token;
};

const Row kReadme[] = {
    {"meta-llama--Llama-2-7b-hf.json", "llama", 32, 32, 32, 128, 4096, 4096, 524'288},
    {"meta-llama--Llama-2-70b-hf.json", "llama", 80, 64, 8, 128, 8192, 4096, 327'680},
    {"meta-llama--Meta-Llama-3.1-8B.json", "llama", 32, 32, 8, 128, 4096, 131072, 131'072},
    {"meta-llama--Meta-Llama-3.1-70B.json", "llama", 80, 64, 8, 128, 8192, 131072, 327'680},
    {"meta-llama--Meta-Llama-3.1-405B.json", "llama", 126, 128, 8, 128, 16384, 131072, 516'096},
    {"mistralai--Mistral-7B-v0.1.json", "mistral", 32, 32, 8, 128, 4096, 32768, 131'072},
    {"mistralai--Mixtral-8x7B-v0.1.json", "mixtral", 32, 32, 8, 128, 4096, 32768, 131'072},
    {"tiiuae--falcon-7b.json", "RefinedWebModel", 32, 71, 1, 64, 4544, 2048, 8'192},
    {"Qwen--Qwen2.5-7B.json", "qwen2", 28, 28, 4, 128, 3584, 131072, 57'344},
    {"Qwen--Qwen2.5-7B-Instruct.json", "qwen2", 28, 28, 4, 128, 3584, 32768, 57'344},
    {"Qwen--Qwen3-30B-A3B.json", "qwen3_moe", 48, 32, 4, 128, 2048, 40960, 98'304},
    {"deepseek-ai--DeepSeek-V2-Lite.json", "deepseek_v2", 27, 16, 16, 192, 2048, 163840, 31'104},
    {"google--gemma-4-26B-A4B.json", "gemma4_text", 30, 16, 8, 256, 2816, 262144,
     25 * 8'192 + 5 * 2'048},  // README note: local 8,192 B/layer, global 2,048 with K = V
    {"openai--gpt-oss-120b.json", "gpt_oss", 36, 64, 8, 64, 2880, 131072, 73'728},
    {"nvidia--Nemotron-H-56B-Base-8K.json", "nemotron_h", 118, 64, 8, 128, 8192, 8192, 40'960},
    {"openai-community--gpt2.json", "gpt2", 12, 12, 12, 64, 768, 1024, 36'864},
    {"microsoft--Phi-3-mini-4k-instruct.json", "phi3", 32, 32, 32, 96, 3072, 4096, 393'216},
};

}  // namespace

TEST_CASE("every shared HF config loads and matches the README table", "[config][hf]") {
  KVSIM_REQUIRE_SHARED(readme, "models/README.md");
  (void)readme;
  REQUIRE(sizeof(kReadme) / sizeof(kReadme[0]) == 17);
  for (const Row& row : kReadme) {
    INFO(row.file);
    const auto path = test::shared_data_file(std::string("models/") + row.file);
    REQUIRE(path.has_value());
    const ModelSpec m = config::load_model(*path);
    CHECK(m.family == row.model_type);
    CHECK(m.num_layers == row.layers);
    CHECK(m.attention.num_q_heads == row.q_heads);
    CHECK(m.attention.num_kv_heads == row.kv_heads);
    CHECK(m.attention.head_dim == row.head_dim);
    CHECK(m.hidden_size == row.hidden);
    CHECK(m.max_context == row.max_pos);
    CHECK(kv_bytes_per_token(m, bf16()) == row.kv_bytes_per_token);
  }
}

TEST_CASE("HF import: windows, MoE, MLA and hybrid layers per family", "[config][hf]") {
  KVSIM_REQUIRE_SHARED(dir, "models");
  auto load = [&](const std::string& f) { return config::load_model(dir + "/" + f); };

  const ModelSpec mistral = load("mistralai--Mistral-7B-v0.1.json");
  CHECK(mistral.num_layers_of(LayerKind::kSlidingWindow) == 32);
  CHECK(mistral.attention.sliding_window == 4096);

  // Qwen2.5: sliding_window 131072 is present but use_sliding_window is false.
  const ModelSpec qwen = load("Qwen--Qwen2.5-7B.json");
  CHECK(qwen.num_layers_of(LayerKind::kSlidingWindow) == 0);
  CHECK(qwen.attention.sliding_window == 0);

  const ModelSpec mixtral = load("mistralai--Mixtral-8x7B-v0.1.json");
  CHECK(mixtral.moe.num_experts == 8);
  CHECK(mixtral.moe.experts_per_token == 2);
  CHECK(parameter_counts(mixtral).total() == 46'702'792'704ULL);

  const ModelSpec qwen3 = load("Qwen--Qwen3-30B-A3B.json");
  CHECK(qwen3.moe.num_experts == 128);
  CHECK(qwen3.moe.experts_per_token == 8);
  CHECK(qwen3.moe.expert_intermediate_size == 768);
  CHECK(std::fabs(static_cast<double>(parameter_counts(qwen3).total()) - 30.5e9) < 0.05e9);

  const ModelSpec ds = load("deepseek-ai--DeepSeek-V2-Lite.json");
  CHECK(ds.attention.kind == AttentionKind::kMla);
  CHECK(ds.attention.mla.kv_lora_rank == 512);
  CHECK(ds.attention.mla.q_lora_rank == 0);  // null in the file
  CHECK(ds.moe.first_dense_layers == 1);
  CHECK(ds.moe.num_shared_experts == 2);
  CHECK(kv_bytes_per_token(ds, bf16(), 8) == 31'104);  // latent not split

  // gpt-oss: alternating sliding (window 128) and full layers, MXFP4 experts.
  const ModelSpec oss = load("openai--gpt-oss-120b.json");
  CHECK(oss.layer_kinds[0] == LayerKind::kSlidingWindow);
  CHECK(oss.layer_kinds[1] == LayerKind::kFullAttention);
  CHECK(oss.num_layers_of(LayerKind::kSlidingWindow) == 18);
  CHECK(oss.attention.sliding_window == 128);
  CHECK(oss.moe.has_expert_dtype);
  CHECK(oss.moe.expert_dtype == model::Dtype::kFp4);  // MXFP4: E2M1 elements
  CHECK(oss.moe.expert_scale_group_size == 32);
  CHECK(kv_bytes_for_sequence(oss, bf16(), 1000) == 18ULL * 2048 * 1000 + 18ULL * 2048 * 128);
  CHECK(std::fabs(static_cast<double>(parameter_counts(oss).total()) - 116.83e9) < 0.01e9);
  // ~61 GiB of MXFP4 checkpoint, far below the 234 GB of bf16.
  CHECK(weights_bytes(oss) < 70ULL * kGiB);

  // Gemma 4: nested text_config, 5 global layers with 2 KV heads of 512 and K = V.
  const ModelSpec g4 = load("google--gemma-4-26B-A4B.json");
  CHECK(g4.num_layers_of(LayerKind::kFullAttention) == 5);
  CHECK(g4.layer_kinds[5] == LayerKind::kFullAttention);
  CHECK(g4.attention.full_layer_num_kv_heads == 2);
  CHECK(g4.attention.full_layer_head_dim == 512);
  CHECK(g4.attention.k_eq_v);
  CHECK(g4.attention.sliding_window == 1024);
  CHECK(kv_bytes_per_token_layer(g4, 5, bf16()) == 2'048);
  CHECK(kv_bytes_per_token_layer(g4, 0, bf16()) == 8'192);
  // 25.2 B in the language model, and a SigLIP-sized vision encoder from vision_config.
  CHECK(std::fabs(static_cast<double>(parameter_counts(g4).total() - g4.vision_parameters) -
                  25.2e9) < 0.1e9);
  CHECK(g4.vision_parameters > 400'000'000);
  CHECK(g4.vision_parameters < 500'000'000);

  // Nemotron-H: bare Infinity in the file; only the 10 attention layers cache KV, plus a fixed
  // Mamba state: 54 layers × (conv 3 × (16,384 + 4,096) + SSM 256 × 64 × 256) elements × 2 B.
  const ModelSpec nh = load("nvidia--Nemotron-H-56B-Base-8K.json");
  CHECK(nh.num_layers_of(LayerKind::kFullAttention) == 10);
  CHECK(nh.num_layers_of(LayerKind::kNoKvCache) == 108);
  CHECK(ssm_state_bytes_per_sequence(nh) == 54ULL * (3 * 20'480 + 4'194'304) * 2);
  CHECK(nh.ssm_state_bytes_per_sequence == ssm_state_bytes_per_sequence(nh));
  CHECK(std::fabs(static_cast<double>(parameter_counts(nh).total()) - 56e9) < 0.5e9);

  const ModelSpec gpt2 = load("openai-community--gpt2.json");
  CHECK(gpt2.learned_positions);
  CHECK(parameter_counts(gpt2).total() == 124'439'808ULL);
  CHECK(gpt2.weight_dtype == Dtype::kFp16);  // no torch_dtype: served in fp16 (vLLM auto)

  const ModelSpec falcon = load("tiiuae--falcon-7b.json");
  CHECK(falcon.attention.kind == AttentionKind::kMqa);
  CHECK(parameter_counts(falcon).total() == 6'921'720'704ULL);

  const ModelSpec phi3 = load("microsoft--Phi-3-mini-4k-instruct.json");
  CHECK(phi3.attention.sliding_window == 2047);
  CHECK(std::fabs(static_cast<double>(parameter_counts(phi3).total()) - 3.821e9) < 0.005e9);
}

TEST_CASE("HF import errors name the file, the line, the field and what was expected",
          "[config][hf]") {
  CHECK(error_of([] {
          config::parse_hf_config("{\"model_type\": \"mamba\"}", "c.json");
        }).rfind("c.json:1:16: model_type: unsupported model_type 'mamba'", 0) == 0);
  CHECK(error_of([] {
          config::parse_hf_config("{\n  \"model_type\": \"llama\",\n  \"num_hidden_layers\": -3\n}",
                                  "c.json");
        }) == "c.json:3:24: num_hidden_layers: expected a positive integer, got -3");
  CHECK(error_of([] {
          config::parse_hf_config("{\"model_type\": \"llama\"", "c.json");
        }).rfind("c.json:1:", 0) == 0);
  const std::string nested = error_of([] {
    config::parse_hf_config(
        R"({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text",
            "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 3, "vocab_size": 10, "max_position_embeddings": 64,
            "intermediate_size": 8, "sliding_window": 4,
            "layer_types": ["sliding_attention", "full_attention"]}})",
        "g.json");
  });
  CHECK(nested.rfind("g.json:3:36: text_config.num_key_value_heads: expected a divisor of the 4 "
                     "query heads",
                     0) == 0);
}
