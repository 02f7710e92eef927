// kvsim gpus: the shipped hardware configs with their key numbers.
#include "cli/commands.h"
#include "common/format.h"
#include "config/catalog.h"
#include "report/json.h"
#include "report/spec_json.h"
#include "report/table.h"

namespace kvsim::cli {
namespace {

std::string tflops(const model::HardwareSpec& hw, model::Dtype dtype, bool raw) {
  const auto it = hw.peak_flops.find(dtype);
  if (it == hw.peak_flops.end()) return raw ? "" : "-";
  return raw ? fixed(it->second, 0) : fixed(it->second / 1e12, 1);
}

report::Table make_table(const std::vector<model::HardwareSpec>& gpus, bool raw) {
  report::Table t({"name", "gpu", "memory", "HBM bandwidth", "bf16 TFLOP/s", "fp8 TFLOP/s",
                   "interconnect", "$/GPU-hour", "cost model"});
  if (raw) {
    t = report::Table({"name", "display_name", "memory_bytes", "memory_bandwidth_bytes_per_s",
                       "bf16_flops", "fp8_flops", "interconnect_bandwidth_bytes_per_s",
                       "price_per_hour", "cost_model"});
  }
  for (const auto& hw : gpus) {
    t.add_row({hw.name, hw.display_name,
               raw ? std::to_string(hw.memory_bytes) : human_bytes(hw.memory_bytes),
               raw ? fixed(hw.memory_bandwidth, 0) : fixed(hw.memory_bandwidth / 1e12, 2) + " TB/s",
               tflops(hw, model::Dtype::kBf16, raw), tflops(hw, model::Dtype::kFp8, raw),
               raw ? fixed(hw.interconnect_bandwidth, 0)
                   : fixed(hw.interconnect_bandwidth / 1e9, 0) + " GB/s",
               raw ? fixed(hw.price_per_hour, 4) : "$" + fixed(hw.price_per_hour, 2),
               hw.cost.provenance.kind});
  }
  return t;
}

void run_gpus(const report::OutputOptions& output) {
  const std::vector<model::HardwareSpec> gpus = config::shipped_hardware();
  report::emit(output,
               {[&] {
                  report::Json doc = report::envelope("kvsim.gpus/v1", "gpus");
                  report::Json list = report::Json::array();
                  for (const auto& hw : gpus) list.push_back(report::hardware_json(hw));
                  doc["gpus"] = list;
                  return report::dump(doc);
                },
                [&] {
                  report::Table t = make_table(gpus, false);
                  t.set_title(
                      "Shipped GPUs (dense peaks; memory as the driver reports it; interconnect "
                      "per direction)");
                  return t.render();
                },
                [&] { return make_table(gpus, true).render_csv(); }},
               "gpus");
}

}  // namespace

void register_gpus(CLI::App& app) {
  auto output = std::make_shared<report::OutputOptions>();
  auto* command = app.add_subcommand("gpus", "List the shipped hardware configs");
  add_output_flags(command, *output);
  command->callback([output] { run_gpus(*output); });
}

}  // namespace kvsim::cli
