#include "sim/slo.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "sim/metrics.h"

namespace kvsim::sim {

std::string LatencyTarget::name() const {
  return latency_slo_name(metric_name, percentile);
}

std::array<LatencyTarget, 3> latency_targets(const SloOptions& slo) {
  return {LatencyTarget{SloMetric::kTtft, "ttft", slo.ttft_ns,
                        slo.ttft_percentile.value_or(slo.percentile)},
          LatencyTarget{SloMetric::kTpot, "tpot", slo.tpot_ns,
                        slo.tpot_percentile.value_or(slo.percentile)},
          LatencyTarget{SloMetric::kE2e, "e2e", slo.e2e_ns,
                        slo.e2e_percentile.value_or(slo.percentile)}};
}

std::string latency_slo_name(const std::string& metric, double percentile) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", percentile);
  return metric + "_p" + buf;
}

void validate_slo(const SloOptions& slo) {
  auto flag_error = [](const char* flag, const std::string& message) {
    return Error({"", 0, 0, flag}, message);
  };
  if (slo.ttft_ns < 0) throw flag_error("--slo-ttft", "expected a non-negative time");
  if (slo.tpot_ns < 0) throw flag_error("--slo-tpot", "expected a non-negative time");
  if (slo.e2e_ns < 0) throw flag_error("--slo-e2e", "expected a non-negative time");
  for (const LatencyTarget& t : latency_targets(slo)) {
    if (!(t.percentile > 0.0 && t.percentile <= 100.0)) {
      throw flag_error("--slo-percentile",
                       "expected a number in (0, 100], got " + std::to_string(t.percentile));
    }
  }
  if (!(slo.attainment >= 0.0 && slo.attainment <= 1.0)) {
    throw flag_error("--slo-attainment", "expected a fraction in [0, 1]");
  }
}

bool request_meets(const SloOptions& slo, TimeNs ttft_ns, TimeNs e2e_ns,
                   std::int64_t output_tokens) {
  if (slo.ttft_ns != 0 && ttft_ns > slo.ttft_ns) return false;
  if (slo.e2e_ns != 0 && e2e_ns > slo.e2e_ns) return false;
  if (slo.tpot_ns != 0 && output_tokens > 1 && e2e_ns - ttft_ns > slo.tpot_ns * (output_tokens - 1))
    return false;
  return true;
}

double slo_attainment(const Metrics& m) {
  return m.arrived > 0 ? static_cast<double>(m.slo_good) / static_cast<double>(m.arrived) : 0.0;
}

SloObservation observe(const Metrics& m) {
  SloObservation o;
  o.latency_ns = [&m](SloMetric metric, double q) {
    switch (metric) {
      case SloMetric::kTtft:
        return m.ttft.percentile(q);
      case SloMetric::kTpot:
        return m.tpot.percentile(q);
      case SloMetric::kE2e:
        break;
    }
    return m.e2e.percentile(q);
  };
  o.attainment = slo_attainment(m);
  return o;
}

SloVerdict check_slos(const SloOptions& slo, const SloObservation& observed) {
  SloVerdict v;
  double worst = 1.0;
  auto consider = [&](double ratio, std::string name) {
    if (!(ratio <= 1.0)) {  // NaN counts as broken
      v.met = false;
      if (v.limiting.empty() || ratio > worst) {
        worst = std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio;
        v.limiting = std::move(name);
      }
    }
  };
  for (const LatencyTarget& t : latency_targets(slo)) {
    if (!t.active()) continue;
    consider(observed.latency_ns(t.metric, t.percentile) / static_cast<double>(t.target_ns),
             t.name());
  }
  if (slo.attainment > 0) {
    const double ratio = observed.attainment > 0 ? slo.attainment / observed.attainment
                                                 : std::numeric_limits<double>::infinity();
    consider(ratio, "attainment");
  }
  return v;
}

}  // namespace kvsim::sim
