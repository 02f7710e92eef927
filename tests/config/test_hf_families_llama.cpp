// config/hf_families_llama.cpp: the Llama-style families (here DeepSeek and Gemma 3) from
// config.json fixtures.
#include <cmath>

#include <catch2/catch.hpp>

#include "common/warning.h"
#include "config/catalog.h"
#include "config/hf_import.h"
#include "model/kv_math.h"
#include "model/vllm_memory.h"
#include "model/weights.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::model;

namespace {

KvFormat bf16() {
  KvFormat f;
  f.dtype = Dtype::kBf16;
  return f;
}

std::string fixture(const std::string& name) {
  return test::source_dir() + "/tests/config/data/hf/" + name;
}

}  // namespace

TEST_CASE("HF fixtures: DeepSeek-V3 (MLA with low-rank queries) and Gemma 3 (wrapper, 5:1 local)",
          "[config][hf]") {
  const ModelSpec v3 = config::load_model(fixture("deepseek-v3.json"));
  CHECK(v3.attention.kind == AttentionKind::kMla);
  CHECK(v3.attention.mla.q_lora_rank == 1536);
  CHECK(v3.moe.first_dense_layers == 3);
  CHECK(kv_bytes_per_token(v3, bf16()) == (512ULL + 64) * 61 * 2);  // 70,272
  // 671 B parameters of which ~37 B active (DeepSeek-V3 report; the MTP module is not loaded).
  const ParameterCounts c = parameter_counts(v3);
  CHECK(c.total() == 671'026'404'352ULL);
  CHECK(std::fabs(static_cast<double>(c.active(v3)) - 37.5e9) < 0.5e9);

  const ModelSpec g3 = config::load_model(fixture("gemma-3-27b.json"));
  CHECK(g3.family == "gemma3_text");
  CHECK(g3.weight_dtype == Dtype::kBf16);
  CHECK(g3.num_layers_of(LayerKind::kSlidingWindow) == 52);
  CHECK(g3.layer_kinds[5] == LayerKind::kFullAttention);
  CHECK(g3.layer_kinds[4] == LayerKind::kSlidingWindow);
  CHECK(kv_bytes_per_token(g3, bf16()) == 2ULL * 62 * 16 * 128 * 2);
  CHECK(kv_bytes_for_sequence(g3, bf16(), 8192) == 10ULL * 8192 * 8192 + 52ULL * 8192 * 1024);
  // 27.0 B in the language model; with the 423 M SigLIP encoder and projector, 27.4 B (the
  // checkpoint's size on Hugging Face).
  CHECK(std::fabs(static_cast<double>(parameter_counts(g3).total() - g3.vision_parameters) -
                  27.0e9) < 0.1e9);
  CHECK(std::fabs(static_cast<double>(parameter_counts(g3).total()) - 27.43e9) < 0.03e9);
}

TEST_CASE("HF fixture: DeepSeek-V3.2 (sparse attention: an indexer over DeepSeek-V3's MLA)",
          "[config][hf]") {
  const ModelSpec v32 = config::load_model(fixture("deepseek-v3.2.json"));
  CHECK(v32.family == "deepseek_v32");
  CHECK(v32.attention.kind == AttentionKind::kMla);
  CHECK(v32.attention.indexer.enabled());
  CHECK(v32.attention.indexer.topk == 2048);
  CHECK(v32.attention.indexer.heads == 64);
  CHECK(v32.attention.indexer.head_dim == 128);
  // vLLM's default cache for it is fp8_ds_mla: a 512-element fp8 latent with four fp32 scales
  // and the 64-element rope part in bf16 (656 B), plus the indexer's 128 fp8 keys and one fp32
  // scale (132 B), in every one of the 61 layers.
  const KvFormat automatic = *kv_format_from_name(v32, "auto");
  CHECK(automatic.dtype == Dtype::kFp8);
  CHECK(mla_latent_row_bytes(v32.attention, automatic) == 656);
  CHECK(indexer_key_row_bytes(v32.attention.indexer) == 132);
  CHECK(kv_bytes_per_token(v32, automatic) == 61ULL * (656 + 132));     // 48,068
  CHECK(kv_bytes_per_token(v32, automatic, 8) == 61ULL * (656 + 132));  // whole on every GPU
  CHECK(kv_bytes_per_token(v32, bf16()) == 61ULL * (576 * 2 + 132));
  // DeepSeek-V3's 671,026,404,352 parameters and per layer the indexer's wq_b (1,536 → 64 ×
  // 128), wk (7,168 → 128), k_norm (weight and bias) and weights_proj (7,168 → 64).
  const std::uint64_t indexer = 1536ULL * 64 * 128 + 7168ULL * 128 + 2 * 128 + 7168ULL * 64;
  CHECK(parameter_counts(v32).total() == 671'026'404'352ULL + 61 * indexer);
  // The indexer is replicated: each of 8 GPUs holds all of it (fp8 wq_b and wk with their
  // 128 × 128 block scales, bf16 norm and head weights), the rest 1/8.
  const ModelSpec v3 = config::load_model(fixture("deepseek-v3.json"));
  ModelSpec v3_fp8 = v3;
  v3_fp8.quantization = v32.quantization;
  const auto per_gpu = [](const ModelSpec& m) { return weights_bytes_per_gpu(m, 8); };
  const std::uint64_t fp8_block = [](std::uint64_t rows, std::uint64_t cols) {
    return rows * cols + 4 * ((rows + 127) / 128) * ((cols + 127) / 128);
  }(64 * 128, 1536) + [](std::uint64_t rows, std::uint64_t cols) {
    return rows * cols + 4 * ((rows + 127) / 128) * ((cols + 127) / 128);
  }(128, 7168);
  CHECK(per_gpu(v32) - per_gpu(v3_fp8) == 61 * (fp8_block + 2 * (2 * 128 + 7168 * 64)));
  // vLLM V1 runs it at 64-token blocks whatever was asked; a block spans all 61 layers.
  CHECK(vllm_hybrid_block_size(v32, automatic, 8, 16) == 64);
  const VllmKvCacheLayout l =
      vllm_kv_cache_layout(v32, automatic, 8, 64ULL * 48'068 * 100 + 5, 16, 32768, 8192);
  CHECK(l.block_size == 64);
  CHECK(l.num_groups == 1);
  CHECK(l.block_bytes == 64ULL * 48'068);
  CHECK(l.num_blocks == 100);
  CHECK(l.kv_cache_tokens == 6400);
  // A config that names DeepseekV32ForCausalLM under another model_type reads as this family;
  // one without the indexer's sizes is an error naming the key.
  std::string text = test::slurp(fixture("deepseek-v3.2.json"));
  std::string renamed = text;
  renamed.replace(renamed.find("\"deepseek_v32\""), 14, "\"my_dsa_tune\"");
  CHECK(config::parse_hf_config(renamed, "tune.json").attention.indexer.topk == 2048);
  // GLM-5 (glm_moe_dsa) is the same design under GLM's model_type.
  std::string glm = text;
  glm.replace(glm.find("\"deepseek_v32\""), 14, "\"glm_moe_dsa\"");
  glm.replace(glm.find("DeepseekV32ForCausalLM"), 22, "GlmMoeDsaForCausalLM");
  const ModelSpec glm5 = config::parse_hf_config(glm, "glm5.json");
  CHECK(glm5.family == "glm_moe_dsa");
  CHECK(glm5.attention.indexer.heads == 64);
  const auto at = text.find("\"index_n_heads\": 64,");
  REQUIRE(at != std::string::npos);
  text.erase(at, std::string("\"index_n_heads\": 64,").size());
  CHECK_THROWS_WITH(config::parse_hf_config(text, "v32.json"), Catch::Contains("index_n_heads"));
}

TEST_CASE("HF fixture: MiniMax-M2 (GQA with whole-projection QK norms, 256 experts, fp8 blocks)",
          "[config][hf]") {
  const ModelSpec m = config::load_model(fixture("minimax-m2.json"));
  CHECK(m.family == "minimax_m2");
  CHECK(m.attention.kind == AttentionKind::kGqa);
  CHECK((m.attention.num_q_heads == 48 && m.attention.num_kv_heads == 8));
  CHECK((m.qk_norm && m.qk_norm_whole));
  CHECK((m.moe.num_experts == 256 && m.moe.experts_per_token == 8));
  CHECK(m.moe.num_shared_experts == 0);
  CHECK(m.moe.first_dense_layers == 0);
  CHECK(m.quantization.method == QuantMethod::kFp8);
  CHECK(m.quantization.scales == ScaleLayout::kBlock);
  CHECK(kv_bytes_per_token(m, bf16()) == 2ULL * 62 * 8 * 128 * 2);  // 253,952
  // Per layer: Q (48 × 128), K and V (8 × 128 each) and O over 3,072; its Q and K norms over the
  // whole projections (6,144 and 1,024); two norms; the router; 256 experts of 3 × 3,072 × 1,536.
  // Embeddings and head 2 × 200,064 × 3,072 and the final norm: 228.7 B ("230B total").
  const std::uint64_t layer = 3072ULL * 6144 * 2 + 3072ULL * 1024 * 2 + 6144 + 1024 + 2 * 3072 +
                              3072ULL * 256 + 256ULL * 3 * 3072 * 1536;
  const ParameterCounts c = parameter_counts(m);
  CHECK(c.total() == 62 * layer + 2ULL * 200064 * 3072 + 3072);
  // Active: 8 of 256 experts per layer; 11.0 B with the embeddings and head, 9.8 B without
  // (MiniMax's "10B active").
  CHECK(c.active(m) == c.total() - 62ULL * (256 - 8) * 3 * 3072 * 1536);
  // The norms split over TP with their heads: at TP 8 each GPU holds 768 + 128 of them.
  ModelSpec per_head = m;
  per_head.qk_norm_whole = false;
  CHECK(weights_bytes_per_gpu(m, 8) - weights_bytes_per_gpu(per_head, 8) ==
        62ULL * 2 * ((768 + 128) - 2 * 128));
  // MiniMax-Text-01's lightning-attention layers are refused, by the key and the layer.
  std::string text = test::slurp(fixture("minimax-m2.json"));
  text.replace(text.find("[1, 1, 1"), 8, "[1, 0, 1");
  CHECK_THROWS_WITH(config::parse_hf_config(text, "m.json"),
                    Catch::Contains("attn_type_list") && Catch::Contains("layer 1") &&
                        Catch::Contains("lightning attention is not modelled"));
}

TEST_CASE("HF fixture: Qwen3-Next (gated DeltaNet hybrid, gated attention, 512 experts)",
          "[config][hf]") {
  const ModelSpec m = config::load_model(fixture("qwen3-next-80b-a3b.json"));
  CHECK(m.family == "qwen3_next");
  // Every 4th layer is full attention; the others are linear attention without a KV cache.
  CHECK(m.num_layers_of(LayerKind::kFullAttention) == 12);
  CHECK(m.num_layers_of(LayerKind::kNoKvCache) == 36);
  CHECK(m.layer_kinds[3] == LayerKind::kFullAttention);
  CHECK(m.block_kind(0) == BlockKind::kLinearAttentionMlp);
  CHECK(m.block_kind(3) == BlockKind::kAttentionMlp);
  CHECK(m.attention.output_gate);
  CHECK(m.qk_norm);
  CHECK(m.moe.num_experts == 512);
  CHECK(m.moe.num_shared_experts == 1);
  CHECK(kv_bytes_per_token(m, bf16()) == 2ULL * 12 * 2 * 256 * 2);  // 24,576
  // Per layer: conv 3 × (2·16·128 + 32·128) and recurrent 32 × 128 × 128, all bf16.
  CHECK(ssm_state_bytes_per_sequence(m, 1) == 36ULL * (3 * 8192 * 2 + 32 * 128 * 128 * 2));
  CHECK(ssm_state_bytes_per_sequence(m, 4) == 36ULL * (3 * 2048 * 2 + 8 * 128 * 128 * 2));
  // 80B: embeddings and head 2 × 151,936 × 2,048; 12 gated-attention and 36 DeltaNet mixers;
  // 48 × (512 routed + 1 shared experts of 3 × 2,048 × 512, a router); norms.
  CHECK(parameter_counts(m).total() == 79'674'292'992ULL);
  CHECK(tensor_parallel_problem(m, 8).empty());
  ModelSpec odd = m;
  odd.gdn.num_key_heads = 12;
  CHECK(tensor_parallel_problem(odd, 8).find("linear-attention key heads") != std::string::npos);
}

TEST_CASE("HF: Qwen3.5 wrapper with an fp32 recurrent state and a layer_types list",
          "[config][hf]") {
  const std::string text = R"({
    "model_type": "qwen3_5_moe", "tie_word_embeddings": true,
    "text_config": {
      "model_type": "qwen3_5_moe_text", "num_hidden_layers": 4, "hidden_size": 1024,
      "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
      "vocab_size": 1000, "max_position_embeddings": 4096,
      "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 64,
      "linear_value_head_dim": 64, "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32",
      "layer_types": ["linear_attention", "linear_attention", "linear_attention",
                      "full_attention"],
      "num_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
      "shared_expert_intermediate_size": 256}})";
  const ModelSpec m = config::parse_hf_config(text, "qwen3.5.json");
  CHECK(m.family == "qwen3_5_moe_text");
  CHECK(m.tie_word_embeddings);  // said at the wrapper's top level
  CHECK(m.layer_kinds == std::vector<LayerKind>{LayerKind::kNoKvCache, LayerKind::kNoKvCache,
                                                LayerKind::kNoKvCache, LayerKind::kFullAttention});
  // Conv 3 × (2·4·64 + 8·64) in bf16, recurrent 8 × 64 × 64 in fp32, over 3 layers.
  CHECK(ssm_state_bytes_per_sequence(m, 1) == 3ULL * (3 * 1024 * 2 + 8 * 64 * 64 * 4));

  // Without layer_types, every full_attention_interval-th layer is full attention.
  const std::string dense = R"({"model_type": "qwen3_next", "num_hidden_layers": 4,
      "hidden_size": 1024, "intermediate_size": 2048, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 1000,
      "max_position_embeddings": 4096, "linear_num_key_heads": 4, "linear_num_value_heads": 8,
      "linear_key_head_dim": 64, "linear_value_head_dim": 64, "linear_conv_kernel_dim": 4,
      "full_attention_interval": 2})";
  const ModelSpec d = config::parse_hf_config(dense, "dense.json");
  CHECK(!d.moe.enabled());
  CHECK(d.layer_kinds == std::vector<LayerKind>{LayerKind::kNoKvCache, LayerKind::kFullAttention,
                                                LayerKind::kNoKvCache, LayerKind::kFullAttention});
  std::string bad = text;
  bad.replace(bad.find("\"full_attention\"]"), 16, "\"sliding_attention\"");
  CHECK_THROWS_WITH(config::parse_hf_config(bad, "bad.json"),
                    Catch::Contains("text_config.layer_types[3]") &&
                        Catch::Contains("full_attention|linear_attention"));
}

TEST_CASE("HF fixture: GLM-4.5-Air (GQA + DeepSeek-style MoE) and GLM-4 (four norms)",
          "[config][hf]") {
  const ModelSpec m = config::load_model(fixture("glm-4.5-air.json"));
  CHECK(m.family == "glm4_moe");
  CHECK(m.attention.kind == AttentionKind::kGqa);
  CHECK(m.attention_bias);
  CHECK(!m.qk_norm);
  CHECK(m.moe.first_dense_layers == 1);
  CHECK(m.moe.num_experts == 128);
  CHECK(m.moe.num_shared_experts == 1);
  CHECK(m.intermediate_size == 10944);
  CHECK(kv_bytes_per_token(m, bf16()) == 2ULL * 46 * 8 * 128 * 2);  // 188,416
  // "106B total, 12B active" (GLM-4.5 report; kvsim also counts the o_proj bias and, among
  // the active ones, the embeddings and the head).
  CHECK(parameter_counts(m).total() == 106'852'433'920ULL);
  CHECK(std::fabs(static_cast<double>(parameter_counts(m).active(m)) - 13.42e9) < 0.01e9);

  const ModelSpec g4 = config::parse_hf_config(
      R"({"model_type": "glm4", "num_hidden_layers": 40, "hidden_size": 4096,
          "intermediate_size": 13696, "num_attention_heads": 32, "num_key_value_heads": 2,
          "head_dim": 128, "vocab_size": 151552, "max_position_embeddings": 32768})",
      "glm-4-9b.json");
  CHECK(g4.norms_per_layer == 4);
  CHECK(g4.attention_bias);
  CHECK(kv_bytes_per_token(g4, bf16()) == 2ULL * 40 * 2 * 128 * 2);
}

