#pragma once
// Timed kernels: the measurement CSV that `kvsim calibrate` fits, and importers.
//
// kvsim CSV (header required, columns in this order; cells that do not apply are empty):
//   op,dtype,m,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,bytes,num_gpus,time_us
// op ∈ gemm | attn_prefill | attn_decode | allreduce | memcpy | elementwise | moe; dimensions are
// per GPU (what the kernel sees); see cost::KernelShape for which cells each op uses. An
// attention row's dtype is its KV cache's (fp8: the kernel over an fp8 cache, fitting
// "attn_decode.fp8"); its query and output are 16-bit.
// time_us > 0. moe rows need two more columns, ",experts,top_k", after time_us (the writer adds
// them when a row is moe).
//
// NVIDIA aiconfigurator tables (gemm, context/generation attention, custom all-reduce, fused
// MoE; latency in ms): cost/aiconfigurator.h.
//
// Vidur CSVs (github.com/microsoft/vidur profiling data; times in ms, medians used), told apart
// by their header:
//   mlp.csv        per-operator rows → gemm (attn_pre_proj = QKV, attn_post_proj = O,
//                  mlp_up_proj = gate+up, mlp_down_proj = down, sharded by TP) and elementwise
//                  (norms, rope, activation, residual add, embedding) rows;
//   attention.csv  is_prefill rows → attn_prefill (batch 1, q_len = prefill_chunk_size,
//                  kv_len = kv_cache_size), decode rows → attn_decode;
//   all_reduce.csv → allreduce rows (single-node rows only: devices_per_node == num_workers).

#include <string>
#include <vector>

#include "cost/ops.h"

namespace kvsim::cost {

struct Measurement {
  KernelShape shape;
  double time_s = 0;
  std::string file;  // where it came from, for messages
  int line = 0;
};

enum class MeasurementFormat { kAuto, kKvsim, kVidur, kAiconfigurator };

// "auto" | "kvsim" | "vidur" | "aiconfigurator"; throws kvsim::Error (field "--from-format")
// otherwise.
MeasurementFormat parse_measurement_format(const std::string& name);

// Reads one file. kAuto recognises the kvsim header, an aiconfigurator table or a Vidur header.
// Throws kvsim::Error naming file, line, column (1-based cell index) and field for a malformed
// row, an unknown op or dtype, a missing required cell, or a non-positive time; and for an empty
// file. Importers that skip rows kvsim cannot express say so in one line per file in `notes`.
std::vector<Measurement> load_measurements(const std::string& path, MeasurementFormat format,
                                           std::vector<std::string>* notes = nullptr);

// The kvsim CSV text of `rows` (header first), times in microseconds with 6 significant digits.
std::string measurements_csv(const std::vector<Measurement>& rows);

}  // namespace kvsim::cost
