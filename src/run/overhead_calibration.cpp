#include "run/overhead_calibration.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/units.h"
#include "run/run.h"

namespace kvsim::run {
namespace {

using cost::OverheadRow;
using cost::OverheadTerms;

OverheadTerms plus(OverheadTerms a, const OverheadTerms& b, double scale = 1.0) {
  for (std::size_t j = 0; j < a.size(); ++j) a[j] += scale * b[j];
  return a;
}

OverheadTerms scaled(OverheadTerms a, double scale) {
  for (double& x : a) x *= scale;
  return a;
}

double dot(const OverheadTerms& a, const OverheadTerms& b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j) s += a[j] * b[j];
  return s;
}

// What the simulation gave one request: its latencies and their sensitivities to the terms.
struct SimulatedRequest {
  bool finished = false;
  double ttft_s = 0, e2e_s = 0;
  OverheadTerms ttft{}, decode{};  // d(TTFT) / dθ and d(decode time) / dθ
};

// Follows every engine's steps and records each finished request's sensitivities (see the
// header). Keeps one entry per step: a calibration replays runs of thousands of requests, not
// weeks of traffic.
class StepSensitivity final : public sim::SimObserver {
 public:
  // `frontend_ns`: the front end's latency the simulation ran with (a request joins its engine
  // that long after its arrival).
  StepSensitivity(std::size_t num_requests, TimeNs frontend_ns)
      : frontend_ns_(frontend_ns), requests_(num_requests) {}

  bool wants_steps() const override { return true; }
  void on_step(const sim::StepEvent& e) override {
    if (e.engine >= engines_.size()) engines_.resize(e.engine + 1);
    Engine& g = engines_[e.engine];
    OverheadTerms f{1.0, 0.0, 0.0, 0.0};
    for (const cost::PrefillChunk& ch : e.batch->prefills) {
      if (ch.num_tokens <= 0) continue;
      f[1] += 1;
      f[2] += static_cast<double>(ch.num_tokens);
    }
    f[1] += static_cast<double>(e.batch->decode_context_tokens.size());
    g.starts.push_back(e.start_ns);
    g.ends.push_back(e.end_ns);
    g.features.push_back(f);
    g.before.push_back(g.total);
    g.total = plus(g.total, f);
  }

  void on_request_end(const sim::Request& r) override {
    if (r.id >= requests_.size() || r.state != sim::RequestState::kFinished) return;
    if (r.replica >= engines_.size()) return;
    const Engine& g = engines_[r.replica];
    const auto step_ending = [&g](TimeNs t) {
      const auto it = std::lower_bound(g.ends.begin(), g.ends.end(), t);
      return it != g.ends.end() && *it == t ? static_cast<std::size_t>(it - g.ends.begin())
                                            : g.ends.size();
    };
    const std::size_t first = step_ending(r.first_token_ns);
    const std::size_t last = step_ending(r.finish_ns);
    if (first == g.ends.size() || last == g.ends.size()) return;
    // The step running when the request joined its engine counts for the part after that.
    const TimeNs joined = r.arrival_ns + frontend_ns_;
    const auto k0 = static_cast<std::size_t>(
        std::upper_bound(g.ends.begin(), g.ends.end(), joined) - g.ends.begin());
    const double span = static_cast<double>(g.ends[k0] - g.starts[k0]);
    const double part =
        g.starts[k0] >= joined || span <= 0 ? 1.0 : static_cast<double>(g.ends[k0] - joined) / span;
    SimulatedRequest& s = requests_[r.id];
    s.finished = true;
    s.ttft_s = ns_to_seconds(r.first_token_ns - r.arrival_ns);
    s.e2e_s = ns_to_seconds(r.finish_ns - r.arrival_ns);
    const auto through = [&g](std::size_t k) { return plus(g.before[k], g.features[k]); };
    s.ttft = plus(plus(through(first), g.before[k0], -1.0), g.features[k0], part - 1.0);
    s.ttft[3] = 1.0;  // the front end's latency, once per request (the steps carry none)
    s.decode = plus(through(last), through(first), -1.0);
  }

  const std::vector<SimulatedRequest>& requests() const { return requests_; }

