#pragma once
// One entry point per input format kvsim parses, shared by the libFuzzer harnesses (tests/fuzz/
// fuzz_main.cpp, built with -DKVSIM_FUZZ=ON and clang) and by the corpus test
// (tests/fuzz/test_fuzz_corpus.cpp, in kvsim_tests). Each feeds `data` to the real parser and
// swallows kvsim::Error, the one exception bad input may raise; anything else escaping (another
// exception, a crash, a hang) is a bug.

#include <string>
#include <string_view>
#include <vector>

namespace kvsim::fuzz {

struct Target {
  const char* name;  // also the corpus folder: tests/fuzz/corpus/<name>/
  void (*run)(std::string_view data);
};

// Every target: scenario, grid, model, hardware, cost_profile, hf_config, diff_json,
// trace_native, trace_azure, trace_burstgpt, trace_vidur, trace_mooncake, calibrate_csv,
// replay_run (the real-run readers of kvsim validate, and inference-perf's configuration).
const std::vector<Target>& targets();

// The target named `name`, or nullptr.
const Target* find_target(std::string_view name);

}  // namespace kvsim::fuzz
