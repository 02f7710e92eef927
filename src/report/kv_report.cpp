#include "report/kv_report.h"

#include "common/format.h"
#include "report/kv_vllm_report.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

std::string element_bytes(const model::KvFormat& f) {
  const int bits = model::bits_per_element(f.dtype);
  std::string s =
      bits % 8 == 0 ? std::to_string(bits / 8) : fixed(bits / 8.0, bits % 4 == 0 ? 1 : 3);
  return s + " B (" + std::string(model::dtype_name(f.dtype)) + ")";
}

std::string n(std::int64_t v) {
  return with_commas(v);
}

std::string plural(std::int64_t v, const std::string& word) {
  return n(v) + " " + word + (v == 1 ? "" : "s");
}

// "2 (K and V) × 80 layers × 8 KV heads × 128 dims × 2 B (bf16)" for one group (tp = 1).
std::string group_formula(const model::ModelSpec& m, const model::KvGroup& g,
                          const model::KvFormat& f) {
  const auto& a = m.attention;
  std::string s;
  if (a.kind == model::AttentionKind::kMla && a.indexer.enabled()) {
    // Sparse attention: the latent row as vLLM stores it, then the indexer's key.
    const auto latent = static_cast<std::int64_t>(model::mla_latent_row_bytes(a, f));
    return plural(g.num_layers, "layer") + " × ((" + n(a.mla.kv_lora_rank) + " latent + " +
           n(a.mla.qk_rope_head_dim) + " rope) = " + n(latent) + " B" +
           (model::uses_fp8_ds_mla(a, f) ? " (fp8_ds_mla)" : " (" + element_bytes(f) + ")") +
           " + indexer key " +
           n(static_cast<std::int64_t>(model::indexer_key_row_bytes(a.indexer))) + " B)";
  }
  if (a.kind == model::AttentionKind::kMla) {
    s = "(" + n(a.mla.kv_lora_rank) + " latent + " + n(a.mla.qk_rope_head_dim) + " rope) × " +
        plural(g.num_layers, "layer") + " × " + element_bytes(f);
  } else {
    const model::LayerKvGeometry lg = model::layer_kv_geometry(m, g.kind);
    const std::int64_t heads = lg.kv_heads, k_dim = lg.k_dim, v_dim = lg.v_dim;
    const bool v = lg.stores_v;
    const std::string tensors = !v ? "1 (K = V)" : (k_dim == v_dim ? "2 (K and V)" : "");
    if (!tensors.empty()) {
      s = tensors + " × " + plural(g.num_layers, "layer") + " × " + plural(heads, "KV head") +
          " × " + n(k_dim) + " dims × " + element_bytes(f);
    } else {
      s = "(" + n(k_dim) + " K + " + n(v_dim) + " V dims) × " + plural(g.num_layers, "layer") +
          " × " + plural(heads, "KV head") + " × " + element_bytes(f);
    }
  }
  if (f.scale_group_size > 0) {
    s += " + one " + std::string(model::dtype_name(f.scale_dtype)) + " scale per " +
         n(f.scale_group_size) + " elements";
  }
  return s;
}

std::string group_label(const model::KvGroup& g) {
  if (g.kind == model::LayerKind::kSlidingWindow) {
    return "sliding layers (window " + n(g.window_tokens) + ")";
  }
  return "full-attention layers";
}

// How the KV of one token divides over the tensor-parallel GPUs.
std::string tp_note(const model::ModelSpec& m, std::int64_t tp) {
  if (tp == 1) return "one GPU";
  const auto& a = m.attention;
  if (a.kind == model::AttentionKind::kMla) return "the MLA latent is stored whole on every GPU";
  const std::int64_t heads = a.num_kv_heads;
  if (tp <= heads) {
    return n(heads) + " KV heads / " + n(tp) + " GPUs = " + plural(heads / tp, "head") + " per GPU";
  }
  return "1 KV head per GPU (" + n(heads) + " heads replicated over " + n(tp) + " GPUs, " +
         n(tp / heads) + " copies each)";
}

Json budget_json(const model::KvBudget& b) {
  return Json{{"memory_bytes", b.memory_bytes},
              {"gpu_memory_utilization", b.gpu_memory_utilization},
              {"usable_bytes", b.usable_bytes},
              {"weights_bytes_per_gpu", b.weights_bytes},
              {"activation_reserve_bytes", b.activation_reserve_bytes},
              {"runtime_overhead_bytes", b.runtime_overhead_bytes},
              {"kv_budget_bytes", b.kv_budget_bytes},
              {"fits", b.fits},
              {"shortfall_bytes", b.shortfall_bytes}};
}

}  // namespace

