#include "cli/inert_flags.h"

#include <algorithm>
#include <iostream>
#include <utility>

namespace kvsim::cli {

void warn_inert_flags(const SimCommandFlags& flags, const PreparedRun& run,
                      const std::vector<memory::AllocatorKind>& allocators) {
  const CLI::App* c = flags.command;
  const trace::WorkloadOptions& w = run.resolved.workload->resolved();
  if (flag_given(c, "--cv") && (w.source != trace::WorkloadOptions::Source::kSynthetic ||
                                w.synthetic.arrival != trace::ArrivalProcess::kGamma)) {
    std::cerr << "kvsim: warning: --cv shapes gamma arrivals only (--arrival gamma); ignored "
                 "with this workload\n";
  }
  const bool all_paged =
      !allocators.empty() && std::all_of(allocators.begin(), allocators.end(),
                                         [](auto a) { return a == memory::AllocatorKind::kPaged; });
  if (flag_given(c, "--placement") && all_paged) {
    std::cerr << "kvsim: warning: --placement places contiguous extents; the paged allocator "
                 "ignores it\n";
  }
  // The prefill instances' settings shape nothing in aggregated serving.
  if (run.resolved.sim.num_prefill_replicas == 0) {
    for (const auto& [path, flag] :
         {std::pair{"serving.prefill_tensor_parallel_size", "--prefill-tensor-parallel-size"},
          std::pair{"serving.prefill_data_parallel_size", "--prefill-data-parallel-size"},
          std::pair{"serving.kv_transfer_bandwidth_gb_s", "--kv-transfer-bandwidth-gb-s"},
          std::pair{"serving.kv_transfer_latency_us", "--kv-transfer-latency-us"}}) {
      if (run.scenario.origins.contains(path)) {
        std::cerr << "kvsim: warning: " << flag
                  << " shapes disaggregated serving only (--prefill-replicas > 0); ignored\n";
      }
    }
  }
  // Only when asked for: vllm-v1 turns prefix caching on by default, as vLLM V1 does.
  if (run.resolved.sim.enable_prefix_caching &&
      (run.scenario.origins.contains("serving.enable_prefix_caching") ||
       run.resolved.sim.warm_prefix_cache) &&
      !run.resolved.workload->open()->columns().prefix_hashes) {
    std::cerr << "kvsim: warning: --enable-prefix-caching: the workload carries no prefix "
                 "hashes (a native trace's prefix_hashes column, Mooncake's hash_ids, or "
                 "--shared-prefix-fraction), so nothing can be shared\n";
  }
  if (run.resolved.sim.serial_sessions && !run.resolved.workload->open()->columns().session_id) {
    std::cerr << "kvsim: warning: --serial-sessions: the workload carries no session ids (a "
                 "native trace's session_id column), so no request waits for another\n";
  }
}

}  // namespace kvsim::cli
