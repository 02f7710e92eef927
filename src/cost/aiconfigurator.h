#pragma once
// NVIDIA aiconfigurator's measured kernel tables (github.com/ai-dynamo/aiconfigurator,
// systems/data/<system>/<version>_<op>_perf, as CSV with the upstream column names; latency in
// milliseconds) to kernel shapes. Which table a file is comes from its header:
//   gemm_perf                 gemm_dtype,m,n,k → gemm (x[m,k] · W[k,n]; bfloat16 → bf16,
//                             fp8 → fp8, nvfp4/mxfp4 → fp4)
//   context_attention_perf    batch_size,isl,num_heads,num_key_value_heads,head_dim,step →
//                             attn_prefill (q_len = isl new tokens after kv_len = step cached;
//                             heads are per GPU already)
//   generation_attention_perf the same columns → attn_decode (kv_len = step cached tokens, the
//                             query sees step + 1)
//   custom_allreduce_perf     allreduce_dtype,num_gpus,message_size → allreduce (message_size
//                             counts elements: bytes = elements × element size); only the
//                             CUDA-graph backend (vllm_graph), as vLLM decodes under graphs
//   moe_perf                  moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,
//                             moe_tp_size,moe_ep_size,distribution → moe (m = num_tokens, n =
//                             inter_size / moe_tp_size, k = hidden_size; bfloat16 → bf16, fp8 →
//                             fp8, w4a16_mxfp4 and nvfp4 → fp4, int4_wo → int4); balanced routing
//                             and moe_ep_size 1 only (kvsim routes uniformly; vLLM splits each
//                             expert over the TP group unless told to spread whole experts)
// Context and generation attention share a header: the file name (as aiconfigurator names it)
// tells them apart. Rows kvsim cannot express are skipped and counted in a note, never dropped
// silently: sliding-window attention, beam search, eager all-reduce, dtypes without a kvsim
// dtype. An attention row's dtype is its kv_cache_dtype (an fp8 cache's rows fit
// "attn_decode.fp8"). Where a table holds several kernels for one dtype (FlashAttention 3 and 4
// on H200, FlashInfer and Triton on B200), the one with the most rows is kept — the backend vLLM
// picks for that GPU by default — and the others are counted in the note; attention chooses per
// (attn_dtype, kv_cache_dtype) pair, the fused-MoE table per dtype and layer shape (each model's
// layer has its kernel).
// An NCCL table without its op_name column is refused with an error.

#include <string>
#include <vector>

#include "cost/measurement_csv.h"
#include "cost/measurements.h"

namespace kvsim::cost {

// True when `f`'s header is one of aiconfigurator's tables (a `latency` column and the columns
// of one table kind above, or an NCCL table that parse_aiconfigurator refuses).
bool is_aiconfigurator_table(const CsvFile& f);

// The kernel shapes of `f`. One line per file is appended to `notes` (when given): rows imported,
// the kernel source kept, rows skipped and why. Throws kvsim::Error (file, line, column, field)
// for a malformed cell, a non-positive latency, an attention file whose name does not say
// context or generation, or an NCCL table without op_name.
std::vector<Measurement> parse_aiconfigurator(const CsvFile& f, std::vector<std::string>* notes);

}  // namespace kvsim::cost
