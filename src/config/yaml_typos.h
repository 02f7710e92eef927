#pragma once
// A required key that is absent while the map holds a near-miss spelling of it is a typo: report
// the typo ("unknown key 'kv_head', did you mean 'kv_heads'?") rather than "missing required
// field", which would point away from the line to fix.

#include <algorithm>
#include <string>
#include <vector>

#include "common/strings.h"
#include "config/yaml_reader.h"

namespace kvsim::config {

inline void check_required_typos(const MapReader& r, const std::vector<std::string>& required) {
  const std::vector<std::string> present = r.keys();
  for (const std::string& key : required) {
    if (r.has(key)) continue;
    for (const std::string& k : present) {
      if (std::find(required.begin(), required.end(), k) != required.end()) continue;
      if (suggest(k, {key}) == key) {
        std::string message = "unknown key '";
        message += k;
        message += "', did you mean '";
        message += key;
        message += "'?";
        throw r.error(k, message);
      }
    }
  }
}

}  // namespace kvsim::config
