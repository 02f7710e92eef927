#pragma once
// One register_* function per subcommand, each in its own file (cli/<name>.cpp). Each adds its
// subcommand, flags and callback to the app; callbacks throw kvsim::Error on bad input.

#include <CLI/CLI.hpp>

#include "report/output.h"

namespace kvsim::cli {

void register_kv(CLI::App& app);
void register_models(CLI::App& app);
void register_gpus(CLI::App& app);
void register_simulate(CLI::App& app);
void register_compare(CLI::App& app);
void register_plan(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_cost(CLI::App& app);
void register_trace(CLI::App& app);
void register_diff(CLI::App& app);
void register_validate(CLI::App& app);

// --format and --out, on every command.
void add_output_flags(CLI::App* command, report::OutputOptions& options);

// Exit code a command asks for besides 0 (e.g. `kvsim diff` sets 1 on a regression).
void set_exit_code(int code);
int exit_code();

}  // namespace kvsim::cli