Json kv_json(const model::KvAnalysis& a, const std::string& kv_cache_dtype, KvDetail detail) {
  Json kv;
  kv["bytes_per_token"] = a.bytes_per_token;
  kv["bytes_per_token_per_layer"] = a.bytes_per_token_per_layer;
  kv["total_bytes"] = a.total_bytes;
  kv["weights_bytes"] = a.weights_bytes;
  const bool gpu = a.budget.has_value();
  kv["kv_budget_bytes"] = gpu ? Json(a.budget->kv_budget_bytes) : Json(nullptr);
  kv["max_cached_tokens"] = gpu ? Json(a.capacity->max_cached_tokens) : Json(nullptr);
  kv["block_size"] = a.query.block_size;
  kv["num_blocks"] = gpu ? Json(a.capacity->num_blocks) : Json(nullptr);
  kv["max_concurrent_sequences"] = gpu ? Json(a.capacity->max_concurrent_sequences) : Json(nullptr);
  // Added fields.
  kv["fits"] = gpu ? Json(a.budget->fits) : Json(nullptr);
  kv["kv_cache_dtype"] = kv_cache_dtype;
  kv["kv_format"] = model::kv_format_name(a.query.format);
  kv["tensor_parallel_size"] = a.query.tensor_parallel_size;
  kv["batch"] = a.query.batch;
  kv["context"] = a.query.context;
  kv["bytes_per_sequence"] = a.bytes_per_sequence;
  kv["bytes_per_token_per_gpu"] = a.bytes_per_token_per_gpu;
  kv["total_bytes_per_gpu"] = a.total_bytes_per_gpu;
  kv["weights_bytes_per_gpu"] = a.weights_bytes_per_gpu;
  kv["num_parameters"] = a.num_parameters;
  kv["ssm_state_bytes_per_sequence"] = a.ssm_state_bytes_per_sequence;
  Json groups = Json::array();
  for (const auto& g : a.groups) {
    Json group = {{"kind", std::string(model::layer_kind_name(g.kind))},
                  {"num_layers", g.num_layers},
                  {"bytes_per_token_per_layer", g.bytes_per_token_per_layer},
                  {"bytes_per_token", g.bytes_per_token},
                  {"window_tokens", g.window_tokens}};
    if (detail == KvDetail::kLayers) group["layers"] = g.layers;
    groups.push_back(std::move(group));
  }
  kv["groups"] = groups;
  if (gpu) {
    kv["block_bytes"] = a.capacity->block_bytes;
    kv["bytes_per_sequence_per_gpu"] = a.capacity->bytes_per_sequence;
    kv["budget"] = budget_json(*a.budget);
  }
  return kv;
}

std::string kv_report_json(const KvReport& r) {
  Json doc = envelope("kvsim.report/v1", "kv");
  doc["inputs"] = {{"model", model_json(r.model)},
                   {"hardware", r.hardware ? hardware_json(*r.hardware) : Json(nullptr)},
                   {"serving", serving_json(r.serving)}};
  doc["kv"] = kv_json(r.analysis, r.serving.kv_cache_dtype, KvDetail::kLayers);
  doc["kv"]["pipeline_parallel_size"] = r.pipeline_parallel_size;
  doc["kv"]["stage"] = r.stage ? Json{{"index", r.stage->index},
                                      {"first_layer", r.stage->first_layer},
                                      {"num_layers", r.stage->num_layers()}}
                               : Json(nullptr);
  if (r.vllm_profile && r.vllm_layout) doc["kv"]["vllm"] = vllm_json(r);
  if (r.analysis.budget && !r.analysis.budget->fits) {
    doc["kv"]["min_fitting_tensor_parallel_size"] = r.min_fitting_tensor_parallel_size
                                                        ? Json(*r.min_fitting_tensor_parallel_size)
                                                        : Json(nullptr);
  }
  if (!r.attention_variants.empty()) {
    Json variants = Json::array();
    for (const auto& v : r.attention_variants) {
      variants.push_back(
          {{"label", v.label},
           {"kv_heads", v.kv_heads},
           {"bytes_per_token", v.bytes_per_token},
           {"total_bytes", v.total_bytes},
           {"compression_vs_mha", v.compression_vs_mha},
           {"max_concurrent_sequences",
            v.max_concurrent_sequences ? Json(*v.max_concurrent_sequences) : Json(nullptr)}});
    }
    doc["attention_comparison"] = variants;
  }
  return dump(doc);
}

