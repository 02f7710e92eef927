// kvsim models: the shipped model configs with their key numbers.
#include "cli/commands.h"
#include "common/format.h"
#include "config/catalog.h"
#include "model/kv_math.h"
#include "model/weights.h"
#include "report/json.h"
#include "report/spec_json.h"
#include "report/table.h"

namespace kvsim::cli {
namespace {

struct Row {
  model::ModelSpec spec;
  model::ParameterCounts params;
  Bytes kv_bytes_per_token = 0;  // at --kv-cache-dtype auto
};

std::string attention_text(const model::ModelSpec& m) {
  const auto& a = m.attention;
  std::string s(model::attention_kind_name(a.kind));
  if (a.kind == model::AttentionKind::kMla) {
    return s + " " + std::to_string(a.mla.kv_lora_rank) + "+" +
           std::to_string(a.mla.qk_rope_head_dim) +
           (a.indexer.enabled() ? " top-" + std::to_string(a.indexer.topk) : "");
  }
  return s + " " + std::to_string(a.num_q_heads) + "/" + std::to_string(a.num_kv_heads) + "×" +
         std::to_string(a.head_dim);
}

std::string window_text(const model::ModelSpec& m) {
  const std::int64_t sliding = m.num_layers_of(model::LayerKind::kSlidingWindow);
  if (sliding == 0) return "-";
  return with_commas(m.attention.sliding_window) + " (" + std::to_string(sliding) + "/" +
         std::to_string(m.num_layers) + ")";
}

report::Table make_table(const std::vector<Row>& rows, bool raw) {
  report::Table t({"name", "family", "attention q/kv×dim", "layers", "params", "weights",
                   "weights dtype", "KV B/token", "max context", "window (layers)", "moe"});
  for (const auto& r : rows) {
    const auto& m = r.spec;
    const Bytes w = model::weights_bytes(m);
    std::string moe = "-";
    if (m.moe.enabled()) {
      moe = std::to_string(m.moe.experts_per_token) + "/" + std::to_string(m.moe.num_experts);
      if (m.moe.num_shared_experts > 0) moe += "+" + std::to_string(m.moe.num_shared_experts) + "s";
    }
    t.add_row({m.name, m.family, attention_text(m), std::to_string(m.num_layers),
               raw ? std::to_string(r.params.total())
                   : fixed(static_cast<double>(r.params.total()) / 1e9, 2) + " B",
               raw ? std::to_string(w) : human_bytes(w),
               std::string(model::dtype_name(m.weight_dtype)),
               raw ? std::to_string(r.kv_bytes_per_token) : with_commas(r.kv_bytes_per_token),
               raw ? std::to_string(m.max_context) : with_commas(m.max_context),
               raw ? std::to_string(m.attention.sliding_window) : window_text(m), moe});
  }
  return t;
}

void run_models(const report::OutputOptions& output) {
  std::vector<Row> rows;
  for (auto& spec : config::shipped_models()) {
    Row r;
    r.params = model::parameter_counts(spec);
    r.kv_bytes_per_token =
        model::kv_bytes_per_token(spec, *model::kv_format_from_name(spec, "auto"));
    r.spec = std::move(spec);
    rows.push_back(std::move(r));
  }
  report::emit(
      output,
      {[&] {
         report::Json doc = report::envelope("kvsim.models/v1", "models");
         report::Json list = report::Json::array();
         for (const auto& r : rows) {
           report::Json j = report::model_json(r.spec);
           j["kv_bytes_per_token"] = r.kv_bytes_per_token;
           list.push_back(j);
         }
         doc["models"] = list;
         return report::dump(doc);
       },
       [&] {
         report::Table t = make_table(rows, false);
         t.set_title(
             "Shipped models (KV bytes per token at --kv-cache-dtype auto: the model's own 16-bit "
             "dtype, vLLM's fp8_ds_mla for sparse MLA; whole model)");
         return t.render();
       },
       [&] { return make_table(rows, true).render_csv(); }},
      "models");
}

}  // namespace

void register_models(CLI::App& app) {
  auto output = std::make_shared<report::OutputOptions>();
  auto* command = app.add_subcommand("models", "List the shipped model configs");
  add_output_flags(command, *output);
  command->callback([output] { run_models(*output); });
}

}  // namespace kvsim::cli
