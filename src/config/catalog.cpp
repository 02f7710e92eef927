#include "config/catalog.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/strings.h"
#include "config/catalog_data.h"
#include "config/hardware_yaml.h"
#include "config/hf_import.h"
#include "config/model_yaml.h"

namespace kvsim::config {
namespace {

constexpr std::string_view kModelsDir = "configs/models/";
constexpr std::string_view kHardwareDir = "configs/hardware/";

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Embedded files directly under `dir` ending in .yaml, as (name, file).
std::vector<std::pair<std::string, const EmbeddedFile*>> embedded_in(std::string_view dir) {
  std::vector<std::pair<std::string, const EmbeddedFile*>> out;
  for (const EmbeddedFile& f : embedded_catalog_files()) {
    const std::string_view path(f.path);
    if (path.substr(0, dir.size()) != dir || !path.ends_with(".yaml")) continue;
    const std::string_view rest = path.substr(dir.size(), path.size() - dir.size() - 5);
    if (rest.find('/') != std::string_view::npos) continue;
    out.emplace_back(std::string(rest), &f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const EmbeddedFile* find_embedded(std::string_view dir, const std::string& name) {
  for (const auto& [n, f] : embedded_in(dir)) {
    if (n == name) return f;
  }
  return nullptr;
}

std::vector<std::string> names_in(std::string_view dir) {
  std::vector<std::string> names;
  for (const auto& [n, f] : embedded_in(dir)) names.push_back(n);
  return names;
}

bool looks_like_path(const std::string& arg, const std::vector<std::string>& shipped) {
  if (arg.find('/') != std::string::npos) return true;
  if (arg.ends_with(".yaml") || arg.ends_with(".yml") || arg.ends_with(".json")) return true;
  const bool is_name = std::find(shipped.begin(), shipped.end(), arg) != shipped.end();
  return !is_name && is_regular_file(arg);
}

std::string read_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in || !is_regular_file(path)) throw Error({path, 0, 0, flag}, "cannot open file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Error unknown_name(const std::string& flag, const std::string& what, const std::string& name,
                   const std::vector<std::string>& shipped, const std::string& paths) {
  return Error({"", 0, 0, flag}, "expected a shipped " + what + " name (" + join(shipped, ", ") +
                                     ") or " + paths + ", got unknown name '" + name + "'" +
                                     did_you_mean(name, shipped));
}

}  // namespace

model::ModelSpec load_model(const std::string& name_or_path) {
  const std::vector<std::string> shipped = model_names();
  if (name_or_path.empty()) {
    throw Error({"", 0, 0, "--model"}, "expected a model name or a path, got ''");
  }
  if (!looks_like_path(name_or_path, shipped)) {
    const EmbeddedFile* f = find_embedded(kModelsDir, name_or_path);
    if (f == nullptr) {
      throw unknown_name("--model", "model", name_or_path, shipped,
                         "a path to a model YAML or a Hugging Face config.json");
    }
    return parse_model_yaml(std::string_view(f->data, f->size), f->path);
  }
  const std::string text = read_file(name_or_path, "--model");
  const bool json = name_or_path.ends_with(".json") ||
                    (!name_or_path.ends_with(".yaml") && !name_or_path.ends_with(".yml") &&
                     trim(text).substr(0, 1) == "{");
  return json ? parse_hf_config(text, name_or_path) : parse_model_yaml(text, name_or_path);
}

model::HardwareSpec load_hardware(const std::string& name_or_path) {
  const std::vector<std::string> shipped = hardware_names();
  if (name_or_path.empty()) {
    throw Error({"", 0, 0, "--gpu"}, "expected a GPU name or a path, got ''");
  }
  if (!looks_like_path(name_or_path, shipped)) {
    const EmbeddedFile* f = find_embedded(kHardwareDir, name_or_path);
    if (f == nullptr) {
      throw unknown_name("--gpu", "GPU", name_or_path, shipped, "a path to a hardware YAML");
    }
    return parse_hardware_yaml(std::string_view(f->data, f->size), f->path);
  }
  return parse_hardware_yaml(read_file(name_or_path, "--gpu"), name_or_path);
}

std::vector<std::string> model_names() {
  return names_in(kModelsDir);
}
std::vector<std::string> hardware_names() {
  return names_in(kHardwareDir);
}

std::vector<model::ModelSpec> shipped_models() {
  std::vector<model::ModelSpec> out;
  for (const auto& name : model_names()) out.push_back(load_model(name));
  return out;
}

std::vector<model::HardwareSpec> shipped_hardware() {
  std::vector<model::HardwareSpec> out;
  for (const auto& name : hardware_names()) out.push_back(load_hardware(name));
  return out;
}

}  // namespace kvsim::config
