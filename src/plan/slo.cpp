#include "plan/slo.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"

namespace kvsim::plan {

void validate_slo(const SloSpec& slo) {
  const std::pair<const LatencySlo*, const char*> latencies[] = {
      {&slo.ttft, "--slo-ttft"}, {&slo.tpot, "--slo-tpot"}, {&slo.e2e, "--slo-e2e"}};
  for (const auto& [l, flag] : latencies) {
    if (!std::isfinite(l->target_s) || l->target_s < 0) {
      throw Error({"", 0, 0, flag}, "expected a non-negative number of milliseconds");
    }
    if (!std::isfinite(l->percentile) || l->percentile <= 0 || l->percentile > 100) {
      throw Error({"", 0, 0, "--slo-percentile"}, "expected a percentile in (0, 100]");
    }
  }
  if (!std::isfinite(slo.attainment) || slo.attainment < 0 || slo.attainment > 1) {
    throw Error({"", 0, 0, "--slo-attainment"}, "expected a fraction in [0, 1]");
  }
}

std::string latency_slo_name(const std::string& metric, double percentile) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", percentile);
  return metric + "_p" + buf;
}

bool request_meets(const SloSpec& slo, double ttft_s, double tpot_s, double e2e_s) {
  if (slo.ttft.active() && ttft_s > slo.ttft.target_s) return false;
  if (slo.tpot.active() && tpot_s >= 0 && tpot_s > slo.tpot.target_s) return false;
  if (slo.e2e.active() && e2e_s > slo.e2e.target_s) return false;
  return true;
}

Verdict check_slos(const SloSpec& slo, const SloObservation& observed) {
  Verdict v;
  v.stable = observed.stable;
  v.slo_met = true;
  double worst = 1.0;
  auto consider = [&](double ratio, std::string name) {
    if (!(ratio <= 1.0)) {  // NaN counts as broken
      v.slo_met = false;
      if (v.limiting.empty() || ratio > worst) {
        worst = std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio;
        v.limiting = std::move(name);
      }
    }
  };
  const std::tuple<const LatencySlo*, const std::function<double(double)>*, const char*>
      latencies[] = {{&slo.ttft, &observed.ttft_s, "ttft"},
                     {&slo.tpot, &observed.tpot_s, "tpot"},
                     {&slo.e2e, &observed.e2e_s, "e2e"}};
  for (const auto& [l, measure, metric] : latencies) {
    if (!l->active()) continue;
    consider((*measure)(l->percentile) / l->target_s, latency_slo_name(metric, l->percentile));
  }
  if (slo.attainment > 0) {
    const double ratio = observed.attainment > 0 ? slo.attainment / observed.attainment
                                                 : std::numeric_limits<double>::infinity();
    consider(ratio, "attainment");
  }
  if (v.slo_met && !v.stable) v.limiting = "queue_unstable";
  return v;
}

}  // namespace kvsim::plan
