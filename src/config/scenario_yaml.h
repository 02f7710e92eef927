#pragma once
// Node-level scenario reading, for config/ code that builds scenario documents itself (a sweep
// grid expander). Everyone else uses config/scenario.h.

#include <yaml-cpp/yaml.h>

#include <string>

#include "config/scenario.h"

namespace kvsim::config {

// Reads one single-valued scenario document (a list is a type error here). `base_dir` resolves
// relative trace paths. Throws kvsim::Error located in `file`.
Scenario parse_scenario(const YAML::Node& root, const std::string& file,
                        const std::string& base_dir);

// Throws "lists make a sweep: use kvsim plan" located at the first sequence node under `root`.
void reject_lists(const YAML::Node& root, const std::string& file);

}  // namespace kvsim::config
