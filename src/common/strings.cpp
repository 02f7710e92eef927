#include "common/strings.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kvsim {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

// A likely typo: at most a third of the longer name changed (and at least one edit allowed).
std::size_t typo_limit(std::size_t a, std::size_t b) {
  return std::max<std::size_t>(1, std::max(a, b) / 3);
}

}  // namespace

std::string suggest(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  if (name.size() > 256) return {};  // no key is that long; spare the quadratic distance
  const std::string lower = to_lower(name);
  for (const auto& candidate : candidates) {
    // The distance is at least the length difference: a candidate that much longer or shorter
    // is never a typo of `name`, and skipping it keeps a 10,000-column header linear.
    const std::size_t gap = candidate.size() > name.size() ? candidate.size() - name.size()
                                                           : name.size() - candidate.size();
    if (gap > typo_limit(name.size(), candidate.size())) continue;
    const std::size_t d = edit_distance(lower, to_lower(candidate));
    if (best.empty() || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  if (best.empty() || best_distance > typo_limit(name.size(), best.size())) return {};
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string s = suggest(name, candidates);
  return s.empty() ? std::string() : ", did you mean '" + s + "'?";
}

}  // namespace kvsim
