#pragma once
// Resolving --model and --gpu, and listing what ships.
//
// --model accepts a shipped name ("llama-3-70b"), a path to a kvsim model YAML, or a path to a
// Hugging Face config.json; --gpu a shipped name ("h100-sxm") or a path to a hardware YAML. An
// argument is a path when it names an existing file, contains '/', or ends in .yaml/.yml/.json;
// otherwise a name. Shipped configs are the files under configs/ compiled into the binary
// (catalog_data.h), so names work from any directory.

#include <string>
#include <vector>

#include "model/hardware_spec.h"
#include "model/model_spec.h"

namespace kvsim::config {

// A validated model. Throws kvsim::Error: for an unknown name (field "--model", with a
// suggestion and the list of shipped names), or whatever the file's loader throws (file, line,
// column, field).
model::ModelSpec load_model(const std::string& name_or_path);

// A validated GPU. Throws kvsim::Error like load_model (field "--gpu").
model::HardwareSpec load_hardware(const std::string& name_or_path);

// Shipped names, sorted.
std::vector<std::string> model_names();
std::vector<std::string> hardware_names();

// Every shipped config, loaded and validated, sorted by name. A broken shipped file is a bug
// (tests load them all), reported as kvsim::Error naming its embedded path.
std::vector<model::ModelSpec> shipped_models();
std::vector<model::HardwareSpec> shipped_hardware();

}  // namespace kvsim::config
