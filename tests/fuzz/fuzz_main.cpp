// libFuzzer entry point for one target (KVSIM_FUZZ_TARGET, set per executable by CMake).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kvsim::fuzz::Target* target = [] {
    const kvsim::fuzz::Target* t = kvsim::fuzz::find_target(KVSIM_FUZZ_TARGET);
    if (t == nullptr) {
      std::fprintf(stderr, "unknown fuzz target %s\n", KVSIM_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
