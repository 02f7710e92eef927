#include "model/vllm_release.h"

#include <charconv>
#include <vector>

namespace kvsim::model {

std::string VllmRelease::text() const {
  return "0." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<VllmRelease> parse_vllm_release(std::string_view text) {
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  std::vector<int> fields;
  while (true) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data() || value < 0) return std::nullopt;
    fields.push_back(value);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (text.empty()) break;
    if (text.front() != '.' || fields.size() == 4) return std::nullopt;
    text.remove_prefix(1);
  }
  if (fields.size() < 2 || fields[0] != 0) return std::nullopt;
  return VllmRelease{fields[1], fields.size() > 2 ? fields[2] : 0};
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
  return release.minor >= 11;
}

}  // namespace kvsim::model
