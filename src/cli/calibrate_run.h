#pragma once
// `kvsim calibrate --from-run FILE...`: fits a GPU profile's framework overheads (per step, per
// scheduled sequence, per prompt token, and the front end's latency per request) to real runs
// replayed through the deployment the settings flags describe (run/overhead_calibration.h has the
// mechanism), writes the profile with its provenance and prints the fit with the replay's errors
// before and after. JSON (kvsim.calibration/v1):
//   {profile (path written, or null), inputs{runs[{path, run_format, requests, arrivals,
//    concurrency (closed loop) | null, prompts ("distinct" or what they shared)}],
//    model, gpu, rounds, rows}, prior{<key>: us}, fitted{step_overhead_us, seq_overhead_us,
//    prefill_token_overhead_us, frontend_latency_us}, undetermined[<key>],
//    rms_relative_error_by_round[], validation{ttft|tpot|e2e: {before|after: {requests,
//    mean_error_pct, median_abs_error_pct}}}}
// Errors in percent: mean_error_pct = (mean simulated − mean real) / mean real, signed;
// median_abs_error_pct = the median over requests of |simulated − real| / real.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/replay_input.h"
#include "cli/setting_flags.h"

namespace kvsim::cli {

struct FromRunFlags {
  std::vector<std::string> runs;  // --from-run FILE (repeatable: fitted jointly)
  ReplayFlags replay;
  ReplayClient client;    // what every run's client did: --run-config, --max-concurrency, prompts
  std::string config;     // --config scenario.yaml (deployment and serving settings)
  SettingFlags settings;  // the settings table's flags, but --model and --gpu (calibrate's own)
  int rounds = 8;         // --rounds: simulations of every run, at most
  CLI::App* command = nullptr;
};

// What `kvsim calibrate` itself says about the output.
struct FromRunOutput {
  std::string gpu, model;  // --gpu, --model
  std::string out;         // --out: the profile
  std::string date;        // --date (empty: today)
  std::string format;      // --format
  std::string report;      // --report
};

// Registers --from-run, --rounds, --config, the replay and replay-client flags and the settings
// flags.
void add_from_run_flags(CLI::App* command, FromRunFlags& flags);

// Throws kvsim::Error at the first settings flag given without --from-run.
void check_no_from_run_flags(const FromRunFlags& flags);

void run_from_run(const FromRunFlags& flags, const FromRunOutput& output);

// The text of a base hardware YAML: a shipped one by name, else the file.
std::string hardware_yaml_text(const std::string& name_or_path);
// Today's date, UTC, ISO 8601.
std::string today_utc();

}  // namespace kvsim::cli
