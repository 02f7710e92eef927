// kvsim diff BASE.json NEW.json: leaf-by-leaf comparison of two kvsim JSON documents with
// tolerances and directions, for CI. Exit 0 within tolerance (improvements included), 1 on a
// regression, 2 on unusable input (including a pattern that matches no path).

#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/strings.h"

namespace kvsim::cli {
namespace {

struct DiffFlags {
  std::string base, next;
  double rtol = 0.01;
  double atol = 0.0;
  std::vector<std::string> tol;     // PATTERN=RTOL[:ATOL][,...]
  std::vector<std::string> ignore;  // PATTERN[,...]
  std::vector<std::string> only;    // PATTERN[,...]
  std::vector<std::string> higher, lower, either;
  bool no_default_ignore = false;
  bool no_default_directions = false;
  bool exact_paths = false;
  report::OutputOptions output;
  CLI::App* command = nullptr;
  CLI::Option* higher_opt = nullptr;
  CLI::Option* lower_opt = nullptr;
  CLI::Option* either_opt = nullptr;
};

// The comma-separated items of one flag value; an empty item is an error (a stray comma would
// otherwise become a pattern matching nothing, or everything).
std::vector<std::string> items(const std::string& value, const std::string& flag) {
  std::vector<std::string> out;
  for (std::string_view part : split(value, ',')) {
    const std::string item(trim(part));
    if (item.empty()) {
      throw Error({"", 0, 0, flag},
                  "expected PATTERN[,PATTERN...], got an empty item in '" + value + "'");
    }
    out.push_back(item);
  }
  return out;
}

double tolerance_value(std::string_view text, const std::string& flag, const std::string& what) {
  const auto v = parse_double(trim(text));
  if (!v || !std::isfinite(*v) || *v < 0.0) {
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

struct UserPattern {
  std::string flag, pattern;
};

report::DiffOptions build_options(const DiffFlags& flags, std::vector<UserPattern>& user) {
  if (!std::isfinite(flags.rtol) || flags.rtol < 0) {
    throw Error({"", 0, 0, "--rtol"}, "expected a non-negative number");
  }
  if (!std::isfinite(flags.atol) || flags.atol < 0) {
    throw Error({"", 0, 0, "--atol"}, "expected a non-negative number");
  }
  report::DiffOptions options;
  options.tolerance = {flags.rtol, flags.atol};
  options.normalize_paths = !flags.exact_paths;
  if (flags.no_default_ignore) options.ignore.clear();
  if (flags.no_default_directions) options.directions.clear();
  for (const auto& value : flags.ignore) {
    for (auto& p : items(value, "--ignore")) {
      user.push_back({"--ignore", p});
      options.ignore.push_back(std::move(p));
    }
  }
  for (const auto& value : flags.only) {
    for (auto& p : items(value, "--only")) {
      user.push_back({"--only", p});
      options.only.push_back(std::move(p));
    }
  }
  for (const auto& value : flags.tol) {
    for (const auto& spec : items(value, "--tol")) {
      options.overrides.push_back(parse_override(spec, options.tolerance));
      user.push_back({"--tol", options.overrides.back().pattern});
    }
  }
  // Direction rules in command-line order across the three flags: the last match wins.
  std::size_t ih = 0, il = 0, ie = 0;
  for (const CLI::Option* opt : flags.command->parse_order()) {
    const std::string* value = nullptr;
    report::Direction d = report::Direction::kEither;
    if (opt == flags.higher_opt && ih < flags.higher.size()) {
      value = &flags.higher[ih++];
      d = report::Direction::kHigherIsBetter;
    } else if (opt == flags.lower_opt && il < flags.lower.size()) {
      value = &flags.lower[il++];
      d = report::Direction::kLowerIsBetter;
    } else if (opt == flags.either_opt && ie < flags.either.size()) {
      value = &flags.either[ie++];
    } else {
      continue;
    }
    const std::string flag = opt->get_name();
    for (auto& p : items(*value, flag)) {
      user.push_back({flag, p});
      options.directions.push_back({std::move(p), d});
    }
  }
  for (const auto& u : user) options.require_match.push_back(u.pattern);
  return options;
}

void run_diff(const DiffFlags& flags) {
  const bool markdown = flags.output.format == "github" || flags.output.format == "markdown";
  if (!flags.output.format.empty() && !markdown) report::parse_format(flags.output.format);
  std::vector<UserPattern> user;
  const report::DiffOptions options = build_options(flags, user);

  const report::Json base = report::parse_json_file(flags.base);
  const report::Json next = report::parse_json_file(flags.next);
  report::check_comparable(base, next, flags.base, flags.next);
  const report::DiffResult result = report::diff_json(base, next, options);

  if (!result.unmatched.empty()) {
    // A pattern that matches nothing is a misspelt gate: it would pass whatever moved.
    std::string message;
    std::string first_flag;
    for (const auto& u : user) {
      if (std::find(result.unmatched.begin(), result.unmatched.end(), u.pattern) ==
          result.unmatched.end()) {
        continue;
      }
      if (first_flag.empty()) {
        first_flag = u.flag;
      } else {
        message += "; ";
      }
      message += (message.empty() ? "" : u.flag + " ") + "'" + u.pattern + "'";
    }
    throw Error({"", 0, 0, first_flag},
                "pattern " + message + " matches no path of " + flags.base + " or " + flags.next +
                    " (outside ignored subtrees); paths look like summary.ttft_s.p99, "
                    "runs[0].summary, deployments[*].max_rate_rps");
  }

  const auto json_text = [&] {
    return report::dump(report::diff_to_json(result, options, flags.base, flags.next));
  };
  if (markdown) {
    if (!flags.output.out_path.empty()) write_file_atomically(flags.output.out_path, json_text());
    std::cout << report::diff_markdown(result, flags.base, flags.next);
  } else {
    report::emit(flags.output,
                 {json_text, [&] { return report::diff_table(result, flags.base, flags.next); },
                  [&] { return report::diff_csv(result); }},
                 "diff");
  }

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

// A repeatable PATTERN option: every occurrence is kept, in order.
CLI::Option* add_repeatable(CLI::App* command, const std::string& name,
                            std::vector<std::string>& into, const std::string& help) {
  return command->add_option(name, into, help + " (repeatable; or comma-separated)")
      ->type_name("PATTERN")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace

void register_diff(CLI::App& app) {
  auto flags = std::make_shared<DiffFlags>();
  auto* command = app.add_subcommand(
      "diff",
      "Compare two kvsim JSON reports leaf by leaf with tolerances (exit 0 within tolerance or "
      "improved, 1 on a regression, 2 on unusable input)");
  flags->command = command;
  command->add_option("BASE", flags->base, "Baseline JSON report")->required();
  command->add_option("NEW", flags->next, "New JSON report (same schema)")->required();
  command->add_option("--rtol", flags->rtol,
                      "Relative tolerance for numbers: |new-base| <= atol + rtol*|base| (0.01)");
  command->add_option("--atol", flags->atol, "Absolute tolerance for numbers (0)");
  add_repeatable(command, "--tol", flags->tol,
                 "Per-metric tolerance PATTERN=RTOL[:ATOL], e.g. summary.ttft_s.p99=0.05; the "
                 "last matching one wins")
      ->type_name("PATTERN=RTOL[:ATOL]");
  add_repeatable(command, "--ignore", flags->ignore,
                 "Skip paths matching PATTERN (glob: * within a segment, ** across, ? one char; "
                 "a subtree by its path), e.g. 'timeline' or 'runs[*].inputs'");
  add_repeatable(command, "--only", flags->only,
                 "Compare only the paths (and subtrees) matching PATTERN, e.g. "
                 "'deployments[*].max_rate_rps'");
  flags->higher_opt = add_repeatable(command, "--higher-is-better", flags->higher,
                                     "A rise beyond tolerance at PATTERN is an improvement");
  flags->lower_opt = add_repeatable(command, "--lower-is-better", flags->lower,
                                    "A fall beyond tolerance at PATTERN is an improvement");
  flags->either_opt = add_repeatable(command, "--two-sided", flags->either,
                                     "Any move beyond tolerance at PATTERN fails (undoes a "
                                     "default direction)");
  command->add_flag("--no-default-ignore", flags->no_default_ignore,
                    "Also compare kvsim_version, provenance fields (display names, source URLs, "
                    "calibration provenance, the sweep file) and plan's search probes");
  command->add_flag("--no-default-directions", flags->no_default_directions,
                    "Treat every number as two-sided (by default latency, cost and GPUs are "
                    "lower-is-better; capacity, throughput and attainment higher-is-better)");
  command->add_flag("--exact-paths", flags->exact_paths,
                    "Compare path-valued fields as strings (by default ./a, a and /x/a match)");
  command->add_option("--format", flags->output.format,
                      "Output format: table|json|csv|github (markdown for a CI job summary); "
                      "default: table on a terminal, else json");
  command->add_option("--out", flags->output.out_path,
                      "Also write the JSON result to this file (atomically: complete or absent)");
  command->callback([flags] { run_diff(*flags); });
}

}  // namespace kvsim::cli
