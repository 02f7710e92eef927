#pragma once
// The vLLM release whose V1 memory profile kvsim models (--vllm-version). Releases differ in how
// their profile run samples, and so in the memory it takes (model/vllm_memory.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvsim::model {

// A vLLM release, 0.<minor>.<patch> (a fourth field, as in 0.10.1.1, is a packaging fix).
struct VllmRelease {
  int minor = 10;
  int patch = 1;
  std::string text() const;  // "0.10.1"
  bool operator==(const VllmRelease&) const = default;
};
inline constexpr VllmRelease kDefaultVllmRelease{10, 1};
inline constexpr int kOldestVllmMinor = 10;
inline constexpr int kNewestVllmMinor = 14;
// The first release whose profile samples with PyTorch's sort (FlashInfer's kernel opt-in).
inline constexpr int kFirstSortingVllmMinor = 11;
// The first release that schedules asynchronously unless told not to (vLLM PR #27614, v0.14.0:
// `--async-scheduling` on by default, except with pipeline parallelism).
inline constexpr int kFirstAsyncSchedulingVllmMinor = 14;
// The first release whose default cudagraph_mode is FULL_AND_PIECEWISE (v0.11.0: decode-only
// steps in one full graph, the others piecewise); PIECEWISE before.
inline constexpr int kFirstFullAndPiecewiseVllmMinor = 11;
// "0.M", "0.M.P" or "0.M.P.Q" (a leading v is allowed); nullopt when it is not a version.
std::optional<VllmRelease> parse_vllm_release(std::string_view text);
// Empty when kvsim models the release's memory profile (0.10 to 0.14), else why not.
std::string vllm_release_problem(const VllmRelease& release);
// The modelled release closest to `release` (itself when modelled).
VllmRelease nearest_modelled_vllm_release(const VllmRelease& release);
// Whether the release's sampler sorts the logits (PyTorch's top-k/top-p): 0.11 and later.
bool vllm_sampler_sorts(const VllmRelease& release);
// Whether `vllm serve` schedules asynchronously by default: 0.14 and later, one pipeline stage.
bool vllm_async_scheduling_default(const VllmRelease& release, std::int64_t pipeline_parallel_size);
// Whether the release captures decode-only steps as full graphs by default (FULL_AND_PIECEWISE).
bool vllm_full_decode_graphs_default(const VllmRelease& release);

}  // namespace kvsim::model
