// Glob matching over diff paths (contract in diff.h) as a Thompson-style simulation: the set of
// pattern positions reachable after each character of the path. O(|pattern| × |path|) time
// whatever the pattern; no backtracking.
#include <string>
#include <vector>

#include "report/diff.h"

namespace kvsim::report {
namespace {

enum class TokenKind { kLiteral, kAnyChar, kStar, kDeepStar };

struct Token {
  TokenKind kind;
  char c = 0;
};

std::vector<Token> compile(std::string_view pattern) {
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '*') {
      const bool deep = i + 1 < pattern.size() && pattern[i + 1] == '*';
      if (deep) ++i;
      // Runs of stars collapse: "***" is "**", "*" after "**" adds nothing.
      if (!tokens.empty() && tokens.back().kind == TokenKind::kDeepStar) continue;
      if (!tokens.empty() && tokens.back().kind == TokenKind::kStar && !deep) continue;
      if (!tokens.empty() && tokens.back().kind == TokenKind::kStar) {
        tokens.back().kind = TokenKind::kDeepStar;
        continue;
      }
      tokens.push_back({deep ? TokenKind::kDeepStar : TokenKind::kStar});
    } else if (c == '?') {
      tokens.push_back({TokenKind::kAnyChar});
    } else {
      tokens.push_back({TokenKind::kLiteral, c});
    }
  }
  return tokens;
}

// Calls `at_boundary(state_set)` before each '.' or '[' of `path` (an ancestor ends there) and
// returns whether the whole path matches.
class Matcher {
 public:
  explicit Matcher(std::string_view pattern) : tokens_(compile(pattern)) {
    // A leading "**." may also match nothing: "**.p99" matches "p99".
    if (pattern.substr(0, 3) == "**.") alt_start_ = 2;
  }

  bool match(std::string_view path, bool ancestors) const {
    const std::size_t n = tokens_.size();
    std::vector<char> cur(n + 1, 0), nxt(n + 1, 0);
    cur[0] = 1;
    if (alt_start_ > 0) cur[alt_start_] = 1;
    close(cur);
    for (std::size_t i = 0; i < path.size(); ++i) {
      const char c = path[i];
      if (ancestors && i > 0 && (c == '.' || c == '[') && cur[n]) return true;
      std::fill(nxt.begin(), nxt.end(), 0);
      bool any = false;
      for (std::size_t s = 0; s < n; ++s) {
        if (!cur[s]) continue;
        const Token& t = tokens_[s];
        switch (t.kind) {
          case TokenKind::kLiteral:
            if (t.c == c) nxt[s + 1] = any = true;
            break;
          case TokenKind::kAnyChar:
            nxt[s + 1] = any = true;
            break;
          case TokenKind::kStar:
            if (c != '.') nxt[s] = any = true;
            break;
          case TokenKind::kDeepStar:
            nxt[s] = any = true;
            break;
        }
      }
      if (!any) return false;
      close(nxt);
      cur.swap(nxt);
    }
    return cur[n] != 0;
  }

 private:
  // Stars match the empty run: a state before a star also reaches the state after it.
  void close(std::vector<char>& set) const {
    for (std::size_t s = 0; s < tokens_.size(); ++s) {
      if (set[s] &&
          (tokens_[s].kind == TokenKind::kStar || tokens_[s].kind == TokenKind::kDeepStar)) {
        set[s + 1] = 1;
      }
    }
  }

  std::vector<Token> tokens_;
  std::size_t alt_start_ = 0;  // token index just past a leading "**." (0 = none)
};

}  // namespace

bool glob_matches(std::string_view pattern, std::string_view path) {
  return Matcher(pattern).match(path, /*ancestors=*/false);
}

bool path_matches(std::string_view pattern, std::string_view path) {
  return Matcher(pattern).match(path, /*ancestors=*/true);
}

}  // namespace kvsim::report
