#include "cost/aiconfigurator.h"

#include <filesystem>
#include <map>
#include <optional>

#include "common/error.h"
#include "common/strings.h"
#include "model/dtype.h"

namespace kvsim::cost {
namespace {

enum class Table { kGemm, kContextAttention, kGenerationAttention, kAllreduce, kNccl, kMoe };

bool has_all(const CsvFile& f, const std::vector<std::string>& columns) {
  for (const auto& c : columns) {
    if (f.column.count(c) == 0) return false;
  }
  return true;
}

std::optional<Table> table_of(const CsvFile& f) {
  if (f.column.count("latency") == 0) return std::nullopt;
  if (has_all(f, {"gemm_dtype", "m", "n", "k"})) return Table::kGemm;
  if (has_all(f, {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "step"})) {
    const std::string name = std::filesystem::path(f.path).filename().string();
    if (name.find("generation_attention") != std::string::npos) return Table::kGenerationAttention;
    if (name.find("context_attention") != std::string::npos) return Table::kContextAttention;
    throw Error(ErrorLocation{f.path, 1, 0, ""},
                "an aiconfigurator attention table, but its name says neither "
                "'context_attention' (prefill) nor 'generation_attention' (decode); name it as "
                "aiconfigurator does, e.g. 0.24.0_context_attention_perf.csv");
  }
  if (has_all(f, {"allreduce_dtype", "num_gpus", "message_size"})) return Table::kAllreduce;
  if (has_all(f, {"nccl_dtype", "num_gpus", "message_size"})) return Table::kNccl;
  if (has_all(f, {"moe_dtype", "num_tokens", "num_experts"})) return Table::kMoe;
  return std::nullopt;
}

// A fused-MoE row's weight type, and its activations where wider than its weights
// (KernelShape::activation_bits): nvfp4 is W4A4; w4a16_mxfp4 and int4_wo (weight-only) multiply
// in 16 bits, w4a8_mxfp4_mxfp8 (MXFP4 x MXFP8) in 8. fp8_block (128 x 128 block scales, the
// DeepSeek-style checkpoints) is vLLM's block-fp8 kernel, its own entry (moe.fp8.block).
struct MoeKernelType {
  model::Dtype dtype;
  int activation_bits;
  bool block_scales = false;
};
std::optional<MoeKernelType> moe_kernel_type(const std::string& name) {
  static const std::map<std::string, MoeKernelType> kTypes = {
      {"bfloat16", {model::Dtype::kBf16, 0}},    {"float16", {model::Dtype::kBf16, 0}},
      {"fp8", {model::Dtype::kFp8, 0}},          {"nvfp4", {model::Dtype::kFp4, 0}},
      {"w4a16_mxfp4", {model::Dtype::kFp4, 16}}, {"w4a8_mxfp4_mxfp8", {model::Dtype::kFp4, 8}},
      {"int4_wo", {model::Dtype::kInt4, 16}},    {"fp8_block", {model::Dtype::kFp8, 0, true}}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

std::optional<model::Dtype> dtype_of(const std::string& name) {
  static const std::map<std::string, model::Dtype> kNames = {
      {"bfloat16", model::Dtype::kBf16}, {"bf16", model::Dtype::kBf16},
      {"float16", model::Dtype::kFp16},  {"half", model::Dtype::kFp16},
      {"fp16", model::Dtype::kFp16},     {"fp8", model::Dtype::kFp8},
      {"int8", model::Dtype::kInt8},     {"nvfp4", model::Dtype::kFp4},
      {"mxfp4", model::Dtype::kFp4}};
  const auto it = kNames.find(name);
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

// Counts of skipped rows by reason, in the order first seen.
class Skips {
 public:
  void add(const std::string& reason) {
    for (auto& [r, n] : counts_) {
      if (r == reason) {
        ++n;
        return;
      }
    }
    counts_.emplace_back(reason, 1);
  }
  std::string text() const {
    std::string out;
    for (const auto& [r, n] : counts_)
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + r;
    return out.empty() ? "none" : out;
  }

 private:
  std::vector<std::pair<std::string, std::int64_t>> counts_;
};

// The column that holds a row's compute dtype.
std::string dtype_column(Table t) {
  switch (t) {
    case Table::kGemm:
      return "gemm_dtype";
    case Table::kAllreduce:
      return "allreduce_dtype";
    case Table::kNccl:
      return "nccl_dtype";
    case Table::kMoe:
      return "moe_dtype";
    default:
      return "attn_dtype";
  }
}

// Per dtype cell, the kernel_source with the most rows (ties: the first name in order).
// The key a row's kernel is chosen under: its dtype cell, and for the fused-MoE table the layer
// shape too (each MoE model's layer runs its own kernel).
std::string source_key(const CsvFile& f, const std::vector<std::string>& cells,
                       const std::string& dtype_col) {
  const auto cell = [&](const std::string& name) {
    const auto it = f.column.find(name);
    return it == f.column.end() ? std::string() : cells[it->second];
  };
  std::string key = cell(dtype_col);
  // Attention: the cache's type picks the kernel too (vLLM serves an fp8 cache with another
  // backend on some GPUs: FlashInfer instead of FlashAttention 2 on L40S).
  if (f.column.count("kv_cache_dtype") != 0) key += " kv " + cell("kv_cache_dtype");
  if (f.column.count("num_experts") != 0) {
    for (const char* c : {"hidden_size", "inter_size", "num_experts", "topk"}) key += " " + cell(c);
  }
  return key;
}

// Whether a fused-MoE table's row is of the kind moe_shape imports (balanced routing, no expert
// parallelism); true for every row of another table. Only those rows choose the kernel: an
// expert-parallel kernel with more rows must not leave a shape's TP rows unread.
bool importable_row(const CsvFile& f, const std::vector<std::string>& cells) {
  if (f.column.count("num_experts") == 0) return true;
  const auto cell = [&](const char* name) {
    const auto it = f.column.find(name);
    return it == f.column.end() ? std::string() : cells[it->second];
  };
  const std::string routing = cell("distribution");
  const std::string ep = cell("moe_ep_size");
  return (routing.empty() || routing == "balanced") && (ep.empty() || ep == "1");
}

std::map<std::string, std::string> chosen_sources(const CsvFile& f, const std::string& dtype_col) {
  if (f.column.count("kernel_source") == 0) return {};
  const std::size_t src = f.column.at("kernel_source");
  std::map<std::string, std::map<std::string, std::int64_t>> counts;
  for (const auto& [line, cells] : f.rows) {
    if (!importable_row(f, cells)) continue;
    counts[source_key(f, cells, dtype_col)][cells[src]] += 1;
  }
  std::map<std::string, std::string> chosen;
  for (const auto& [dtype, by_source] : counts) {
    std::int64_t best = -1;
    for (const auto& [source, n] : by_source) {
      if (n > best) best = n, chosen[dtype] = source;
    }
  }
  return chosen;
}

std::string optional_cell(const CsvRow& row, const std::string& name) {
  return row.has_column(name) ? row.cell(name) : std::string();
}

// The tables parse_aiconfigurator refuses whole, and a header of no table.
void check_table(const CsvFile& f, const std::optional<Table>& table) {
  if (!table) {
    throw Error(ErrorLocation{f.path, 1, 0, ""},
                "expected an aiconfigurator gemm, context/generation attention, fused-MoE or "
                "custom all-reduce table (a latency column), got header " +
                    join(f.header, ","));
  }
  if (*table == Table::kNccl && f.column.count("op_name") == 0) {
    throw Error(ErrorLocation{f.path, 1, 0, "op_name"},
                "an aiconfigurator NCCL table without its op_name column: all_reduce rows cannot "
                "be told from the other collectives; fit the all-reduce from "
                "*_custom_allreduce_perf.csv, or keep op_name when converting the table");
  }
}

// An attention row's shape into `s` (s.dtype = its attn_dtype), or the reason it is skipped.
// The shape's dtype becomes the KV cache's (cost/ops.h: an attention kernel's dtype is its
// cache's); the query and output stay 16-bit.
std::optional<std::string> attention_shape(const CsvRow& row, Table table, KernelShape& s) {
  if (model::bits_per_element(s.dtype) < 16) {
    return std::string(model::dtype_name(s.dtype)) + " attention-compute rows";
  }
  const std::string kv = optional_cell(row, "kv_cache_dtype");
  if (!kv.empty()) {
    const auto kv_dtype = dtype_of(kv);
    if (!kv_dtype) return kv + " KV-cache rows (no kvsim dtype)";
    s.dtype = *kv_dtype;
  }
  if (row.has_column("window_size") && row.integer("window_size", false) != 0)
    return "sliding-window rows";
  if (row.has_column("beam_width") && row.integer("beam_width", false, 1) != 1)
    return "beam-search rows";
  s.op = table == Table::kContextAttention ? OpClass::kAttnPrefill : OpClass::kAttnDecode;
  s.batch = row.integer("batch_size", true, 1);
  s.q_heads = row.integer("num_heads", true, 1);
  s.kv_heads = row.integer("num_key_value_heads", true, 1);
  s.head_dim = row.integer("head_dim", true, 1);
  s.kv_len = row.integer("step", true, 0);
  if (s.op == OpClass::kAttnPrefill) s.q_len = row.integer("isl", true, 1);
  return std::nullopt;
}

// An all-reduce row's shape into `s` (dtype set), or the reason it is skipped.
std::optional<std::string> allreduce_shape(const CsvRow& row, Table table, KernelShape& s) {
  if (table == Table::kNccl && row.cell("op_name") != "all_reduce")
    return row.cell("op_name") + " rows";
  const std::string backend = optional_cell(row, "backend");
  if (!backend.empty() && backend != "vllm_graph")
    return backend + " rows (vLLM decodes under CUDA graphs)";
  s.op = OpClass::kAllreduce;
  s.num_gpus = row.integer("num_gpus", true, 2);
  s.bytes = static_cast<double>(row.integer("message_size", true, 1)) * dtype_bytes(s.dtype);
  return std::nullopt;
}

// A fused-MoE row's shape into `s`, or the reason it is skipped: routing other than balanced
// (kvsim routes uniformly), experts spread by expert parallelism (vLLM's default splits every
// expert's width over the TP group, moe_tp_size), a weight type kvsim lacks.
std::optional<std::string> moe_shape(const CsvRow& row, const std::string& dtype_name,
                                     KernelShape& s) {
  const std::string routing = optional_cell(row, "distribution");
  if (!routing.empty() && routing != "balanced") return routing + " rows";
  if (row.has_column("moe_ep_size") && row.integer("moe_ep_size", false, 1) > 1)
    return "expert-parallel rows";
  const auto type = moe_kernel_type(dtype_name);
  if (!type) return dtype_name + " rows (no kvsim dtype)";
  // kvsim's MXFP4 experts are an HF config's quant_method mxfp4 (gpt-oss), which vLLM runs with
  // its gpt-oss MXFP4 method (FlashInfer's MXFP4 x BF16 kernel on B200, OpenAI's Triton kernel on
  // H200, Marlin on L40S). The tables' other MXFP4 rows are a compressed-tensors checkpoint's,
  // run through Marlin: another format's kernel, left out (fitted together with gpt-oss's, B200's
  // entry priced gpt-oss's own layer 22-89% slow at 1-256 tokens).
  const std::string source = optional_cell(row, "kernel_source");
  if (dtype_name == "w4a16_mxfp4" && !source.empty() && !source.starts_with("vllm_gptossmxfp4moe"))
    return "w4a16_mxfp4 rows of compressed-tensors' MXFP4 method";
  s.dtype = type->dtype;
  s.activation_bits = type->activation_bits;
  s.block_scales = type->block_scales;
  s.op = OpClass::kMoe;
  const std::int64_t tp = row.has_column("moe_tp_size") ? row.integer("moe_tp_size", false, 1) : 1;
  const std::int64_t inter = row.integer("inter_size", true, 1);
  if (inter % tp != 0) return "rows whose inter_size does not split over moe_tp_size";
  s.m = row.integer("num_tokens", true, 1);
  s.n = inter / tp;
  s.k = row.integer("hidden_size", true, 1);
  s.experts = row.integer("num_experts", true, 1);
  s.top_k = row.integer("topk", true, 1);
  if (s.top_k > s.experts) return "rows with topk above num_experts";
  return std::nullopt;
}

// One row's shape into `s`, or the reason it is skipped: another kernel source than the one
// kept for its dtype, a dtype kvsim lacks, or what the table's reader says.
std::optional<std::string> row_shape(const CsvRow& row, Table table, const std::string& dtype_col,
                                     const std::map<std::string, std::string>& sources,
                                     KernelShape& s) {
  const std::string dtype_name = optional_cell(row, dtype_col);
  if (!sources.empty()) {
    // A key none of whose rows is importable has no choice: moe_shape says why they are skipped.
    const std::string& source = row.cell("kernel_source");
    const auto chosen = sources.find(source_key(row.file(), row.cells(), dtype_col));
    if (chosen != sources.end() && source != chosen->second)
      return "rows of kernel_source " + source;
  }
  if (table == Table::kMoe) return moe_shape(row, dtype_name, s);
  const auto dtype = dtype_name.empty() ? std::optional(model::Dtype::kBf16) : dtype_of(dtype_name);
  if (!dtype) return dtype_name + " rows (no kvsim dtype)";
  s.dtype = *dtype;
  switch (table) {
    case Table::kGemm:
      s.op = OpClass::kGemm;
      s.m = row.integer("m", true, 1);
      s.n = row.integer("n", true, 1);
      s.k = row.integer("k", true, 1);
      s.batch = 1;
      return std::nullopt;
    case Table::kContextAttention:
    case Table::kGenerationAttention:
      return attention_shape(row, table, s);
    default:
      return allreduce_shape(row, table, s);
  }
}

}  // namespace

bool is_aiconfigurator_table(const CsvFile& f) {
  return table_of(f).has_value();
}

std::vector<Measurement> parse_aiconfigurator(const CsvFile& f, std::vector<std::string>* notes) {
  const auto table = table_of(f);
  check_table(f, table);
  const std::string dtype_col = dtype_column(*table);
  // All-reduce tables name one kernel per backend; the backend column chooses.
  const bool collective = *table == Table::kAllreduce || *table == Table::kNccl;
  const auto sources =
      collective ? std::map<std::string, std::string>{} : chosen_sources(f, dtype_col);
  Skips skips;
  std::vector<Measurement> out;
  for (const auto& r : f.rows) {
    const CsvRow row(f, r);
    Measurement m;
    m.file = f.path;
    m.line = row.line();
    if (const auto skip = row_shape(row, *table, dtype_col, sources, m.shape)) {
      skips.add(*skip);
      continue;
    }
    m.time_s = row.positive("latency", 1e3) * 1e-3;
    out.push_back(std::move(m));
  }
  if (notes != nullptr) {
    std::string kept;
    for (const auto& [dtype, source] : sources) {
      if (!kept.empty()) kept += ", ";
      if (!dtype.empty()) kept.append(dtype).append(": ");
      kept += source;
    }
    notes->push_back(f.path + ": aiconfigurator table, " + std::to_string(out.size()) +
                     " rows imported" + (kept.empty() ? "" : " (kernel_source " + kept + ")") +
                     "; skipped: " + skips.text());
  }
  return out;
}

}  // namespace kvsim::cost
