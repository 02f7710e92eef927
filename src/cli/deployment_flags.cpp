#include "cli/deployment_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/flag_parse.h"
#include "common/error.h"
#include "common/strings.h"
#include "config/catalog.h"
#include "model/vllm_memory.h"

namespace kvsim::cli {
namespace {

constexpr std::int64_t kMaxBlockSize = 1 << 20;
constexpr double kMaxGib = 1 << 20;  // 1 PiB: far above any GPU

Bytes gib_to_bytes(double gib) {
  return static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB)));
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void add_deployment_flags(CLI::App* command, DeploymentFlags& flags) {
  command->add_option("--model", flags.model,
                      "Model: a shipped name (see 'kvsim models'), a model YAML or a Hugging Face "
                      "config.json");
  command->add_option("--gpu", flags.gpu,
                      "GPU: a shipped name (see 'kvsim gpus') or a hardware YAML");
  command
      ->add_option_function<std::string>(
          "--tensor-parallel-size,--tp",
          [&flags](const std::string& s) {
            flags.tensor_parallel_size =
                int_flag("--tensor-parallel-size", s, "a positive integer");
          },
          "GPUs one model replica is split over (tensor parallelism)")
      ->default_str(std::to_string(flags.tensor_parallel_size));
  command
      ->add_option_function<std::string>(
          "--gpu-memory-utilization",
          [&flags](const std::string& s) {
            flags.gpu_memory_utilization =
                double_flag("--gpu-memory-utilization", s, "a number in (0, 1]");
          },
          "Fraction of each GPU's memory the server may use (weights, activations, KV)")
      ->default_str("0.9");
  command
      ->add_option_function<std::string>(
          "--block-size",
          [&flags](const std::string& s) {
            flags.block_size = int_flag("--block-size", s, "a positive integer (tokens)");
          },
          "Tokens per KV-cache block")
      ->default_str(std::to_string(flags.block_size));
  command->add_option_function<std::string>(
      "--max-model-len",
      [&flags](const std::string& s) {
        flags.max_model_len = int_flag("--max-model-len", s, "a positive integer (tokens)");
        if (flags.max_model_len <= 0) {
          throw flag_error("--max-model-len",
                           "expected a positive integer (tokens), got '" + s + "'");
        }
      },
      "Longest sequence (prompt + output) served (default: the model's max context)");
  command
      ->add_option("--kv-cache-dtype", flags.kv_cache_dtype,
                   "KV-cache element type: " + join(model::kv_cache_dtype_names(), "|") +
                       " (auto = the model's activation type)")
      ->default_str(flags.kv_cache_dtype);
  command
      ->add_option_function<std::string>(
          "--kv-scale-group-size",
          [&flags](const std::string& s) {
            flags.kv_scale_group_size = int_flag(
                "--kv-scale-group-size", s, "a non-negative integer (elements per fp16 scale)");
          },
          "Quantized KV caches: one fp16 scale per this many elements of a head (0 = none)")
      ->default_str("0");
  command
      ->add_option_function<std::string>(
          "--activation-reserve-gib",
          [&flags](const std::string& s) {
            flags.activation_reserve_gib =
                double_flag("--activation-reserve-gib", s, "a non-negative number (GiB)");
          },
          "GPU memory kept for forward-pass activations, GiB per GPU (default: estimated from "
          "the model; 'kvsim kv' shows it)")
      ->type_name("GIB");
  command
      ->add_option_function<std::string>(
          "--runtime-overhead-gib",
          [&flags](const std::string& s) {
            flags.runtime_overhead_gib =
                double_flag("--runtime-overhead-gib", s, "a non-negative number (GiB)");
            flags.runtime_overhead_given = true;
          },
          "GPU memory taken by the CUDA context, workspaces, NCCL and CUDA graphs, GiB per GPU "
          "(default: 2 with --engine v0; V1's non-torch estimate with v1)")
      ->default_str("2");
  command
      ->add_option("--engine", flags.engine,
                   "Memory accounting: v1 = vLLM V1's worker memory profile (vLLM " +
                       std::string(model::kVllmV1Version) +
                       "), v0 = kvsim's older fixed reserves (V0-era engines)")
      ->default_str(flags.engine);
  command
      ->add_option_function<std::string>(
          "--kv-cache-memory-bytes,--kv-cache-memory",
          [&flags](const std::string& s) {
            flags.kv_cache_memory_bytes =
                int_flag("--kv-cache-memory-bytes", s, "a positive integer (bytes per GPU)");
          },
          "KV-cache bytes per GPU, skipping the memory profile (vLLM's override; --engine v1)")
      ->type_name("BYTES");
  command
      ->add_option_function<std::string>(
          "--num-gpu-blocks-override",
          [&flags](const std::string& s) {
            flags.num_gpu_blocks_override =
                int_flag("--num-gpu-blocks-override", s, "a positive integer (blocks)");
          },
          "Use this many KV blocks per GPU whatever the profile found (vLLM's override; "
          "--engine v1)")
      ->type_name("N");
}

