#include "cli/commands.h"
#include "common/error.h"

namespace kvsim::cli {

void register_calibrate(CLI::App& app) {
  auto* command = app.add_subcommand("calibrate", "Measure kernels on the local GPU, or fit a profile from a measurement CSV");
  command->allow_extras();
  command->callback([] {
    throw Error("'kvsim calibrate' is not implemented yet (issue #5)");
  });
}

}  // namespace kvsim::cli
