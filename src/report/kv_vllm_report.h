#pragma once
// The vLLM V1 part of the `kvsim kv` report (--engine v1 with a GPU): the worker's memory
// profile and the KV cache layout, as the `kv.vllm` JSON object and as a table ending in the
// three lines vLLM logs. Requires KvReport::vllm_profile and vllm_layout.

#include <string>

#include "report/json.h"
#include "report/kv_report.h"

namespace kvsim::report {

// kv.vllm {version, engine, profile{...}, fits, available_kv_cache_bytes, ..., log_lines[3]}.
Json vllm_json(const KvReport& report);

// The profile and cache sections, "As vLLM logs it:" and, when vLLM would refuse to start, why.
std::string vllm_table(const KvReport& report);

}  // namespace kvsim::report
