#pragma once
// Maximum sustainable load: the highest arrival rate at which a deployment meets its SLOs with a
// stable queue, found over an abstract evaluator (rate → verdict), so the algorithm is tested
// without a simulator and the planner plugs full simulations in.
//
// Algorithm: probe the start rate; bracket by geometric growth (×growth while the probe holds,
// ÷growth while it fails) until one rate holds and a higher one fails; then bisect the bracket
// until (fail − hold) <= rel_tolerance × hold. The answer is the highest rate that held; the probe
// at the lowest rate that failed names the first SLO to break above it. Every probe is a fresh
// evaluation; the search assumes (does not check) that holding is monotone in the rate.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::plan {

// What one probe concluded.
struct Verdict {
  bool slo_met = false;  // every SLO holds at this rate
  bool stable = false;   // the queue does not grow without bound
  // When !ok(): the first SLO that broke ("ttft_p99", "tpot_p99", "e2e_p99", "attainment") or
  // "queue_unstable"; empty when ok().
  std::string limiting;
  bool ok() const { return slo_met && stable; }
};

using Evaluator = std::function<Verdict(double rate_rps)>;

struct SearchOptions {
  double start_rate_rps = 1.0;  // first probe (clamped into [min, max])
  double growth = 2.0;          // bracketing factor, > 1
  // Bisection stops when (lowest failing − highest holding) <= rel_tolerance × highest holding.
  double rel_tolerance = 0.02;
  double min_rate_rps = 1e-3;  // nothing holds down to here → kNoneFeasible
  double max_rate_rps = 1e5;   // still holds here → kCapped (the answer is this bound)
  int max_probes = 60;         // hard stop (then converged = false)
};

// Throws kvsim::Error naming the option (field "--search-*") when out of range: start, min and
// max positive and finite with min <= max, growth > 1, 0 < rel_tolerance < 1, max_probes >= 2.
void validate_search_options(const SearchOptions& options);

enum class SearchStatus {
  kFound,         // a holding rate and a failing rate within the tolerance of each other
  kNoneFeasible,  // even min_rate_rps fails
  kCapped,        // max_rate_rps still holds
};
std::string_view search_status_name(SearchStatus status);  // "found", "none_feasible", "capped"

struct ProbeRecord {
  double rate_rps = 0.0;
  Verdict verdict;
};

struct SearchResult {
  SearchStatus status = SearchStatus::kNoneFeasible;
  double max_rate_rps = 0.0;  // highest rate that held; 0 when none did
  // Index in `probes` of the probe at max_rate_rps (-1 when none held) and of the lowest failing
  // probe above it (-1 when capped). For kNoneFeasible, `above` is the probe at min_rate_rps.
  int best = -1;
  int above = -1;
  bool converged = false;           // the tolerance was reached (or the status is final)
  std::vector<ProbeRecord> probes;  // in the order they ran
  // The first SLO to break above max_rate_rps (probes[above].verdict.limiting), or "" if capped.
  std::string limiting_slo() const;
  // The rate of the lowest failing probe (0 when capped).
  double fail_rate_rps() const;
};

// Runs the search. Each probe calls `evaluate` once, in order, on the calling thread (a caller
// that keeps per-probe metrics can push them from inside `evaluate`: probe k is the k-th call).
SearchResult search_max_rate(const Evaluator& evaluate, const SearchOptions& options);

}  // namespace kvsim::plan