TEST_CASE("HF: an unknown model_type is read by its architectures class, as vLLM does",
          "[config][hf]") {
  // A fine-tune that keeps DeepSeek-V3's architecture under its own model_type.
  const std::string v3 = test::slurp(fixture("deepseek-v3.json"));
  const std::string from = "\"model_type\": \"deepseek_v3\"";
  REQUIRE(v3.find(from) != std::string::npos);
  std::string text = v3;
  text.replace(text.find(from), from.size(),
               "\"model_type\": \"my_tune\", \"architectures\": [\"DeepseekV3ForCausalLM\"]");
  const ModelSpec tune = config::parse_hf_config(text, "my-tune.json");
  CHECK(tune.family == "deepseek_v3");
  CHECK(tune.source.find("model_type 'my_tune' read as deepseek_v3") != std::string::npos);
  CHECK(kv_bytes_per_token(tune, bf16()) == (512ULL + 64) * 61 * 2);
  // Kimi K2's own model_type is known; Kimi K2.5 wraps it in text_config.
  text = v3;
  text.replace(text.find(from), from.size(), "\"model_type\": \"kimi_k2\"");
  CHECK(config::parse_hf_config(text, "kimi-k2.json").family == "kimi_k2");
  const ModelSpec k25 = config::parse_hf_config(
      R"({"model_type": "kimi_k25", "text_config": )" + text + "}", "kimi-k2.5.json");
  CHECK(k25.family == "kimi_k2");
  CHECK(kv_bytes_per_token(k25, bf16()) == (512ULL + 64) * 61 * 2);
  // Neither the model_type nor a class kvsim knows: an error that says both were tried.
  CHECK_THROWS_WITH(
      config::parse_hf_config(R"({"model_type": "foo", "architectures": ["FooForCausalLM"]})",
                              "foo.json"),
      Catch::Contains("unsupported model_type 'foo'") && Catch::Contains("architectures"));
}

