#include "cost/measurements.h"

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/strings.h"
#include "cost/aiconfigurator.h"
#include "cost/measurement_csv.h"
#include "model/kv_math.h"

namespace kvsim::cost {
namespace {

const std::vector<std::string> kKvsimColumns = {
    "op",     "dtype",   "m",        "n",        "k",     "batch",    "q_len",
    "kv_len", "q_heads", "kv_heads", "head_dim", "bytes", "num_gpus", "time_us"};
// With fused-MoE rows: the experts and top_k columns after time_us, then optionally
// activation_bits (KernelShape::activation_bits; empty = 0).
const std::vector<std::string> kKvsimMoeColumns = [] {
  std::vector<std::string> c = kKvsimColumns;
  c.insert(c.end(), {"experts", "top_k"});
  return c;
}();
const std::vector<std::string> kKvsimMoeActivationColumns = [] {
  std::vector<std::string> c = kKvsimMoeColumns;
  c.push_back("activation_bits");
  return c;
}();
// And then optionally block_scales (KernelShape::block_scales: 1 for fp8 experts with block
// scales; empty = 0).
const std::vector<std::string> kKvsimMoeBlockColumns = [] {
  std::vector<std::string> c = kKvsimMoeActivationColumns;
  c.push_back("block_scales");
  return c;
}();

std::vector<Measurement> parse_kvsim(const CsvFile& f) {
  const bool block_column = f.header == kKvsimMoeBlockColumns;
  const bool activation_column = f.header == kKvsimMoeActivationColumns || block_column;
  if (f.header != kKvsimColumns && f.header != kKvsimMoeColumns && !activation_column) {
    throw Error(ErrorLocation{f.path, 1, 0, ""},
                "expected the header " + join(kKvsimColumns, ",") +
                    " (and ,experts,top_k[,activation_bits[,block_scales]] for moe rows)");
  }
  const bool moe_columns = f.header == kKvsimMoeColumns || activation_column;
  std::vector<Measurement> out;
  for (const auto& r : f.rows) {
    const CsvRow row(f, r);
    Measurement m;
    m.file = f.path;
    m.line = row.line();
    KernelShape& s = m.shape;
    const auto op = parse_op_class(row.cell("op"));
    if (!op) {
      throw Error(row.where("op"), "expected one of " + join(op_class_names(), ", ") + ", got '" +
                                       row.cell("op") + "'" +
                                       did_you_mean(row.cell("op"), op_class_names()));
    }
    s.op = *op;
    const auto dtype = model::parse_dtype(row.cell("dtype"));
    if (!dtype) {
      throw Error(row.where("dtype"), "expected one of " + join(model::dtype_names(), ", ") +
                                          ", got '" + row.cell("dtype") + "'");
    }
    s.dtype = *dtype;
    const bool moe = s.op == OpClass::kMoe;
    if (moe && !moe_columns) {
      throw Error(row.where("op"), "moe rows need the experts and top_k columns after time_us");
    }
    const bool gemm = s.op == OpClass::kGemm || moe;
    const bool attn = is_attention(s.op);
    s.m = row.integer("m", gemm, gemm ? 1 : 0);
    s.n = row.integer("n", gemm, gemm ? 1 : 0);
    s.k = row.integer("k", gemm, gemm ? 1 : 0);
    s.batch =
        row.integer("batch", s.op == OpClass::kAttnDecode, s.op == OpClass::kAttnDecode ? 1 : 0);
    s.q_len =
        row.integer("q_len", s.op == OpClass::kAttnPrefill, s.op == OpClass::kAttnPrefill ? 1 : 0);
    s.kv_len = row.integer("kv_len", attn);
    s.q_heads = row.integer("q_heads", attn, attn ? 1 : 0);
    s.kv_heads = row.integer("kv_heads", attn, attn ? 1 : 0);
    s.head_dim = row.integer("head_dim", attn, attn ? 1 : 0);
    const bool sized = !gemm && !attn;
    s.bytes = row.number("bytes", sized, 0);
    if (sized && !(s.bytes > 0)) throw Error(row.where("bytes"), "expected a positive byte count");
    s.num_gpus =
        row.integer("num_gpus", s.op == OpClass::kAllreduce, s.op == OpClass::kAllreduce ? 2 : 0);
    if (moe_columns) {
      s.experts = row.integer("experts", moe, moe ? 1 : 0);
      s.top_k = row.integer("top_k", moe, moe ? 1 : 0);
      if (moe && s.top_k > s.experts) {
        throw Error(row.where("top_k"), "expected at most experts (" + std::to_string(s.experts) +
                                            "), got " + std::to_string(s.top_k));
      }
    }
    if (activation_column) {
      const std::int64_t bits = row.integer("activation_bits", false, 0);
      if (bits != 0 && (bits > 16 || !activation_key(s.op, s.dtype, static_cast<int>(bits)))) {
        throw Error(row.where("activation_bits"),
                    "expected empty, or 8 or 16 wider than the " +
                        std::string(model::dtype_name(s.dtype)) + " weights of a " +
                        std::string(op_class_name(s.op)) + " row, got " + std::to_string(bits));
      }
      s.activation_bits = static_cast<int>(bits);
    }
    if (block_column) {
      const std::int64_t block = row.integer("block_scales", false, 0);
      if (block > 1 || (block == 1 && !block_key(s.op, s.dtype, true))) {
        throw Error(row.where("block_scales"),
                    "expected empty or 0, or 1 for a moe row of fp8 weights with block scales, "
                    "got " +
                        std::to_string(block));
      }
      s.block_scales = block == 1;
    }
    m.time_s = row.positive("time_us") * 1e-6;
    out.push_back(std::move(m));
  }
  return out;
}

bool truthy(const std::string& s) {
  return s == "True" || s == "true" || s == "1";
}

std::vector<Measurement> parse_vidur_mlp(const CsvFile& f) {
  std::vector<Measurement> out;
  for (const auto& r : f.rows) {
    const CsvRow row(f, r);
    const std::int64_t tokens = row.integer("num_tokens", true, 1);
    const std::int64_t p = row.integer("num_tensor_parallel_workers", true, 1);
    const std::int64_t heads = row.integer("n_head", true, 1);
    const std::int64_t kv_heads = row.integer("n_kv_head", true, 1);
    const std::int64_t h = row.integer("n_embd", true, 1);
    const std::int64_t inter = row.integer("n_expanded_embd", true, 1);
    const bool gated = truthy(row.cell("use_gated_mlp"));
    const std::int64_t d = h / heads;
    const std::int64_t kv_p = model::kv_heads_per_rank(kv_heads, p);
    // Each GPU holds whole heads and an even share of the MLP width (Vidur's sharding).
    const std::int64_t heads_p = heads / p;
    const std::int64_t inter_p = inter / p;
    auto add = [&](const std::string& op_name, KernelShape s) {
      const std::string col = "time_stats." + op_name + ".median";
      if (!row.has_column(col) || row.cell(col).empty()) return;
      Measurement m;
      m.shape = s;
      m.shape.dtype = model::Dtype::kFp16;
      m.time_s = row.positive(col, 1e3) * 1e-3;
      m.file = f.path;
      m.line = row.line();
      out.push_back(m);
    };
    auto gemm = [&](std::int64_t n, std::int64_t k) {
      KernelShape s;
      s.op = OpClass::kGemm;
      s.m = tokens, s.n = n, s.k = k, s.batch = 1;
      return s;
    };
    auto ew = [&](double elements) {
      KernelShape s;
      s.op = OpClass::kElementwise;
      s.bytes = elements * 2.0;  // fp16
      return s;
    };
    const double t = static_cast<double>(tokens);
    add("attn_pre_proj", gemm((heads_p + 2 * kv_p) * d, h));
    add("attn_post_proj", gemm(h, heads_p * d));
    add("mlp_up_proj", gemm((gated ? 2 : 1) * inter_p, h));
    add("mlp_down_proj", gemm(h, inter_p));
    add("emb", ew(2.0 * t * static_cast<double>(h)));
    add("input_layernorm", ew(2.0 * t * static_cast<double>(h)));
    add("post_attention_layernorm", ew(2.0 * t * static_cast<double>(h)));
    add("attn_rope", ew(2.0 * t * static_cast<double>((heads_p + kv_p) * d)));
    add("mlp_act", ew((gated ? 3.0 : 2.0) * t * static_cast<double>(inter_p)));
    add("add", ew(3.0 * t * static_cast<double>(h)));
  }
  return out;
}

std::vector<Measurement> parse_vidur_attention(const CsvFile& f) {
  std::vector<Measurement> out;
  for (const auto& r : f.rows) {
    const CsvRow row(f, r);
    const std::int64_t p = row.integer("num_tensor_parallel_workers", true, 1);
    const std::int64_t heads = row.integer("n_q_head", true, 1);
    const std::int64_t kv_heads = row.integer("n_kv_head", true, 1);
    const std::int64_t h = row.integer("n_embd", true, 1);
    KernelShape s;
    s.dtype = model::Dtype::kFp16;
    s.q_heads = heads / p;
    s.kv_heads = model::kv_heads_per_rank(kv_heads, p);
    s.head_dim = h / heads;
    s.batch = row.integer("batch_size", true, 1);
    s.kv_len = row.integer("kv_cache_size", true, 0);
    Measurement m;
    if (truthy(row.cell("is_prefill"))) {
      s.op = OpClass::kAttnPrefill;
      s.q_len = row.integer("prefill_chunk_size", true, 1);
      m.time_s = row.positive("time_stats.attn_prefill.median", 1e3) * 1e-3;
    } else {
      s.op = OpClass::kAttnDecode;
      m.time_s = row.positive("time_stats.attn_decode.median", 1e3) * 1e-3;
    }
    m.shape = s;
    m.file = f.path;
    m.line = row.line();
    out.push_back(m);
  }
  return out;
}

std::vector<Measurement> parse_vidur_allreduce(const CsvFile& f) {
  std::vector<Measurement> out;
  for (const auto& r : f.rows) {
    const CsvRow row(f, r);
    const std::int64_t workers = row.integer("num_workers", true, 1);
    if (row.has_column("devices_per_node") && row.integer("devices_per_node", true, 1) != workers) {
      continue;  // multi-node rows: not the intra-node interconnect
    }
    if (row.has_column("collective") && row.cell("collective") != "all_reduce") continue;
    Measurement m;
    m.shape.op = OpClass::kAllreduce;
    m.shape.dtype = model::Dtype::kFp16;
    m.shape.bytes = row.number("size", true, 1);
    m.shape.num_gpus = workers;
    m.time_s = row.positive("time_stats.all_reduce.median", 1e3) * 1e-3;
    m.file = f.path;
    m.line = row.line();
    out.push_back(m);
  }
  return out;
}

std::vector<Measurement> parse_vidur(const CsvFile& f) {
  if (f.column.count("time_stats.attn_pre_proj.median") && f.column.count("num_tokens")) {
    return parse_vidur_mlp(f);
  }
  if (f.column.count("is_prefill") && f.column.count("kv_cache_size"))
    return parse_vidur_attention(f);
  if (f.column.count("time_stats.all_reduce.median") && f.column.count("num_workers")) {
    return parse_vidur_allreduce(f);
  }
  throw Error(ErrorLocation{f.path, 1, 0, ""},
              "expected a Vidur mlp.csv, attention.csv or all_reduce.csv header "
              "(time_stats.<op>.median columns), got none of them");
}

}  // namespace

MeasurementFormat parse_measurement_format(const std::string& name) {
  if (name == "auto") return MeasurementFormat::kAuto;
  if (name == "kvsim") return MeasurementFormat::kKvsim;
  if (name == "vidur") return MeasurementFormat::kVidur;
  if (name == "aiconfigurator") return MeasurementFormat::kAiconfigurator;
  throw Error(ErrorLocation{"", 0, 0, "--from-format"},
              "expected auto, kvsim, vidur or aiconfigurator, got '" + name + "'" +
                  did_you_mean(name, {"auto", "kvsim", "vidur", "aiconfigurator"}));
}

std::vector<Measurement> load_measurements(const std::string& path, MeasurementFormat format,
                                           std::vector<std::string>* notes) {
  const CsvFile f = read_csv(path);
  switch (format) {
    case MeasurementFormat::kKvsim:
      return parse_kvsim(f);
    case MeasurementFormat::kVidur:
      return parse_vidur(f);
    case MeasurementFormat::kAiconfigurator:
      return parse_aiconfigurator(f, notes);
    case MeasurementFormat::kAuto:
      break;
  }
  if (!f.header.empty() && f.header.front() == "op") return parse_kvsim(f);
  if (is_aiconfigurator_table(f)) return parse_aiconfigurator(f, notes);
  return parse_vidur(f);
}

std::string measurements_csv(const std::vector<Measurement>& rows) {
  const bool moe = std::any_of(rows.begin(), rows.end(),
                               [](const Measurement& m) { return m.shape.op == OpClass::kMoe; });
  const bool block = std::any_of(rows.begin(), rows.end(),
                                 [](const Measurement& m) { return m.shape.block_scales; });
  std::string out = join(block ? kKvsimMoeBlockColumns
                         : moe ? kKvsimMoeActivationColumns
                               : kKvsimColumns,
                         ",") +
                    "\n";
  auto cell = [](std::int64_t v) { return v > 0 ? std::to_string(v) : std::string(); };
  for (const auto& m : rows) {
    const KernelShape& s = m.shape;
    const bool attn = is_attention(s.op);
    char bytes[40] = "";
    if (s.bytes > 0) std::snprintf(bytes, sizeof bytes, "%.17g", s.bytes);
    char time[40];
    std::snprintf(time, sizeof time, "%.6g", m.time_s * 1e6);
    out += std::string(op_class_name(s.op)) + "," + std::string(model::dtype_name(s.dtype)) + "," +
           cell(s.m) + "," + cell(s.n) + "," + cell(s.k) + "," + cell(s.batch) + "," +
           cell(s.q_len) + "," + (attn ? std::to_string(s.kv_len) : std::string()) + "," +
           cell(s.q_heads) + "," + cell(s.kv_heads) + "," + cell(s.head_dim) + "," + bytes + "," +
           cell(s.num_gpus) + "," + time +
           (moe ? "," + cell(s.experts) + "," + cell(s.top_k) + "," + cell(s.activation_bits)
                : std::string()) +
           (block ? std::string(s.block_scales ? ",1" : ",") : std::string()) + "\n";
  }
  return out;
}

}  // namespace kvsim::cost
