// kvsim diff BASE.json NEW.json: leaf-by-leaf comparison of two kvsim JSON documents with
// tolerances, for CI. Exit 0 within tolerance, 1 on a regression, 2 on unusable input.

#include "report/diff.h"

#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/error.h"
#include "common/strings.h"

namespace kvsim::cli {
namespace {

struct DiffFlags {
  std::string base, next;
  double rtol = 0.01;
  double atol = 0.0;
  std::vector<std::string> tol;     // PATTERN=RTOL[:ATOL]
  std::vector<std::string> ignore;  // PATTERN
  bool no_default_ignore = false;
  report::OutputOptions output;
};

double tolerance_value(std::string_view text, const std::string& flag, const std::string& what) {
  const auto v = parse_double(trim(text));
  if (!v || *v < 0.0) {
    throw Error({"", 0, 0, flag},
                "expected a non-negative number for " + what + ", got '" + std::string(text) + "'");
  }
  return *v;
}

report::ToleranceOverride parse_override(const std::string& spec, const report::Tolerance& dflt) {
  const std::size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw Error({"", 0, 0, "--tol"},
                "expected PATTERN=RTOL[:ATOL] (e.g. summary.ttft_s.p99=0.05), got '" + spec + "'");
  }
  report::ToleranceOverride o;
  o.pattern = spec.substr(0, eq);
  o.tolerance = dflt;
  const std::string value = spec.substr(eq + 1);
  const std::size_t colon = value.find(':');
  o.tolerance.rtol = tolerance_value(value.substr(0, colon), "--tol", "the relative tolerance");
  if (colon != std::string::npos) {
    o.tolerance.atol = tolerance_value(value.substr(colon + 1), "--tol", "the absolute tolerance");
  }
  return o;
}

void run_diff(const DiffFlags& flags) {
  if (!std::isfinite(flags.rtol) || flags.rtol < 0) {
    throw Error({"", 0, 0, "--rtol"}, "expected a non-negative number");
  }
  if (!std::isfinite(flags.atol) || flags.atol < 0) {
    throw Error({"", 0, 0, "--atol"}, "expected a non-negative number");
  }
  report::DiffOptions options;
  options.tolerance = {flags.rtol, flags.atol};
  if (flags.no_default_ignore) options.ignore.clear();
  for (const auto& p : flags.ignore) options.ignore.push_back(p);
  for (const auto& spec : flags.tol)
    options.overrides.push_back(parse_override(spec, options.tolerance));

  const report::Json base = report::parse_json_file(flags.base);
  const report::Json next = report::parse_json_file(flags.next);
  report::check_comparable(base, next, flags.base, flags.next);
  const report::DiffResult result = report::diff_json(base, next, options);

  report::emit(
      flags.output,
      {[&] { return report::dump(report::diff_to_json(result, options, flags.base, flags.next)); },
       [&] { return report::diff_table(result, flags.base, flags.next); },
       [&] { return report::diff_csv(result); }},
      "diff");

  if (!result.passed()) {
    std::string message = "kvsim: diff: " + std::to_string(result.num_failed) +
                          (result.num_failed == 1 ? " value" : " values") + " out of tolerance:";
    for (const auto& e : result.entries) {
      if (report::diff_kind_fails(e.kind)) message += "\n  " + report::describe_failure(e);
    }
    std::cerr << message << "\n";
    set_exit_code(1);
  }
}

}  // namespace

void register_diff(CLI::App& app) {
  auto flags = std::make_shared<DiffFlags>();
  auto* command = app.add_subcommand(
      "diff",
      "Compare two kvsim JSON reports leaf by leaf with tolerances (exit 0 within tolerance, 1 "
      "on a regression, 2 on unusable input)");
  command->add_option("BASE", flags->base, "Baseline JSON report")->required();
  command->add_option("NEW", flags->next, "New JSON report (same schema)")->required();
  command->add_option("--rtol", flags->rtol,
                      "Relative tolerance for numbers: |new-base| <= atol + rtol*|base| (0.01)");
  command->add_option("--atol", flags->atol, "Absolute tolerance for numbers (0)");
  command
      ->add_option("--tol", flags->tol,
                   "Per-metric tolerance PATTERN=RTOL[:ATOL], e.g. summary.ttft_s.p99=0.05; "
                   "the last matching one wins (repeatable)")
      ->expected(1)
      ->allow_extra_args(false);
  command
      ->add_option("--ignore", flags->ignore,
                   "Skip paths matching PATTERN (glob: * within a segment, ** across, ? one "
                   "char; a subtree by its path), e.g. 'timeline' or 'runs[*].inputs' "
                   "(repeatable)")
      ->expected(1)
      ->allow_extra_args(false);
  command->add_flag("--no-default-ignore", flags->no_default_ignore,
                    "Also compare kvsim_version (ignored by default)");
  add_output_flags(command, flags->output);
  command->callback([flags] { run_diff(*flags); });
}

}  // namespace kvsim::cli