// --compare-attention: the same model with other attention layouts.
std::string variants_table(const KvReport& r) {
  const model::KvAnalysis& a = r.analysis;
  const model::KvFormat& f = a.query.format;
  const std::int64_t batch = a.query.batch, ctx = a.query.context;
  if (r.attention_variants.empty()) return {};
  std::string out;
  {
    Table cmp({"attention", "KV heads", "bytes/token", "KV " + n(batch) + " × " + n(ctx),
               "compression vs MHA", "max seqs/GPU"});
    cmp.set_align(4, Align::kRight);
    cmp.set_title("\nSame model, other attention layouts (" + model::kv_format_name(f) +
                  "; capacity at this model's KV budget)");
    for (const auto& v : r.attention_variants) {
      cmp.add_row(
          {v.label, n(v.kv_heads), with_commas(v.bytes_per_token), human_bytes(v.total_bytes),
           fixed(v.compression_vs_mha,
                 v.compression_vs_mha ==
                         static_cast<double>(static_cast<std::int64_t>(v.compression_vs_mha))
                     ? 0
                     : 2) +
               "×",
           v.max_concurrent_sequences ? n(*v.max_concurrent_sequences) : "-"});
    }
    out += cmp.render();
  }
  return out;
}

namespace {

// The "DOES NOT FIT" paragraph of --engine v0: what is short, and the TP that would fit.
std::string does_not_fit_text(const KvReport& r) {
  const model::KvBudget& b = *r.analysis.budget;
  const std::int64_t tp = r.analysis.query.tensor_parallel_size;
  std::string out = "\nDOES NOT FIT: " + r.model.name + " needs " + human_bytes(b.weights_bytes) +
                    " of weights per GPU at tensor-parallel size " + n(tp) + " (plus " +
                    human_bytes(b.activation_reserve_bytes + b.runtime_overhead_bytes) +
                    " of activation reserve and runtime overhead), but one " + r.hardware->name +
                    " has " + human_bytes(b.usable_bytes) + " usable (" +
                    human_bytes(b.memory_bytes) + " × " + fixed(b.gpu_memory_utilization, 2) +
                    "); short by " + human_bytes(b.shortfall_bytes) + ".\n";
  if (r.min_fitting_tensor_parallel_size) {
    const std::int64_t need = *r.min_fitting_tensor_parallel_size;
    out += "It fits from --tensor-parallel-size " + n(need) + " on " + r.hardware->name +
           (need > r.hardware->gpus_per_node
                ? " (more GPUs than one " + n(r.hardware->gpus_per_node) + "-GPU node holds)"
                : "") +
           ".\n";
  } else {
    out += "It fits on no tensor-parallel size up to 64 " + r.hardware->name + " GPUs.\n";
  }
  return out;
}

// The table's title: model, GPUs and the KV cache format.
std::string kv_table_title(const KvReport& r) {
  const model::ModelSpec& m = r.model;
  std::string title = "kvsim kv: " + m.name;
  if (!m.display_name.empty()) title += " (" + m.display_name + ")";
  if (r.hardware)
    title += " on " + n(r.analysis.query.tensor_parallel_size) + " × " + r.hardware->name;
  title += ", KV cache " + model::kv_format_name(r.analysis.query.format) + " (--kv-cache-dtype " +
           r.serving.kv_cache_dtype + ")";
  if (r.stage) {
    title += "\npipeline stage " + n(r.stage->index) + " of " + n(r.pipeline_parallel_size) +
             " (layers " + n(r.stage->first_layer) + "-" + n(r.stage->end_layer - 1) +
             (r.hardware ? "), the stage whose GPUs hold the fewest KV blocks"
                         : "), the first stage with the most layers (no --gpu: no blocks to "
                           "compare)") +
             ": every figure below is for this stage's layers";
  }
  return title;
}

// "KV bytes per token (whole model)": each group's formula, per layer, per token, per GPU.
void add_bytes_per_token(KeyValueTable& t, const KvReport& r) {
  const model::ModelSpec& m = r.model;
  const model::KvAnalysis& a = r.analysis;
  const model::KvFormat& f = a.query.format;
  const std::int64_t tp = a.query.tensor_parallel_size;
  t.add_section(r.stage ? "KV bytes per token (this stage's layers)"
                        : "KV bytes per token (whole model)");
  for (const auto& g : model::kv_groups(m, f, 1)) {
    const std::string label = a.groups.size() > 1 || g.kind != model::LayerKind::kFullAttention
                                  ? group_label(g)
                                  : "formula";
    t.add(label, with_commas(g.bytes_per_token) + " B", "= " + group_formula(m, g, f));
  }
  if (m.num_layers_of(model::LayerKind::kNoKvCache) > 0) {
    t.add("layers without KV", n(m.num_layers_of(model::LayerKind::kNoKvCache)),
          m.ssm.enabled()   ? "Mamba/MLP blocks: no per-token cache"
          : m.gdn.enabled() ? "linear-attention blocks: a fixed state per sequence"
                            : "no per-token cache");
  }
  bool uniform = true;
  Bytes first_nonzero = 0;
  for (Bytes b : a.bytes_per_token_per_layer) {
    if (b == 0) continue;
    if (first_nonzero == 0) first_nonzero = b;
    uniform = uniform && b == first_nonzero;
  }
  if (uniform) {
    t.add("per layer", with_commas(first_nonzero) + " B");
  } else {
    std::string per;
    for (const auto& g : model::kv_groups(m, f, 1)) {
      if (!per.empty()) per += ", ";
      per += with_commas(g.bytes_per_token_per_layer) + " B (" +
             (g.kind == model::LayerKind::kSlidingWindow ? "sliding" : "full") + ")";
    }
    t.add("per layer", "varies", per);
  }
  t.add("per token", with_commas(a.bytes_per_token) + " B", human_bytes_binary(a.bytes_per_token));
  if (a.ssm_state_bytes_per_sequence > 0) {
    t.add("SSM state per sequence", with_commas(a.ssm_state_bytes_per_sequence) + " B",
          "fixed, whatever the length");
  }
  if (tp > 1) {
    t.add("per token per GPU", with_commas(a.bytes_per_token_per_gpu) + " B", tp_note(m, tp));
  }
}

// "Batch × context" and "Weights".
void add_batch_and_weights(KeyValueTable& t, const KvReport& r) {
  const model::ModelSpec& m = r.model;
  const model::KvAnalysis& a = r.analysis;
  const std::int64_t tp = a.query.tensor_parallel_size;
  t.add_section("Batch × context");
  const std::int64_t batch = a.query.batch, ctx = a.query.context;
  t.add("sequences × tokens", n(batch) + " × " + n(ctx), "= " + n(batch * ctx) + " tokens");
  if (m.num_layers_of(model::LayerKind::kSlidingWindow) > 0 && ctx > m.attention.sliding_window) {
    t.add("window cap", n(m.attention.sliding_window) + " tokens",
          "sliding layers keep only the last " + n(m.attention.sliding_window) + " tokens");
  }
  t.add("KV per sequence", exact_bytes(a.bytes_per_sequence));
  t.add("KV total", exact_bytes(a.total_bytes));
  if (tp > 1) t.add("KV total per GPU", exact_bytes(a.total_bytes_per_gpu));

  t.add_section("Weights");
  t.add("parameters", n(static_cast<std::int64_t>(a.num_parameters)),
        m.vision_parameters > 0 ? "of them " + n(static_cast<std::int64_t>(m.vision_parameters)) +
                                      " in the vision encoder (estimated from vision_config)"
                                : std::string());
  t.add("weights", exact_bytes(a.weights_bytes),
        m.quantization.enabled() ? model::quantization_summary(m.quantization) + ", the rest " +
                                       std::string(model::dtype_name(m.weight_dtype))
                                 : std::string(model::dtype_name(m.weight_dtype)));
  if (m.moe.shard_ranks > 0) {
    // Data or expert parallelism (model::shard_experts): the routed experts over more GPUs.
    t.add("weights per GPU", exact_bytes(a.weights_bytes_per_gpu),
          "TP " + n(tp) + ", routed experts " +
              (m.moe.expert_parallel ? "whole over " : "split over ") + n(m.moe.shard_ranks) +
              " GPUs");
  } else if (tp > 1) {
    t.add("weights per GPU", exact_bytes(a.weights_bytes_per_gpu), "TP " + n(tp));
  }
}

// The V0-style budget and capacity sections (--engine v0), rendered with the table so far.
std::string v0_budget_text(KeyValueTable& t, const KvReport& r) {
  const model::KvBudget& b = *r.analysis.budget;
  const model::KvCapacity& c = *r.analysis.capacity;
  t.add_section("KV budget per GPU (" + r.hardware->name + ")");
  t.add("GPU memory", exact_bytes(b.memory_bytes));
  t.add("× gpu-memory-utilization " + fixed(b.gpu_memory_utilization, 2),
        exact_bytes(b.usable_bytes));
  t.add("− weights per GPU", exact_bytes(b.weights_bytes));
  t.add("− activation reserve", exact_bytes(b.activation_reserve_bytes),
        r.activation_reserve_estimated ? "peak forward activations (default estimate)"
                                       : "peak forward activations (as given)");
  t.add("− runtime overhead", exact_bytes(b.runtime_overhead_bytes),
        "CUDA context, workspaces, NCCL, CUDA graphs");
  if (!b.fits) {
    t.add("= KV budget", "0 B", "DOES NOT FIT");
    return t.render() + does_not_fit_text(r);
  }
  t.add("= KV budget", exact_bytes(b.kv_budget_bytes));
  t.add_section("Capacity per GPU");
  t.add("max cached tokens", n(c.max_cached_tokens),
        "= budget / " + with_commas(c.bytes_per_token) + " B per token");
  t.add("blocks of " + n(c.block_size) + " tokens", n(c.num_blocks),
        "= budget / " + with_commas(c.block_bytes) + " B per block");
  t.add("max concurrent sequences", n(c.max_concurrent_sequences),
        "at " + n(c.context) + " tokens: " + with_commas(c.bytes_per_sequence) + " B each (paged)");
  return t.render();
}

}  // namespace

