#pragma once
// The one way kvsim names an enum's values: a constexpr table of (value, name) pairs, read both
// ways. Every enum that appears in YAML, flags, reports or messages declares one table next to
// its name functions; the table's order is the order help text and "expected one of" list.
//
//   constexpr EnumNames<Placement, 3> kPlacementNames{{{
//       {Placement::kBuddy, "buddy"}, {Placement::kFirstFit, "first-fit"}, ...}}};
//   kPlacementNames.name(Placement::kBuddy)  → "buddy"
//   kPlacementNames.parse("first-fit")       → Placement::kFirstFit (nullopt when unknown)
//   kPlacementNames.parse_or_throw(text, where, "a placement")
//       → throws Error(where, "expected a placement (buddy, first-fit, best-fit), got 'x', did
//         you mean ...") for an unknown name.
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

#include "common/error.h"
#include "common/strings.h"

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

  // parse(), or kvsim::Error at `where`: "expected <what> (a, b, c), got 'x'" plus a "did you
  // mean" when the text is one typo away from a name.
  Enum parse_or_throw(std::string_view text, const ErrorLocation& where,
                      std::string_view what) const {
    if (const std::optional<Enum> v = parse(text)) return *v;
    const std::vector<std::string> all = names();
    throw Error(where, "expected " + std::string(what) + " (" + join(all, ", ") + "), got '" +
                           std::string(text) + "'" + did_you_mean(text, all));
  }
};

}  // namespace kvsim
