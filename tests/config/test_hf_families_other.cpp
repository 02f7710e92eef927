// config/hf_families_other.cpp: OPT and both Falcon forms (plus Gemma 2) from config.json
// fixtures.
#include <cmath>

#include <catch2/catch.hpp>

#include "config/catalog.h"
#include "config/hf_import.h"
#include "model/kv_math.h"
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

TEST_CASE("HF fixtures: OPT, Gemma 2 and both Falcon forms", "[config][hf]") {
  const ModelSpec opt13 = config::load_model(fixture("opt-13b.json"));
  CHECK(opt13.attention.kind == AttentionKind::kMha);
  CHECK(kv_bytes_per_token(opt13, *kv_format_from_name(opt13, "auto")) == 819'200);
  CHECK(opt13.weight_dtype == Dtype::kFp16);
  CHECK(opt13.max_context == 2048);
  CHECK(parameter_counts(opt13).total() == parameter_counts(config::load_model("opt-13b")).total());
  const ModelSpec opt66 = config::load_model(fixture("opt-66b.json"));
  CHECK(kv_bytes_per_token(opt66, bf16()) == 2'359'296);

  const ModelSpec gemma2 = config::load_model(fixture("gemma-2-9b.json"));
  CHECK(gemma2.weight_dtype == Dtype::kBf16);  // float32 checkpoint, served in bf16
  CHECK(gemma2.layer_kinds[0] == LayerKind::kSlidingWindow);
  CHECK(gemma2.layer_kinds[41] == LayerKind::kFullAttention);
  CHECK(kv_bytes_per_token(gemma2, bf16()) == 344'064);
  CHECK(parameter_counts(gemma2).total() == 9'241'705'984ULL);

  const ModelSpec f40 = config::load_model(fixture("falcon-40b-new.json"));
  CHECK(f40.attention.num_kv_heads == 8);
  CHECK(f40.norms_per_layer == 2);
  CHECK(kv_bytes_per_token(f40, bf16()) == 2ULL * 60 * 8 * 64 * 2);
  const ModelSpec rw40 = config::load_model(fixture("refinedweb-40b.json"));
  CHECK(rw40.attention.num_kv_heads == 8);
  CHECK(parameter_counts(rw40).total() == parameter_counts(f40).total());
  const ModelSpec f7 = config::load_model(fixture("falcon-7b-new.json"));
  CHECK(f7.attention.num_kv_heads == 1);
  CHECK(parameter_counts(f7).total() == 6'921'720'704ULL);
}

TEST_CASE("HF: Nemotron-H's SSM state in the config's mamba_ssm_cache_dtype", "[config][hf]") {
  // Two layers: a Mamba-2 mixer (8 heads of 16, state 32, 2 groups, conv 4) and attention.
  const std::string base = R"({"model_type": "nemotron_h", "num_hidden_layers": 2,
      "hidden_size": 128, "intermediate_size": 256, "vocab_size": 1000,
      "max_position_embeddings": 4096, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 32, "mamba_num_heads": 8, "mamba_head_dim": 16, "ssm_state_size": 32,
      "n_groups": 2, "conv_kernel": 4, "hybrid_override_pattern": "M*")";
  // Conv 3 × (8·16 + 2·2·32) = 768 and SSM 8 × 16 × 32 = 4,096 elements.
  const ModelSpec half = config::parse_hf_config(base + "}", "nh.json");
  CHECK(ssm_state_bytes_per_sequence(half) == (768 + 4096) * 2);
  const ModelSpec full =
      config::parse_hf_config(base + R"(, "mamba_ssm_cache_dtype": "float32"})", "nh32.json");
  CHECK(ssm_state_bytes_per_sequence(full) == 768 * 2 + 4096 * 4);
  CHECK_THROWS_WITH(
      config::parse_hf_config(base + R"(, "mamba_ssm_cache_dtype": "float9"})", "bad.json"),
      Catch::Contains("mamba_ssm_cache_dtype") && Catch::Contains("float9"));
}
