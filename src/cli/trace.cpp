#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_trace(CLI::App& app) {
  auto* command = app.add_subcommand("trace", "Trace tools: stats, gen, convert");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim trace' is not implemented yet (issue #3)");
  });
}

}  // namespace kvsim::cli
