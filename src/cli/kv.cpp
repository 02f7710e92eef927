#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_kv(CLI::App& app) {
  auto* command = app.add_subcommand("kv", "KV-cache memory math for a model, precision and tensor-parallel split");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim kv' is not implemented yet (issue #2)");
  });
}

}  // namespace kvsim::cli
