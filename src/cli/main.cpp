#include "cli/app.h"

int main(int argc, char** argv) {
  return kvsim::cli::run_cli(argc, argv);
}
