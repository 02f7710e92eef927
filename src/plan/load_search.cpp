#include "plan/load_search.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace kvsim::plan {
namespace {

void require(bool ok, const char* field, const std::string& message) {
  if (!ok) throw Error({"", 0, 0, field}, message);
}

bool positive_finite(double x) {
  return std::isfinite(x) && x > 0.0;
}

}  // namespace

void validate_search_options(const SearchOptions& o) {
  require(positive_finite(o.min_rate_rps), "--search-min-rate",
          "expected a positive number of requests/s");
  require(positive_finite(o.max_rate_rps), "--search-max-rate",
          "expected a positive number of requests/s");
  require(o.min_rate_rps <= o.max_rate_rps, "--search-max-rate",
          "expected at least --search-min-rate");
  require(positive_finite(o.start_rate_rps), "--search-start-rate",
          "expected a positive number of requests/s");
  require(std::isfinite(o.growth) && o.growth > 1.0, "--search-growth",
          "expected a factor greater than 1");
  require(std::isfinite(o.rel_tolerance) && o.rel_tolerance > 0.0 && o.rel_tolerance < 1.0,
          "--search-tolerance", "expected a relative tolerance in (0, 1)");
  require(o.max_probes >= 2, "--search-max-probes", "expected at least 2");
}

std::string_view search_status_name(SearchStatus status) {
  switch (status) {
    case SearchStatus::kFound:
      return "found";
    case SearchStatus::kNoneFeasible:
      return "none_feasible";
    case SearchStatus::kCapped:
      return "capped";
  }
  return "";
}

std::string SearchResult::limiting_slo() const {
  return above >= 0 ? probes[static_cast<std::size_t>(above)].verdict.limiting : std::string();
}

double SearchResult::fail_rate_rps() const {
  return above >= 0 ? probes[static_cast<std::size_t>(above)].rate_rps : 0.0;
}

SearchResult search_max_rate(const Evaluator& evaluate, const SearchOptions& o) {
  validate_search_options(o);
  SearchResult result;
  auto probe = [&](double rate) {
    ProbeRecord record{rate, evaluate(rate)};
    if (!record.verdict.ok() && record.verdict.limiting.empty()) {
      record.verdict.limiting = record.verdict.slo_met ? "queue_unstable" : "slo";
    }
    result.probes.push_back(std::move(record));
    return static_cast<int>(result.probes.size()) - 1;
  };
  auto held = [&](int i) { return result.probes[static_cast<std::size_t>(i)].verdict.ok(); };
  auto rate_of = [&](int i) { return result.probes[static_cast<std::size_t>(i)].rate_rps; };
  auto budget_left = [&] { return static_cast<int>(result.probes.size()) < o.max_probes; };

  int lo = -1;  // highest holding probe
  int hi = -1;  // lowest failing probe
  const double start = std::clamp(o.start_rate_rps, o.min_rate_rps, o.max_rate_rps);
  const int first = probe(start);
  if (held(first)) {
    lo = first;
    while (hi < 0 && budget_left()) {
      if (rate_of(lo) >= o.max_rate_rps) {
        result.status = SearchStatus::kCapped;
        result.best = lo;
        result.max_rate_rps = rate_of(lo);
        result.converged = true;
        return result;
      }
      const int next = probe(std::min(rate_of(lo) * o.growth, o.max_rate_rps));
      (held(next) ? lo : hi) = next;
    }
  } else {
    hi = first;
    while (lo < 0 && budget_left()) {
      if (rate_of(hi) <= o.min_rate_rps) {
        result.status = SearchStatus::kNoneFeasible;
        result.above = hi;
        result.converged = true;
        return result;
      }
      const int next = probe(std::max(rate_of(hi) / o.growth, o.min_rate_rps));
      (held(next) ? lo : hi) = next;
    }
  }
  if (lo < 0 || hi < 0) {  // probe budget spent while bracketing
    result.status = lo < 0 ? SearchStatus::kNoneFeasible : SearchStatus::kCapped;
    result.best = lo;
    result.above = hi;
    result.max_rate_rps = lo >= 0 ? rate_of(lo) : 0.0;
    return result;
  }
  while (rate_of(hi) - rate_of(lo) > o.rel_tolerance * rate_of(lo) && budget_left()) {
    const int mid = probe(0.5 * (rate_of(lo) + rate_of(hi)));
    (held(mid) ? lo : hi) = mid;
  }
  result.status = SearchStatus::kFound;
  result.best = lo;
  result.above = hi;
  result.max_rate_rps = rate_of(lo);
  result.converged = rate_of(hi) - rate_of(lo) <= o.rel_tolerance * rate_of(lo);
  return result;
}

}  // namespace kvsim::plan
