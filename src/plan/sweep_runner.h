#pragma once
// Runs N independent jobs (one per grid point) on all cores, and over MPI ranks when there are
// several, and returns their results in input order whatever the thread timing.
//
// Resume: with a results file, every finished job is appended to it as one JSON line
//   {"key":"<16 hex digits>","result":<the job's JSON>}\n
// in a single write() followed by fdatasync, so a line is either whole or torn (only the last
// line can be torn, by a crash mid-write). A later run with the same file reads it first, takes
// the result of every job whose key it finds instead of running that job again, drops a torn last
// line (truncating it away before appending), and ignores lines of keys it does not need (another
// grid's results may share the file). A complete line that is not such a record is an error.
//
// Determinism: results depend only on the keys and the job function; jobs with equal keys run
// once and share the result; the thread count, ranks, resume and timing never change them.
//
// MPI: the unique jobs are dealt round-robin over ranks (job u to rank u mod size); each rank runs
// its share on its threads, appending to the shared results file (O_APPEND: whole lines on a local
// file system); rank 0 gathers every result and returns them; the other ranks get an empty vector.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plan/cluster.h"

namespace kvsim::plan {

// A stable hash of a job's canonical inputs text (FNV-1a 64, then mix64), as 16 lowercase hex
// digits. Same text → same key on every platform and build.
std::string job_key(std::string_view canonical_inputs);

struct RunnerOptions {
  // Worker threads in this process; 0 = hardware concurrency divided by the ranks on this machine
  // (at least 1).
  int num_threads = 0;
  // Results file (JSON lines) to resume from and append to; empty = no resume.
  std::string results_path;
  // Draw a progress bar with ETA on stderr (the caller passes true only when stderr is a
  // terminal). Only rank 0 draws.
  bool progress = false;
  std::string progress_label = "sweep";
  // Ranks to shard over; nullptr = this process only.
  const Cluster* cluster = nullptr;
};

// Returns one result (compact JSON text, no newline) for job `index`. May run on any worker
// thread, concurrently with other jobs; must be a pure function of the job's inputs. Throwing
// stops the sweep: no new job starts, running ones finish (and are saved), and run_sweep rethrows
// the exception of the lowest failing index.
using JobFn = std::function<std::string(std::size_t index)>;

struct SweepStats {
  std::int64_t num_jobs = 0;     // keys.size()
  std::int64_t num_unique = 0;   // distinct keys
  std::int64_t num_resumed = 0;  // distinct keys found in the results file (all ranks)
  std::int64_t num_run = 0;      // jobs run by this process
  int num_threads = 1;           // worker threads this process used
  int num_ranks = 1;
};

// Runs job i for every distinct keys[i] not already in the results file and returns
// results[i] for every i (rank 0; other ranks get {}). Throws kvsim::Error when the results file
// cannot be read, written or is corrupt (file:line), when a job returns text that is not one line
// of JSON, or when a job on another rank failed; rethrows a job's own exception.
std::vector<std::string> run_sweep(const std::vector<std::string>& keys, const JobFn& job,
                                   const RunnerOptions& options, SweepStats* stats = nullptr);

// Draws "label [#####-----] 12/50  24%  elapsed 0:42  ETA 2:13" on stderr, redrawn in place at
// most every 100 ms and once more at the end. Thread-safe.
class ProgressBar {
 public:
  // `already_done` of `total` were done before this run (they do not count towards the ETA).
  ProgressBar(std::string label, std::int64_t total, std::int64_t already_done, bool enabled);
  ~ProgressBar();
  void tick();    // one more job finished
  void finish();  // final redraw and newline (also done by the destructor)

  // The bar's text for a state (no '\r'); `eta_s` < 0 = unknown.
  static std::string render(const std::string& label, std::int64_t done, std::int64_t total,
                            double elapsed_s, double eta_s);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kvsim::plan
