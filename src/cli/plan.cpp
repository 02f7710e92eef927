#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_plan(CLI::App& app) {
  auto* command = app.add_subcommand("plan", "Capacity planning: best deployments and max load under SLOs");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim plan' is not implemented yet (issue #7)");
  });
}

}  // namespace kvsim::cli
