#include "cli/app.h"
#include "cli/variants.h"

int main(int argc, char** argv) {
  kvsim::cli::exec_sibling_if_needed(argc, argv);
  return kvsim::cli::run_cli(argc, argv);
}
