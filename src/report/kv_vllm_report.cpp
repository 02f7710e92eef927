#include "report/kv_vllm_report.h"

#include <algorithm>

#include "common/format.h"
#include "report/table.h"

namespace kvsim::report {
namespace {

double gib(Bytes b) {
  return static_cast<double>(b) / static_cast<double>(kGiB);
}

std::vector<std::string> vllm_log_lines(const KvReport& r) {
  const model::VllmMemoryProfile& p = *r.vllm_profile;
  const model::VllmKvCacheLayout& l = *r.vllm_layout;
  return {model::vllm_available_line(p.available_kv_bytes),
          model::vllm_cache_size_line(l.kv_cache_tokens),
          model::vllm_concurrency_line(l.max_model_len, l.max_concurrency)};
}

}  // namespace

Json vllm_json(const KvReport& r) {
  const model::VllmMemoryProfile& p = *r.vllm_profile;
  const model::VllmKvCacheLayout& l = *r.vllm_layout;
  Json profile{{"total_memory_bytes", p.total_memory_bytes},
               {"total_memory_source", p.total_memory_measured ? "measured" : "estimated"},
               {"gpu_memory_utilization", p.gpu_memory_utilization},
               {"requested_bytes", p.requested_bytes},
               {"weights_bytes", p.weights_bytes},
               {"expert_padding_bytes", p.expert_padding_bytes},
               {"max_num_batched_tokens", p.max_num_batched_tokens},
               {"max_num_seqs", p.max_num_seqs},
               {"forward_peak_bytes", p.forward_peak_bytes},
               {"sampler_peak_bytes", p.sampler_peak_bytes},
               {"activation_peak_bytes", p.activation_peak_bytes},
               {"non_torch_bytes", p.non_torch_bytes},
               {"cuda_graph_bytes", p.cuda_graph_bytes},
               {"non_kv_bytes", p.non_kv_bytes},
               {"kv_cache_memory_given", p.kv_cache_memory_given}};
  return Json{{"version", p.release.text()},
              {"engine", "v1"},
              {"profile", profile},
              {"fits", p.fits},
              {"shortfall_bytes", p.shortfall_bytes},
              {"available_kv_cache_bytes", p.available_kv_bytes},
              {"available_kv_cache_gib", gib(p.available_kv_bytes)},
              {"block_size", l.block_size},
              {"num_kv_cache_groups", l.num_groups},
              {"state_groups", l.state_groups},
              {"state_page_bytes", l.state_page_bytes},
              {"group_size", l.group_size},
              {"block_bytes", l.block_bytes},
              {"num_gpu_blocks", l.num_blocks},
              {"num_gpu_blocks_override",
               r.num_gpu_blocks_override ? Json(*r.num_gpu_blocks_override) : Json(nullptr)},
              {"gpu_kv_cache_tokens", l.kv_cache_tokens},
              {"max_model_len", l.max_model_len},
              {"blocks_per_request", l.blocks_per_request},
              {"max_concurrency", l.max_concurrency},
              {"serves_max_model_len", p.fits && l.blocks_per_request <= l.num_blocks},
              {"estimated_max_model_len", l.estimated_max_model_len},
              {"log_lines", vllm_log_lines(r)}};
}

// --engine v1: the worker's memory profile, then the three lines vLLM logs.
std::string vllm_table(const KvReport& r) {
  const model::VllmMemoryProfile& p = *r.vllm_profile;
  const model::VllmKvCacheLayout& l = *r.vllm_layout;
  const std::int64_t max_len = l.max_model_len;
  KeyValueTable t;
  t.add_section("vLLM V1 memory profile per GPU (vLLM " + p.release.text() + ", " +
                r.hardware->name + ")");
  t.add("total GPU memory (CUDA)", exact_bytes(p.total_memory_bytes),
        p.total_memory_measured
            ? "cudaMemGetInfo total, from the GPU profile"
            : "estimated: nvidia-smi total − " + human_bytes(model::kDefaultCudaReservedBytes) +
                  " driver reserve");
  t.add("× gpu-memory-utilization " + fixed(p.gpu_memory_utilization, 2),
        exact_bytes(p.requested_bytes), "requested memory");
  if (p.kv_cache_memory_given) {
    t.add("KV cache memory (given)", exact_bytes(p.available_kv_bytes),
          "--kv-cache-memory-bytes: no profiling");
  } else {
    t.add("− model weights", exact_bytes(p.weights_bytes));
    t.add("− activation peak", exact_bytes(p.activation_peak_bytes),
          r.activation_reserve_estimated
              ? "max(forward over " + with_commas(p.max_num_batched_tokens) + " tokens " +
                    human_bytes(p.forward_peak_bytes) + ", sampler over " +
                    with_commas(std::min(p.max_num_seqs, p.max_num_batched_tokens)) + " seqs " +
                    human_bytes(p.sampler_peak_bytes) +
                    (model::vllm_sampler_sorts(p.release) ? ", sorted top-k/top-p" : "") + ")"
              : "as given (--activation-reserve-gib)");
    t.add(
        "− non-torch memory", exact_bytes(p.non_torch_bytes),
        "workspaces" +
            std::string(r.analysis.query.tensor_parallel_size > 1 ? ", NCCL and all-reduce buffers"
                                                                  : "") +
            "; the CUDA context precedes vLLM's snapshot");
    t.add("− CUDA graphs", exact_bytes(p.cuda_graph_bytes),
          "captured after the KV cache, from the headroom");
    t.add("= available KV cache memory", p.fits ? exact_bytes(p.available_kv_bytes) : "0 B",
          p.fits ? "" : "DOES NOT FIT: short by " + human_bytes(p.shortfall_bytes));
  }
  t.add_section("KV cache");
  t.add("KV cache groups", with_commas(l.num_groups),
        with_commas(l.group_size) +
            " layers each; a block spans them: " + with_commas(l.block_bytes) + " B");
  if (l.state_groups > 0) {
    t.add("of them, state groups", with_commas(l.state_groups),
          "one block per request each; a layer's state " + with_commas(l.state_page_bytes) +
              " B, padded to the attention page");
  }
  if (l.block_size != r.analysis.query.block_size) {
    t.add("attention block size", with_commas(l.block_size) + " tokens",
          r.model.attention.indexer.enabled()
              ? "set from " + with_commas(r.analysis.query.block_size) +
                    ": vLLM's sparse MLA kernels take 64-token blocks"
              : "raised from " + with_commas(r.analysis.query.block_size) +
                    " so that a page holds a layer's state");
  }
  t.add("GPU blocks of " + with_commas(l.block_size) + " tokens", with_commas(l.num_blocks),
        r.num_gpu_blocks_override ? "--num-gpu-blocks-override" : "= available / block bytes");
  t.add("blocks per request", with_commas(l.blocks_per_request),
        "at " + with_commas(max_len) + " tokens");
  std::string out = t.render();
  out += "\nAs vLLM logs it:\n";
  for (const std::string& line : vllm_log_lines(r)) out += "  " + line + "\n";
  if (!p.fits || l.blocks_per_request > l.num_blocks) {
    out += "\nDOES NOT START: one request of " + with_commas(max_len) +
           " tokens needs more KV cache than is available; vLLM estimates the longest it can "
           "serve at " +
           with_commas(l.estimated_max_model_len) +
           " tokens (lower --max-model-len, or raise --gpu-memory-utilization or "
           "--tensor-parallel-size).\n";
  }
  return out;
}

}  // namespace kvsim::report
