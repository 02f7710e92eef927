#include "cli/app.h"

#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/error.h"

namespace kvsim::cli {
namespace {

int g_exit_code = 0;

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kvsim: error: " << e.what() << "\n";
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
