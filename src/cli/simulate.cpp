#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_simulate(CLI::App& app) {
  auto* command = app.add_subcommand("simulate", "Replay a trace or synthetic workload through one deployment");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim simulate' is not implemented yet (issue #6)");
  });
}

}  // namespace kvsim::cli