 private:
  struct Engine {
    OverheadTerms total{};  // Σ f over the steps so far
    // Per step, in order (an engine runs one step at a time, so `ends` increases): its start,
    // end, features and the Σ f of the steps before it.
    std::vector<TimeNs> starts, ends;
    std::vector<OverheadTerms> features, before;
  };
  TimeNs frontend_ns_ = 0;
  std::vector<Engine> engines_;
  std::vector<SimulatedRequest> requests_;
};

// One round's simulation of one case.
std::vector<SimulatedRequest> simulate(const ReplayCase& c, const OverheadTerms& terms) {
  ResolvedScenario s = *c.scenario;
  set_overhead_terms(s.deployment.hardware->cost, terms);
  s.cost.roofline.step_overhead_s.reset();
  s.sim.frontend_latency_ns = seconds_to_ns(terms[3]);
  StepSensitivity observer(c.run->requests.size(), s.sim.frontend_latency_ns);
  (void)run::run(s, &observer);
  return observer.requests();
}

// A row relative to the real value: features · θ' ≈ (real − sim + features · θ) / real.
void add_row(std::vector<OverheadRow>& rows, double real, double sim, const OverheadTerms& sens,
             const OverheadTerms& terms) {
  if (!(real > 0)) return;
  OverheadRow row;
  for (std::size_t j = 0; j < sens.size(); ++j) row.features[j] = sens[j] / real;
  row.target = (real - sim + dot(sens, terms)) / real;
  rows.push_back(row);
}

// TTFT rows are summed over groups of this many requests of similar prompt length: one
// request's TTFT jumps by a whole step when a step boundary moves past its arrival, a group's
// mean does not.
constexpr std::size_t kTtftGroup = 8;

struct TtftItem {
  std::int64_t prompt = 0;
  std::size_t index = 0;
  double real = 0, sim = 0;
  OverheadTerms sens{};
};

// One row per group of kTtftGroup TTFTs (by prompt length, then order): the relative error of
// the group's mean, weighted by √(group size) like that many rows.
void add_ttft_rows(std::vector<TtftItem> items, const OverheadTerms& terms,
                   std::vector<OverheadRow>& rows) {
  std::sort(items.begin(), items.end(), [](const TtftItem& a, const TtftItem& b) {
    return a.prompt != b.prompt ? a.prompt < b.prompt : a.index < b.index;
  });
  for (std::size_t g = 0; g < items.size(); g += kTtftGroup) {
    const std::size_t end = std::min(items.size(), g + kTtftGroup);
    double real = 0, sim = 0;
    OverheadTerms sens{};
    for (std::size_t k = g; k < end; ++k) {
      real += items[k].real;
      sim += items[k].sim;
      sens = plus(sens, items[k].sens);
    }
    add_row(rows, real, sim, sens, terms);
    const double w = std::sqrt(static_cast<double>(end - g));
    for (double& f : rows.back().features) f *= w;
    rows.back().target *= w;
  }
}

void add_rows(const trace::RealRun& run, const std::vector<SimulatedRequest>& sim,
              const OverheadTerms& terms, std::vector<OverheadRow>& rows) {
  std::vector<TtftItem> ttft;
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const trace::RealRequest& r = run.requests[i];
    const SimulatedRequest& s = sim[i];
    if (r.failed || !s.finished) continue;
    if (r.ttft_s > 0) ttft.push_back({r.prompt_tokens, i, r.ttft_s, s.ttft_s, s.ttft});
    if (r.tpot_s > 0 && r.output_tokens > 1) {
      const double n = static_cast<double>(r.output_tokens - 1);
      const OverheadTerms per_token = scaled(s.decode, 1.0 / n);
      add_row(rows, r.tpot_s, (s.e2e_s - s.ttft_s) / n, per_token, terms);
    }
    if (r.ttft_s <= 0 && r.tpot_s <= 0 && r.e2e_s > 0)
      add_row(rows, r.e2e_s, s.e2e_s, plus(s.ttft, s.decode), terms);
  }
  add_ttft_rows(std::move(ttft), terms, rows);
}

struct Pairs {
  std::vector<double> real, sim;
};

LatencyError latency_error(const Pairs& p) {
  LatencyError e;
  e.requests = static_cast<std::int64_t>(p.real.size());
  if (p.real.empty()) return e;
  double real_sum = 0, sim_sum = 0;
  std::vector<double> abs_err;
  for (std::size_t i = 0; i < p.real.size(); ++i) {
    real_sum += p.real[i];
    sim_sum += p.sim[i];
    abs_err.push_back(100.0 * std::abs(p.sim[i] - p.real[i]) / p.real[i]);
  }
  e.mean_error_pct = real_sum > 0 ? 100.0 * (sim_sum - real_sum) / real_sum : 0.0;
  std::sort(abs_err.begin(), abs_err.end());
  const std::size_t n = abs_err.size();
  e.median_abs_error_pct =
      n % 2 == 1 ? abs_err[n / 2] : 0.5 * (abs_err[n / 2 - 1] + abs_err[n / 2]);
  return e;
}

