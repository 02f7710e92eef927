#pragma once
// The one way kvsim names an enum's values: a constexpr table of (value, name) pairs, read both
// ways. Every enum that appears in YAML, flags, reports or messages declares one table next to
// its name functions; the table's order is the order help text and "expected one of" list.
//
//   constexpr EnumNames<Placement, 3> kPlacementNames{{{
//       {Placement::kBuddy, "buddy"}, {Placement::kFirstFit, "first-fit"}, ...}}};
//   kPlacementNames.name(Placement::kBuddy)  → "buddy"
//   kPlacementNames.parse("first-fit")       → Placement::kFirstFit (nullopt when unknown)
//   kPlacementNames.names()                  → the list for "expected one of" and did_you_mean
//
// Names are matched exactly (case and spelling as written in the table); aliases, when an enum
// has them, are extra rows after the canonical one (name() returns the first row of a value).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvsim {

template <typename Enum, std::size_t N>
struct EnumNames {
  std::array<std::pair<Enum, std::string_view>, N> entries;

  // The value's (first) name; "?" for a value the table lacks.
  constexpr std::string_view name(Enum value) const {
    for (const auto& [v, n] : entries) {
      if (v == value) return n;
    }
    return "?";
  }

  constexpr std::optional<Enum> parse(std::string_view text) const {
    for (const auto& [v, n] : entries) {
      if (n == text) return v;
    }
    return std::nullopt;
  }

  // Every name, in table order (aliases included).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(N);
    for (const auto& entry : entries) out.emplace_back(entry.second);
    return out;
  }
};

}  // namespace kvsim
