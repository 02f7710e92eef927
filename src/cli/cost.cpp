#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_cost(CLI::App& app) {
  auto* command = app.add_subcommand("cost", "Step time and per-op breakdown of one engine step");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim cost' is not implemented yet (issue #5)");
  });
}

}  // namespace kvsim::cli
