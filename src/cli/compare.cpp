// kvsim compare: one workload through several --allocator and/or --scheduler values, side by side
// (the PagedAttention Figure 2 question).
#include "cli/commands.h"
#include "cli/inert_flags.h"
#include "cli/serving_flags.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/strings.h"
#include "report/compare_report.h"
#include "report/html.h"

namespace kvsim::cli {
namespace {

// The comma-separated values of a list flag; `fallback` when it was not given.
std::vector<std::string> values_of(const SettingFlags& flags, const std::string& flag,
                                   const std::string& fallback) {
  const std::string* given = flags.find(flag);
  if (given == nullptr) return {fallback};
  const std::string& text = *given;
  std::vector<std::string> out;
  for (std::string_view part : split(text, ',')) {
    const std::string v(trim(part));
    if (v.empty()) {
      throw Error(ErrorLocation{"", 0, 0, flag},
                  "expected a name, got an empty list item in '" + text + "'");
    }
    out.push_back(v);
  }
  return out;
}

void run_compare(const SimCommandFlags& flags, const std::string& html) {
  if (!flags.output.format.empty()) report::parse_format(flags.output.format);
  if (flags.settings.find("--allocator") == nullptr &&
      flags.settings.find("--scheduler") == nullptr) {
    throw Error(ErrorLocation{"", 0, 0, "--allocator"},
                "expected a list to compare, e.g. --allocator contiguous-max,contiguous-pow2,"
                "contiguous-oracle,paged and/or --scheduler vllm,chunked-prefill,static");
  }
  if (!flags.serving.requests_path.empty() || !flags.serving.timeline_path.empty()) {
    throw Error(
        ErrorLocation{"", 0, 0, flags.serving.requests_path.empty() ? "--timeline" : "--requests"},
        "is a 'kvsim simulate' option (one file per run); run simulate for the column you want");
  }
  // The base scenario is not resolved on its own: a setting may hold only with the variants'
  // values (--kv-offload-gib needs vllm-v1 or chunked-prefill, which --scheduler may list).
  const config::Scenario base = scenario_from(flags);
  const run::ResolveOptions resolve{.truncate_prompts = flags.workload.truncate_prompts};
  const auto allocators = values_of(flags.settings, "--allocator",
                                    std::string(memory::allocator_kind_name(base.allocator)));
  const auto schedulers = values_of(flags.settings, "--scheduler",
                                    std::string(sim::scheduler_name(base.sim.scheduler.kind)));
  // Every variant is checked (names by the settings table, at their flag) and resolved before
  // the first run.
  const config::Setting& allocator = *config::find_setting_by_flag("--allocator");
  const config::Setting& scheduler = *config::find_setting_by_flag("--scheduler");
  std::vector<run::ResolvedScenario> variants;
  for (const auto& a : allocators) {
    for (const auto& name : schedulers) {
      config::Scenario v = base;
      config::apply_setting(allocator, a, {"", 0, 0, "--allocator"}, v);
      // Not given: the scenario's own choice, or the engine's default scheduler.
      if (flags.settings.find("--scheduler") != nullptr) {
        config::apply_setting(scheduler, name, {"", 0, 0, "--scheduler"}, v);
      }
      variants.push_back(run::resolve_scenario(v, resolve));
    }
  }
  std::vector<memory::AllocatorKind> kinds;
  kinds.reserve(variants.size());
  for (const auto& v : variants) kinds.push_back(v.allocator);
  const PreparedRun run{base, resolve, variants.front()};
  warn_inert_flags(flags, run, kinds);
  std::vector<report::CompareRun> runs;
  for (const run::ResolvedScenario& s : variants) {
    const std::string label = std::string(memory::allocator_kind_name(s.allocator)) + " / " +
                              std::string(sim::scheduler_name(s.sim.scheduler.kind));
    RunOutput out = run_scenario(s, "", "compare " + label + ":", kv_detail(flags.serving));
    runs.push_back(report::CompareRun{label, std::move(out.inputs), std::move(out.result)});
  }
  const sim::SloOptions slo = run.resolved.sim.slo;
  if (!html.empty()) write_file_atomically(html, report::compare_html(runs, slo));
  report::emit(flags.output,
               {[&] { return report::dump(report::compare_json(runs, slo)); },
                [&] { return report::compare_table(runs, slo); },
                [&] { return report::compare_csv(runs, slo); }},
               "compare");
}

}  // namespace

void register_compare(CLI::App& app) {
  auto flags = std::make_shared<SimCommandFlags>();
  auto* command = app.add_subcommand(
      "compare", "Run one workload through several allocators/schedulers side by side");
  add_sim_command_flags(command, *flags, SettingForm::kCompare);
  auto html = std::make_shared<std::string>();
  command
      ->add_option("--html", *html,
                   "Also write a self-contained HTML page: memory breakdown bars (PagedAttention "
                   "Figure 2), throughput, latency percentiles and CDFs")
      ->type_name("FILE");
  command->callback([flags, html] { run_compare(*flags, *html); });
}

}  // namespace kvsim::cli