ReplayErrors replay_errors(std::span<const ReplayCase> cases,
                           const std::vector<std::vector<SimulatedRequest>>& sims) {
  Pairs ttft, tpot, e2e;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto& reqs = cases[c].run->requests;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const trace::RealRequest& r = reqs[i];
      const SimulatedRequest& s = sims[c][i];
      if (r.failed || !s.finished) continue;
      if (r.ttft_s > 0) {
        ttft.real.push_back(r.ttft_s);
        ttft.sim.push_back(s.ttft_s);
      }
      if (r.tpot_s > 0 && r.output_tokens > 1) {
        tpot.real.push_back(r.tpot_s);
        tpot.sim.push_back((s.e2e_s - s.ttft_s) / static_cast<double>(r.output_tokens - 1));
      }
      if (r.e2e_s > 0) {
        e2e.real.push_back(r.e2e_s);
        e2e.sim.push_back(s.e2e_s);
      }
    }
  }
  return {latency_error(ttft), latency_error(tpot), latency_error(e2e)};
}

void check_cases(std::span<const ReplayCase> cases) {
  if (cases.empty()) throw Error(ErrorLocation{"", 0, 0, "--from-run"}, "expected a real run");
  for (const ReplayCase& c : cases) {
    if (!c.scenario->deployment.hardware) {
      throw Error(ErrorLocation{"", 0, 0, "--gpu"},
                  "missing required flag; expected the GPU whose profile gets the overheads");
    }
    if (c.scenario->cost.kind != cost::CostModelKind::kRoofline) {
      throw Error(ErrorLocation{"", 0, 0, "--cost-model"},
                  "expected roofline: the overheads are the roofline model's (the linear model "
                  "has its own coefficients)");
    }
    if (c.scenario->cost.roofline.async_scheduling) {
      // The rows are first-order sensitivities of latencies that the terms add to; with async
      // scheduling a step waits for the host only where it outlasts the GPU.
      throw Error(ErrorLocation{"", 0, 0, "--async-scheduling"},
                  "the overhead fit needs the host's time to add to every step; fit a run "
                  "served without async scheduling (vLLM 0.14 on schedules asynchronously "
                  "unless served with --no-async-scheduling: give --async-scheduling=false)");
    }
  }
}

}  // namespace

cost::OverheadTerms overhead_terms(const model::CostProfile& p) {
  return {p.step_overhead_s, p.seq_overhead_s, p.prefill_token_overhead_s, p.frontend_latency_s};
}

void set_overhead_terms(model::CostProfile& p, const cost::OverheadTerms& t) {
  p.step_overhead_s = t[0];
  p.seq_overhead_s = t[1];
  p.prefill_token_overhead_s = t[2];
  p.frontend_latency_s = t[3];
}

OverheadCalibration calibrate_overheads(std::span<const ReplayCase> cases,
                                        const OverheadCalibrationOptions& options) {
  check_cases(cases);
  OverheadCalibration out;
  const ResolvedScenario& first = *cases.front().scenario;
  out.prior_s = overhead_terms(first.deployment.hardware->cost);
  if (first.cost.roofline.step_overhead_s) out.prior_s[0] = *first.cost.roofline.step_overhead_s;
  out.prior_s[3] = ns_to_seconds(first.sim.frontend_latency_ns);  // --frontend-latency-us's
  OverheadTerms terms = out.prior_s;
  double best_rms = 0;
  for (int round = 0; round < std::max(1, options.rounds); ++round) {
    std::vector<std::vector<SimulatedRequest>> sims;
    std::vector<OverheadRow> rows;
    for (const ReplayCase& c : cases) {
      sims.push_back(simulate(c, terms));
      add_rows(*c.run, sims.back(), terms, rows);
    }
    if (rows.empty()) {
      throw Error(ErrorLocation{"", 0, 0, "--from-run"},
                  "no request with a measured TTFT, TPOT or E2E finished in the replay: nothing "
                  "to fit");
    }
    ++out.simulations;
    const double rms = cost::overhead_rms(rows, terms);
    out.rms_by_round.push_back(rms);
    OverheadTerms next;
    if (round == 0 || rms < best_rms) {
      best_rms = rms;
      out.fitted_s = terms;
      out.after = replay_errors(cases, sims);
      if (round == 0) out.before = out.after;
      const cost::OverheadFit fit = cost::fit_overheads(rows, out.prior_s);
      out.determined = fit.determined;
      out.rows = static_cast<std::int64_t>(rows.size());
      next = fit.terms_s;
    } else {
      // Worse than the best: the step overshot (the batch grows with the overhead, which the
      // first-order rows do not see). Halve it.
      next = scaled(plus(out.fitted_s, terms), 0.5);
    }
    bool moved = false;
    for (std::size_t j = 0; j < terms.size(); ++j) {
      moved =
          moved || std::abs(next[j] - out.fitted_s[j]) > 1e-3 * std::abs(out.fitted_s[j]) + 1e-9;
    }
    if (!moved) break;
    terms = next;
  }
  return out;
}

}  // namespace kvsim::run