void validate_deployment_flags(const DeploymentFlags& f) {
  if (f.model.empty()) {
    throw flag_error("--model",
                     "missing required flag; expected a shipped name (see 'kvsim "
                     "models'), a model YAML or a Hugging Face config.json");
  }
  if (f.tensor_parallel_size < 1) {
    throw flag_error("--tensor-parallel-size",
                     "expected a positive integer, got " + std::to_string(f.tensor_parallel_size));
  }
  if (!(f.gpu_memory_utilization > 0 && f.gpu_memory_utilization <= 1)) {
    throw flag_error("--gpu-memory-utilization",
                     "expected a number in (0, 1], got " + format_number(f.gpu_memory_utilization));
  }
  if (f.block_size < 1 || f.block_size > kMaxBlockSize) {
    throw flag_error("--block-size", "expected an integer in [1, " + std::to_string(kMaxBlockSize) +
                                         "] (tokens), got " + std::to_string(f.block_size));
  }
  if (f.max_model_len < 0) {
    throw flag_error("--max-model-len", "expected a positive integer (tokens), got " +
                                            std::to_string(f.max_model_len));
  }
  const auto names = model::kv_cache_dtype_names();
  bool known = false;
  for (const auto& n : names) known = known || n == to_lower(f.kv_cache_dtype);
  if (!known && !model::parse_dtype(f.kv_cache_dtype)) {
    throw flag_error("--kv-cache-dtype", "expected one of " + join(names, "|") + ", got '" +
                                             f.kv_cache_dtype + "'" +
                                             did_you_mean(f.kv_cache_dtype, names));
  }
  if (f.kv_scale_group_size < 0) {
    throw flag_error("--kv-scale-group-size", "expected a non-negative integer, got " +
                                                  std::to_string(f.kv_scale_group_size));
  }
  const auto check_gib = [](const char* flag, double gib) {
    if (!(gib >= 0 && gib <= kMaxGib)) {
      throw flag_error(flag, "expected a number of GiB in [0, " +
                                 std::to_string(static_cast<std::int64_t>(kMaxGib)) + "], got " +
                                 format_number(gib));
    }
  };
  if (f.activation_reserve_gib) check_gib("--activation-reserve-gib", *f.activation_reserve_gib);
  check_gib("--runtime-overhead-gib", f.runtime_overhead_gib);
  if (f.engine != "v1" && f.engine != "v0") {
    throw flag_error("--engine", "expected v1|v0, got '" + f.engine + "'" +
                                     did_you_mean(f.engine, {"v1", "v0"}));
  }
  const bool v0 = f.engine == "v0";
  if (f.kv_cache_memory_bytes) {
    if (*f.kv_cache_memory_bytes < 1) {
      throw flag_error("--kv-cache-memory-bytes",
                       "expected a positive integer (bytes per GPU), got " +
                           std::to_string(*f.kv_cache_memory_bytes));
    }
    if (v0) throw flag_error("--kv-cache-memory-bytes", "needs --engine v1");
  }
  if (f.num_gpu_blocks_override) {
    if (*f.num_gpu_blocks_override < 1) {
      throw flag_error("--num-gpu-blocks-override", "expected a positive integer (blocks), got " +
                                                        std::to_string(*f.num_gpu_blocks_override));
    }
    if (v0) throw flag_error("--num-gpu-blocks-override", "needs --engine v1");
  }
}