TEST_CASE("HF: a multimodal wrapper's vision encoder is counted from its vision_config",
          "[config][hf][vision]") {
  // Qwen2.5-VL-7B (the older layout: the language model's fields at the top level).
  const std::string qwen25vl = R"({
    "model_type": "qwen2_5_vl", "num_hidden_layers": 28, "hidden_size": 3584,
    "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "max_position_embeddings": 128000, "torch_dtype": "bfloat16",
    "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280,
      "intermediate_size": 3420, "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584,
      "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}})";
  const ModelSpec m = config::parse_hf_config(qwen25vl, "qwen2.5-vl-7b.json");
  CHECK(m.family == "qwen2_5_vl");
  CHECK(kv_bytes_per_token(m, bf16()) == 2ULL * 28 * 4 * 128 * 2);
  // 32 blocks × (4 × 1,280² + 4 × 1,280 attention, 3 × 1,280 × 3,420 + 2 × 3,420 + 1,280 gated
  // MLP, 4 × 1,280 norms) + the patch embedding 3 × 2 × 14² × 1,280 + the merger (5,120² +
  // 5,120 + 5,120 × 3,584 + 3,584 + 2 × 1,280): 676.6 M, Qwen's "675M" vision encoder.
  const std::uint64_t vision = 32ULL * (6'558'720 + 13'140'920 + 5'120) + 1'505'280 + 44'575'744;
  CHECK(m.vision_parameters == vision);
  CHECK(parameter_counts(m).vision == vision);
  CHECK(parameter_counts(m).active(m) == parameter_counts(m).total() - vision);
  // Sharded over the tensor-parallel GPUs like the language model: half the elements, 2 B each.
  ModelSpec text_only = m;
  text_only.vision_parameters = 0;
  CHECK(weights_bytes_per_gpu(m, 2) - weights_bytes_per_gpu(text_only, 2) == vision / 2 * 2);

  // SigLIP (Gemma 3): 27 blocks × (5,313,024 attention + 9,921,872 MLP + 4,608 norms), the
  // patch embedding 3 × 14² × 1,152, 64² positions × 1,152, one linear layer into 5,376.
  const ModelSpec g3 = config::load_model(fixture("gemma-3-27b.json"));
  CHECK(g3.vision_parameters ==
        27ULL * (5'313'024 + 9'921'872 + 4'608) + 677'376 + 4'718'592 + 1152ULL * 5376 + 5376);

  // A vision_config that leaves its sizes at the class defaults cannot be sized: a warning.
  std::vector<std::string> warnings;
  const WarningSink previous =
      set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  std::string bare = qwen25vl;
  bare.replace(bare.find("\"depth\": 32, "), 13, "");
  const ModelSpec unsized = config::parse_hf_config(bare, "bare.json");
  set_warning_sink(previous);
  CHECK(unsized.vision_parameters == 0);
  REQUIRE(warnings.size() == 1);
  INFO(warnings[0]);
  CHECK(warnings[0].find("bare.json:5:22: vision_config: the vision encoder's weights are not "
                         "counted: vision_config lacks depth|num_hidden_layers|"
                         "vt_num_hidden_layers") != std::string::npos);
}

TEST_CASE("HF: Llama 4 Scout and Maverick (interleaved MoE with a shared expert)", "[config][hf]") {
  const std::string scout = R"({"model_type": "llama4", "text_config": {
      "model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128,
      "hidden_size": 5120, "interleave_moe_layer_step": 1, "intermediate_size": 8192,
      "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
      "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
      "num_key_value_heads": 8, "num_local_experts": 16, "vocab_size": 202048}})";
  const ModelSpec s = config::parse_hf_config(scout, "scout.json");
  CHECK(s.family == "llama4_text");
  CHECK(s.moe.is_moe_layer(0));
  CHECK(s.moe.num_shared_experts == 1);
  CHECK(s.intermediate_size == 16384);
  // Chunked local attention keeps every layer's KV under vLLM 0.10: all 48 layers are full.
  CHECK(kv_bytes_per_token(s, bf16()) == 2ULL * 48 * 8 * 128 * 2);
  // Meta's "109B total, 17B active": 107.8 B in the language model, the rest its vision encoder
  // (not in this config).
  CHECK(std::fabs(static_cast<double>(parameter_counts(s).total()) - 107.77e9) < 0.01e9);
  CHECK(std::fabs(static_cast<double>(parameter_counts(s).active(s)) - 17.2e9) < 0.1e9);

  std::string maverick = scout;
  maverick.replace(maverick.find("\"interleave_moe_layer_step\": 1"), 30,
                   "\"interleave_moe_layer_step\": 2");
  maverick.replace(maverick.find("\"num_local_experts\": 16"), 23, "\"num_local_experts\": 128");
  const ModelSpec m = config::parse_hf_config(maverick, "maverick.json");
  CHECK_FALSE(m.moe.is_moe_layer(0));  // dense, intermediate_size_mlp wide
  CHECK(m.moe.is_moe_layer(1));
  // Meta's "400B total, 17B active".
  CHECK(std::fabs(static_cast<double>(parameter_counts(m).total()) - 400.7e9) < 0.1e9);
  CHECK(std::fabs(static_cast<double>(parameter_counts(m).active(m)) - 17.2e9) < 0.1e9);
  // A moe_layers list must name the interleaved layers.
  std::string listed = maverick;
  listed.replace(listed.find("\"num_local_experts\""), 0, "\"moe_layers\": [0, 2], ");
  CHECK_THROWS_WITH(
      config::parse_hf_config(listed, "listed.json"),
      Catch::Contains("text_config.moe_layers") && Catch::Contains("interleave_moe_layer_step"));
}
