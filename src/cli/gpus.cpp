#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_gpus(CLI::App& app) {
  auto* command = app.add_subcommand("gpus", "List the shipped hardware configs");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim gpus' is not implemented yet (issue #2)");
  });
}

}  // namespace kvsim::cli
