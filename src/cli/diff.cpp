#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_diff(CLI::App& app) {
  auto* command = app.add_subcommand("diff", "Compare two JSON reports with tolerances (exit 1 on a regression)");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim diff' is not implemented yet (issue #7)");
  });
}

}  // namespace kvsim::cli
