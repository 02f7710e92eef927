#pragma once
// The kvsim command line. run_cli is main() minus the process: tests call it in-process.

namespace kvsim::cli {

// Parses argv, runs the subcommand, prints errors. Returns the process exit code:
// 0 success, 1 a regression found by `kvsim diff`, 2 bad input (kvsim::Error or a bad flag),
// 3 an unexpected internal failure.
int run_cli(int argc, const char* const* argv);

}  // namespace kvsim::cli
