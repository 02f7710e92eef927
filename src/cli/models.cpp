#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_models(CLI::App& app) {
  auto* command = app.add_subcommand("models", "List the shipped model configs");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim models' is not implemented yet (issue #2)");
  });
}

}  // namespace kvsim::cli
