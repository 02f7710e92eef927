// config/hf_families_llama.cpp: the Llama-style families (here DeepSeek and Gemma 3) from
// config.json fixtures.
#include <cmath>

#include <catch2/catch.hpp>

#include "config/catalog.h"
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
  CHECK(std::fabs(static_cast<double>(parameter_counts(g3).total()) - 27.0e9) < 0.1e9);
}