std::string kv_report_table(const KvReport& r) {
  KeyValueTable t;
  t.set_title(kv_table_title(r));
  add_bytes_per_token(t, r);
  add_batch_and_weights(t, r);
  std::string out;
  if (!r.analysis.budget) {
    t.add_section("KV budget per GPU");
    t.add("not computed", "",
          "no --gpu given: budget, cached tokens, blocks and concurrency need a GPU");
    out = t.render();
  } else if (r.vllm_profile && r.vllm_layout) {
    out = t.render() + vllm_table(r);
  } else {
    out = v0_budget_text(t, r);
  }
  return out + variants_table(r);
}

std::string kv_report_csv(const KvReport& r) {
  const model::KvAnalysis& a = r.analysis;
  const bool gpu = a.budget.has_value();
  auto opt = [&](bool present, std::uint64_t v) {
    return present ? std::to_string(v) : std::string();
  };
  auto opt_i = [&](bool present, std::int64_t v) {
    return present ? std::to_string(v) : std::string();
  };
  std::vector<std::string> header{"model",
                                  "gpu",
                                  "tensor_parallel_size",
                                  "kv_cache_dtype",
                                  "batch",
                                  "context",
                                  "bytes_per_token",
                                  "bytes_per_token_per_gpu",
                                  "total_bytes",
                                  "weights_bytes",
                                  "weights_bytes_per_gpu",
                                  "kv_budget_bytes",
                                  "max_cached_tokens",
                                  "block_size",
                                  "num_blocks",
                                  "max_concurrent_sequences",
                                  "fits"};
  std::vector<std::string> row{r.model.name,
                               r.hardware ? r.hardware->name : std::string(),
                               std::to_string(a.query.tensor_parallel_size),
                               r.serving.kv_cache_dtype,
                               std::to_string(a.query.batch),
                               std::to_string(a.query.context),
                               std::to_string(a.bytes_per_token),
                               std::to_string(a.bytes_per_token_per_gpu),
                               std::to_string(a.total_bytes),
                               std::to_string(a.weights_bytes),
                               std::to_string(a.weights_bytes_per_gpu),
                               opt(gpu, gpu ? a.budget->kv_budget_bytes : 0),
                               opt_i(gpu, gpu ? a.capacity->max_cached_tokens : 0),
                               std::to_string(a.query.block_size),
                               opt_i(gpu, gpu ? a.capacity->num_blocks : 0),
                               opt_i(gpu, gpu ? a.capacity->max_concurrent_sequences : 0),
                               gpu ? (a.budget->fits ? "true" : "false") : std::string()};
  return csv_line(header) + csv_line(row);
}

}  // namespace kvsim::report