model::MemoryBudgetOptions Deployment::budget_options(std::int64_t max_num_batched_tokens,
                                                      std::int64_t max_num_seqs) const {
  model::MemoryBudgetOptions o;
  o.gpu_memory_utilization = gpu_memory_utilization;
  o.activation_reserve_bytes = activation_reserve_bytes;
  o.runtime_overhead_bytes = runtime_overhead_bytes;
  o.engine = engine;
  if (engine == model::MemoryEngine::kVllmV1) {
    o.runtime_overhead_given = runtime_overhead_given;
    o.max_num_batched_tokens = max_num_batched_tokens;
    o.max_num_seqs = max_num_seqs;
    o.kv_cache_memory_bytes = kv_cache_memory_bytes;
    if (num_gpu_blocks_override && hardware) {
      const model::VllmKvCacheLayout layout = model::vllm_kv_cache_layout(
          model, kv_format, tensor_parallel_size, 0, block_size, max_model_len,
          std::max<std::int64_t>(1, max_num_batched_tokens));
      o.kv_cache_bytes_override = static_cast<Bytes>(*num_gpu_blocks_override) * layout.block_bytes;
    }
  }
  return o;
}

report::ServingMemoryInputs Deployment::serving_inputs() const {
  report::ServingMemoryInputs s;
  s.tensor_parallel_size = tensor_parallel_size;
  s.gpu_memory_utilization = gpu_memory_utilization;
  s.block_size = block_size;
  s.max_model_len = max_model_len;
  s.kv_cache_dtype = kv_cache_dtype;
  s.kv_format = kv_format;
  s.activation_reserve_bytes = activation_reserve_bytes;
  s.runtime_overhead_bytes = runtime_overhead_bytes;
  s.engine = engine;
  s.kv_cache_memory_bytes = kv_cache_memory_bytes;
  s.num_gpu_blocks_override = num_gpu_blocks_override;
  return s;
}

Deployment resolve_deployment(const DeploymentFlags& flags, GpuRequirement gpu) {
  validate_deployment_flags(flags);
  if (gpu == GpuRequirement::kRequired && flags.gpu.empty()) {
    throw flag_error("--gpu",
                     "missing required flag; expected a shipped name (see 'kvsim gpus') "
                     "or a hardware YAML");
  }
  Deployment d;
  d.model = config::load_model(flags.model);
  if (!flags.gpu.empty()) d.hardware = config::load_hardware(flags.gpu);
  d.tensor_parallel_size = flags.tensor_parallel_size;
  if (const std::string p = model::tensor_parallel_problem(d.model, d.tensor_parallel_size);
      !p.empty()) {
    throw flag_error("--tensor-parallel-size", p);
  }
  d.gpu_memory_utilization = flags.gpu_memory_utilization;
  d.block_size = flags.block_size;
  d.max_model_len = flags.max_model_len > 0 ? flags.max_model_len : d.model.max_context;
  if (d.max_model_len > d.model.max_context) {
    throw flag_error("--max-model-len", "expected at most the model's maximum context (" +
                                            std::to_string(d.model.max_context) + " tokens for " +
                                            d.model.name + "), got " +
                                            std::to_string(d.max_model_len));
  }
  d.kv_cache_dtype = flags.kv_cache_dtype;
  const auto format =
      model::kv_format_from_name(d.model, flags.kv_cache_dtype, flags.kv_scale_group_size);
  if (!format) {  // validate_deployment_flags accepted the name
    throw flag_error("--kv-cache-dtype", "expected one of " +
                                             join(model::kv_cache_dtype_names(), "|") + ", got '" +
                                             flags.kv_cache_dtype + "'");
  }
  d.kv_format = *format;
  if (flags.activation_reserve_gib) {
    d.activation_reserve_bytes = gib_to_bytes(*flags.activation_reserve_gib);
  }
  d.runtime_overhead_bytes = gib_to_bytes(flags.runtime_overhead_gib);
  d.runtime_overhead_given = flags.runtime_overhead_given;
  d.engine = flags.engine == "v0" ? model::MemoryEngine::kV0 : model::MemoryEngine::kVllmV1;
  if (flags.kv_cache_memory_bytes) {
    d.kv_cache_memory_bytes = static_cast<Bytes>(*flags.kv_cache_memory_bytes);
  }
  d.num_gpu_blocks_override = flags.num_gpu_blocks_override;
  return d;
}

}  // namespace kvsim::cli
