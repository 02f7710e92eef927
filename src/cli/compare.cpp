#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_compare(CLI::App& app) {
  auto* command = app.add_subcommand("compare", "Run one workload through several allocators/schedulers side by side");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim compare' is not implemented yet (issue #6)");
  });
}

}  // namespace kvsim::cli
