#include "model/vllm_release.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/strings.h"

namespace kvsim::model {

std::string VllmRelease::text() const {
  return "0." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<VllmRelease> parse_vllm_release(std::string_view text) {
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  const std::vector<std::string_view> fields = split(text, '.');
  if (fields.size() < 2 || fields.size() > 4) return std::nullopt;
  std::vector<int> numbers;
  for (const std::string_view f : fields) {
    const bool digits = !f.empty() && std::all_of(f.begin(), f.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    const std::optional<std::int64_t> value = digits ? parse_int(f) : std::nullopt;
    if (!value || *value > std::numeric_limits<int>::max()) return std::nullopt;
    numbers.push_back(static_cast<int>(*value));
  }
  if (numbers[0] != 0) return std::nullopt;
  return VllmRelease{numbers[1], numbers.size() > 2 ? numbers[2] : 0};
}

std::string vllm_release_problem(const VllmRelease& release) {
  if (release.minor >= kOldestVllmMinor && release.minor <= kNewestVllmMinor) return "";
  return "kvsim models the V1 memory profile of vLLM 0." + std::to_string(kOldestVllmMinor) +
         " to 0." + std::to_string(kNewestVllmMinor) + ", not " + release.text();
}

VllmRelease nearest_modelled_vllm_release(const VllmRelease& release) {
  if (release.minor < kOldestVllmMinor) return VllmRelease{kOldestVllmMinor, 0};
  if (release.minor > kNewestVllmMinor) return VllmRelease{kNewestVllmMinor, 0};
  return release;
}

bool vllm_sampler_sorts(const VllmRelease& release) {
  return release.minor >= kFirstSortingVllmMinor;
}

bool vllm_full_decode_graphs_default(const VllmRelease& release) {
  return release.minor >= kFirstFullAndPiecewiseVllmMinor;
}

bool vllm_async_scheduling_default(const VllmRelease& release,
                                   std::int64_t pipeline_parallel_size) {
  return release.minor >= kFirstAsyncSchedulingVllmMinor && pipeline_parallel_size == 1;
}

}  // namespace kvsim::model
