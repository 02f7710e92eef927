#include "config/inference_perf_config.h"

#include <cmath>

#include "config/yaml_reader.h"

namespace kvsim::config {
namespace {

// The first of `keys` the map has (inference-perf accepts an alias for some of its fields).
std::optional<std::string> present(const MapReader& m, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (m.has(k)) return std::string(k);
  }
  return std::nullopt;
}

// A length in tokens, or a distribution's mean (then `is_mean`).
std::int64_t tokens_or_mean(MapReader& m, const std::string& key, bool& is_mean) {
  const YAML::Node node = m.get_node(key);
  if (node.IsMap()) {
    MapReader d(node, m.file(), m.field(key));
    is_mean = true;
    return std::llround(d.get_double("mean", 1, 1e9));
  }
  return m.get_int(key, 1, 1'000'000'000);
}

}  // namespace

InferencePerfClient read_inference_perf_config(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  InferencePerfClient c;
  if (!root.IsMap()) {
    throw Error(ErrorLocation{path, 1, 1, ""}, "expected an inference-perf configuration (a map)");
  }
  MapReader top(root, path);
  if (auto load = top.optional_map("load")) {
    if (auto type = load->optional_string("type")) c.load_type = *type;
    const auto workers = load->optional_int("num_workers", 1, 1'000'000);
    const auto per_worker = load->optional_int("worker_max_concurrency", 1, 1'000'000);
    if (workers && per_worker) c.max_outstanding = *workers * *per_worker;
  }
  if (auto data = top.optional_map("data")) {
    const auto type = data->optional_string("type");
    if (type && *type == "shared_prefix") {
      if (auto sp = data->optional_map("shared_prefix")) {
        const auto groups = present(*sp, {"num_unique_system_prompts", "num_groups"});
        const auto users = present(*sp, {"num_users_per_system_prompt", "num_prompts_per_group"});
        c.prompt_groups = groups ? sp->get_int(*groups, 1, 1'000'000) : 10;
        c.prompts_per_group = users ? sp->get_int(*users, 1, 1'000'000) : 10;
        c.system_prompt_tokens =
            sp->has("system_prompt_len")
                ? tokens_or_mean(*sp, "system_prompt_len", c.system_prompt_len_is_mean)
                : 100;
        c.multi_turn = sp->optional_bool("enable_multi_turn_chat", false);
      } else {
        // inference-perf's defaults: 10 groups of 10 prompts behind 100-token system prompts.
        c.prompt_groups = 10;
        c.prompts_per_group = 10;
        c.system_prompt_tokens = 100;
      }
    }
  }
  return c;
}

}  // namespace kvsim::config
