#include "cli/app.h"

#include <algorithm>
#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "common/strings.h"

namespace kvsim::cli {
namespace {

int g_exit_code = 0;

// ", did you mean 'simulate'?" for a misspelt subcommand, or for the first unknown --flag of the
// subcommand given; "" when nothing is close.
std::string typo_hint(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* command = &app;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') break;
    const auto subs = command->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) break;
    CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (CLI::App* sub : subs) {
      names.push_back(sub->get_name());
      if (sub->get_name() == arg) next = sub;
    }
    if (next == nullptr) return did_you_mean(arg, names);
    command = next;
  }
  std::vector<std::string> flags;
  for (const CLI::Option* o : command->get_options()) {
    for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
  }
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(flags.begin(), flags.end(), arg) != flags.end()) continue;
    std::string hint = did_you_mean(arg, flags);
    if (!hint.empty()) return hint;
  }
  return "";
}

}  // namespace

void set_exit_code(int code) {
  g_exit_code = code;
}
int exit_code() {
  return g_exit_code;
}

void add_output_flags(CLI::App* command, report::OutputOptions& options) {
  command->add_option("--format", options.format,
                      "Output format: table|json|csv (default: table on a terminal, else json)");
  command
      ->add_option("--out", options.out_path,
                   "Also write the JSON result to this file (atomically: complete or absent)")
      ->each([](const std::string& path) { check_output_path(path, "--out"); });
}

int run_cli(int argc, const char* const* argv) {
  g_exit_code = 0;
  CLI::App app{"kvsim: LLM serving simulator and capacity planner", "kvsim"};
  app.set_version_flag("--version", std::string("kvsim ") + KVSIM_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  register_kv(app);
  register_models(app);
  register_gpus(app);
  register_simulate(app);
  register_compare(app);
  register_plan(app);
  register_calibrate(app);
  register_cost(app);
  register_trace(app);
  register_diff(app);
  register_validate(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kvsim: error: " << e.what() << typo_hint(app, argc, argv) << "\n";
    if (argc <= 1) std::cerr << app.help();
    return kExitBadInput;
  } catch (const Error& e) {
    std::cout.flush();
    std::cerr << "kvsim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "kvsim: internal error: " << e.what() << "\n";
    return 3;
  }
  return g_exit_code;
}

}  // namespace kvsim::cli
