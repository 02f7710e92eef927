// Synthetic workloads: statistical properties over many seeds, exact determinism.
#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include "trace/generator.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"
#include "trace_test_util.h"

using namespace kvsim;
using namespace kvsim::trace;
using kvsim::test::read_all;

namespace {

WorkloadOptions synthetic(ArrivalProcess arrival, double rate, std::int64_t n, std::uint64_t seed) {
  WorkloadOptions w;
  w.source = WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = arrival;
  w.synthetic.rate_rps = rate;
  w.synthetic.num_requests = n;
  w.synthetic.seed = seed;
  w.synthetic.prompt = parse_length_dist("128", {});
  w.synthetic.output = parse_length_dist("16", {});
  return w;
}

TraceStats stats_of(const WorkloadOptions& w) {
  auto reader = Workload(w).open();
  return compute_trace_stats(*reader);
}

std::vector<std::int64_t> sample_lengths(const std::string& spec, int n, std::uint64_t seed) {
  LengthSampler sampler(parse_length_dist(spec, {}), nullptr);
  Rng rng(seed);
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(rng));
  return out;
}

double mean_of(const std::vector<std::int64_t>& xs) {
  double s = 0;
  for (const auto x : xs) s += static_cast<double>(x);
  return s / static_cast<double>(xs.size());
}

}  // namespace

TEST_CASE("Poisson arrivals: mean rate and CV 1 within statistical tolerance over 40 seeds",
          "[trace][generator]") {
  const int n = 2000;
  double rate_sum = 0, cv_sum = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const TraceStats s = stats_of(synthetic(ArrivalProcess::kPoisson, 5.0, n, seed));
    REQUIRE(s.requests == n);
    REQUIRE(s.rate_rps);
    // One seed: the rate estimate's relative sd is 1/sqrt(n) = 2.2%; allow 5 sd.
    CHECK(std::fabs(*s.rate_rps / 5.0 - 1.0) < 5.0 / std::sqrt(n));
    CHECK(std::fabs(*s.interarrival_cv - 1.0) < 0.15);
    rate_sum += *s.rate_rps;
    cv_sum += *s.interarrival_cv;
  }
  // The mean over 40 seeds: sd 0.35% for the rate.
  CHECK(rate_sum / 40 == Approx(5.0).epsilon(0.02));
  CHECK(cv_sum / 40 == Approx(1.0).epsilon(0.03));
}

TEST_CASE("Gamma arrivals: the requested CV (bursty) and rate over 40 seeds",
          "[trace][generator]") {
  const int n = 5000;
  for (const double cv : {0.5, 3.0}) {
    double rate_sum = 0, cv_sum = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      WorkloadOptions w = synthetic(ArrivalProcess::kGamma, 4.0, n, seed);
      w.synthetic.cv = cv;
      const TraceStats s = stats_of(w);
      REQUIRE(s.rate_rps);
      CHECK(std::fabs(*s.interarrival_cv / cv - 1.0) < 0.3);
      rate_sum += *s.rate_rps;
      cv_sum += *s.interarrival_cv;
    }
    CAPTURE(cv);
    CHECK(rate_sum / 40 == Approx(4.0).epsilon(0.03));
    CHECK(cv_sum / 40 == Approx(cv).epsilon(0.03));
  }
}

TEST_CASE("constant arrivals are exact: request i at round(i / rate)", "[trace][generator]") {
  const auto rs = read_all(*Workload(synthetic(ArrivalProcess::kConstant, 3.0, 10, 0)).open());
  REQUIRE(rs.size() == 10);
  CHECK(rs[0].arrival_ns == 0);
  CHECK(rs[1].arrival_ns == 333'333'333);
  CHECK(rs[2].arrival_ns == 666'666'667);
  CHECK(rs[3].arrival_ns == 1'000'000'000);
  CHECK(rs[9].arrival_ns == 3'000'000'000);
  const TraceStats s = stats_of(synthetic(ArrivalProcess::kConstant, 3.0, 1000, 0));
  CHECK(*s.interarrival_cv < 1e-8);
}

TEST_CASE("same seed, identical stream: another seed, another stream", "[trace][generator]") {
  WorkloadOptions w = synthetic(ArrivalProcess::kGamma, 2.0, 500, 7);
  w.synthetic.cv = 2.0;
  w.synthetic.prompt = parse_length_dist("lognormal:161.31:120:1:2048", {});
  w.synthetic.output = parse_length_dist("zipf:1.1:1:1000", {});
  w.synthetic.shared_prefix = {0.5, 3, 1024, 512};
  const Workload workload(w);
  const auto a = read_all(*workload.open());
  const auto b = read_all(*workload.open());  // the same Workload, reopened
  const auto c = read_all(*Workload(w).open());
  w.synthetic.seed = 8;
  const auto d = read_all(*Workload(w).open());
  REQUIRE(a.size() == 500);
  REQUIRE(b.size() == a.size());
  REQUIRE(c.size() == a.size());
  REQUIRE(d.size() == a.size());
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].arrival_ns == b[i].arrival_ns);
    REQUIRE(a[i].prompt_tokens == b[i].prompt_tokens);
    REQUIRE(a[i].output_tokens == b[i].output_tokens);
    REQUIRE(a[i].prefix_hashes == b[i].prefix_hashes);
    REQUIRE(a[i].arrival_ns == c[i].arrival_ns);
    REQUIRE(a[i].prefix_hashes == c[i].prefix_hashes);
    differs =
        differs || a[i].arrival_ns != d[i].arrival_ns || a[i].prompt_tokens != d[i].prompt_tokens;
  }
  CHECK(differs);
}

TEST_CASE("each purpose draws from its own stream: changing output lengths keeps arrivals",
          "[trace][generator]") {
  WorkloadOptions w = synthetic(ArrivalProcess::kPoisson, 2.0, 200, 3);
  w.synthetic.prompt = parse_length_dist("uniform:1:100", {});
  const auto a = read_all(*Workload(w).open());
  w.synthetic.output = parse_length_dist("normal:50:10", {});
  const auto b = read_all(*Workload(w).open());
  REQUIRE(a.size() == 200);
  REQUIRE(b.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].arrival_ns == b[i].arrival_ns);
    REQUIRE(a[i].prompt_tokens == b[i].prompt_tokens);
  }
}

TEST_CASE("a duration ends the workload before S seconds", "[trace][generator]") {
  WorkloadOptions w = synthetic(ArrivalProcess::kPoisson, 10.0, 0, 1);
  w.synthetic.duration_s = 60;
  const auto rs = read_all(*Workload(w).open());
  CHECK(rs.back().arrival_ns < 60 * kNsPerSecond);
  CHECK(std::fabs(static_cast<double>(rs.size()) - 600.0) < 5 * std::sqrt(600.0));
}

TEST_CASE("length distributions: bounds, means, clamping", "[trace][generator]") {
  const auto fixed = sample_lengths("fixed:42", 100, 1);
  CHECK(std::all_of(fixed.begin(), fixed.end(), [](auto x) { return x == 42; }));

  const auto uniform = sample_lengths("uniform:10:20", 100000, 1);
  CHECK(*std::min_element(uniform.begin(), uniform.end()) == 10);
  CHECK(*std::max_element(uniform.begin(), uniform.end()) == 20);
  CHECK(mean_of(uniform) == Approx(15.0).epsilon(0.005));

  const auto normal = sample_lengths("normal:300:100:1:400", 100000, 2);
  CHECK(*std::min_element(normal.begin(), normal.end()) >= 1);
  CHECK(*std::max_element(normal.begin(), normal.end()) == 400);  // clamped at the cap
  CHECK(std::count(normal.begin(), normal.end(), 400) > 10000);   // P(X > 400) ≈ 16%

  // ShareGPT's published means (PagedAttention, Table 1): input 161.31, output 337.99 tokens.
  const auto lognormal = sample_lengths("lognormal:161.31:150", 200000, 3);
  CHECK(mean_of(lognormal) == Approx(161.31).epsilon(0.01));
}

TEST_CASE("Zipf lengths follow P(k) ∝ k^-s from MIN to MAX", "[trace][generator]") {
  const double s = 1.2;
  const int n = 200000;
  const auto xs = sample_lengths("zipf:1.2:5:14", n, 4);  // ranks 1..10 at 5..14
  std::map<std::int64_t, int> counts;
  for (const auto x : xs) ++counts[x];
  CHECK(counts.begin()->first == 5);
  CHECK(counts.rbegin()->first == 14);
  double norm = 0;
  for (int k = 1; k <= 10; ++k) norm += std::pow(k, -s);
  for (int k = 1; k <= 10; ++k) {
    const double p = std::pow(k, -s) / norm;
    const double expected = p * n;
    const double sd = std::sqrt(n * p * (1 - p));
    CAPTURE(k);
    CHECK(std::fabs(counts[4 + k] - expected) < 5 * sd);
  }
  // s = 1 (the log case of the inversion) stays in range and favours small ranks.
  const auto harmonic = sample_lengths("zipf:1:1:1000", 20000, 5);
  CHECK(*std::max_element(harmonic.begin(), harmonic.end()) <= 1000);
  CHECK(std::count(harmonic.begin(), harmonic.end(), 1) >
        std::count(harmonic.begin(), harmonic.end(), 2));
}

TEST_CASE("empirical histograms resample in proportion to the counts", "[trace][generator]") {
  IntQuantiles q;
  q.add(10, 1);
  q.add(20, 3);
  q.add(1000, 6);
  EmpiricalHistogram h(q);
  Rng rng(9);
  std::map<std::int64_t, int> counts;
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[h.sample(rng)];
  CHECK(counts.size() == 3);
  CHECK(counts[10] == Approx(0.1 * n).margin(5 * std::sqrt(0.09 * n)));
  CHECK(counts[20] == Approx(0.3 * n).margin(5 * std::sqrt(0.21 * n)));
  CHECK(counts[1000] == Approx(0.6 * n).margin(5 * std::sqrt(0.24 * n)));
}

TEST_CASE("lengths_from: the trace's length mix at a new rate, one option", "[trace][generator]") {
  std::string csv = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 100; ++i) {
    csv += std::to_string(i) + "," + (i % 4 == 0 ? "1000" : "10") + "," +
           std::to_string(1 + i % 2) + "\n";
  }
  const auto path = kvsim::test::trace_file("mix.csv", csv);
  WorkloadOptions w;
  w.source = WorkloadOptions::Source::kSynthetic;
  w.synthetic.lengths_from.path = path;
  w.synthetic.seed = 1;
  w.transforms.rate_scale = 3.0;
  const Workload workload(w);
  // Defaults resolved from the trace: its rate (99 / 99 s = 1/s) and count, empirical lengths.
  CHECK(workload.resolved().synthetic.rate_rps == 1.0);
  CHECK(workload.resolved().synthetic.num_requests == 100);
  CHECK(workload.resolved().synthetic.prompt.kind == LengthKind::kEmpirical);
  CHECK(workload.resolved().synthetic.lengths_from.format == TraceFormat::kNative);
  const auto rs = read_all(*workload.open());
  REQUIRE(rs.size() == 100);
  for (const auto& r : rs) {
    REQUIRE((r.prompt_tokens == 10 || r.prompt_tokens == 1000));
    REQUIRE((r.output_tokens == 1 || r.output_tokens == 2));
  }
  // Over many requests the mix matches: 25% long prompts.
  w.synthetic.num_requests = 40000;
  const TraceStats s = stats_of(w);
  CHECK(s.prompt_tokens.mean == Approx(0.25 * 1000 + 0.75 * 10).epsilon(0.03));
  CHECK(*s.rate_rps == Approx(3.0).epsilon(0.03));
}

TEST_CASE("replayed arrivals keep a trace's timestamps with synthetic lengths",
          "[trace][generator]") {
  const auto path = kvsim::test::trace_file("t.csv",
                                            "arrival_s,prompt_tokens,output_tokens\n"
                                            "0,5,5\n0.5,5,5\n0.5,5,5\n2,5,5\n");
  WorkloadOptions w;
  w.source = WorkloadOptions::Source::kSynthetic;
  w.synthetic.arrival = ArrivalProcess::kReplay;
  w.synthetic.arrival_trace.path = path;
  w.synthetic.prompt = parse_length_dist("77", {});
  w.synthetic.output = parse_length_dist("uniform:1:3", {});
  w.transforms.rate_scale = 2.0;
  const auto rs = read_all(*Workload(w).open());
  REQUIRE(rs.size() == 4);
  CHECK(rs[1].arrival_ns == 250'000'000);
  CHECK(rs[2].arrival_ns == 250'000'000);
  CHECK(rs[3].arrival_ns == 1'000'000'000);
  CHECK(rs[3].prompt_tokens == 77);
}

TEST_CASE("shared prefixes: a fraction of requests share a system prompt's blocks",
          "[trace][generator]") {
  WorkloadOptions w = synthetic(ArrivalProcess::kPoisson, 5.0, 20000, 11);
  w.synthetic.prompt = parse_length_dist("100", {});
  w.synthetic.shared_prefix = {0.6, 4, 1100, 512};  // 2 whole blocks shared, the 3rd mixed
  const auto rs = read_all(*Workload(w).open());
  std::int64_t with_prompt = 0;
  std::map<std::uint64_t, int> first_ids;
  for (const auto& r : rs) {
    REQUIRE(r.prefix_block_tokens == 512);
    REQUIRE(static_cast<std::int64_t>(r.prefix_hashes.size()) == (r.prompt_tokens + 511) / 512);
    if (r.prompt_tokens == 1200) {
      ++with_prompt;
      REQUIRE(r.prefix_hashes.size() == 3);
      REQUIRE(r.prefix_hashes[0] < 8);  // K·2 shared ids: 0..7
      REQUIRE(r.prefix_hashes[1] == r.prefix_hashes[0] + 1);
      REQUIRE(r.prefix_hashes[2] >= 8);  // mixed block: unique
      ++first_ids[r.prefix_hashes[0]];
    } else {
      REQUIRE(r.prompt_tokens == 100);
      REQUIRE(r.prefix_hashes[0] >= 8);
    }
  }
  const double n = static_cast<double>(rs.size());
  CHECK(static_cast<double>(with_prompt) == Approx(0.6 * n).margin(5 * std::sqrt(0.24 * n)));
  CHECK(first_ids.size() == 4);  // ids 0, 2, 4, 6: the four system prompts
  // The stats see the sharing: all but the first use of each prompt reuse 2 of 3 blocks.
  const TraceStats s = stats_of(w);
  REQUIRE(s.prefix_block_reuse_fraction);
  const double blocks = 3.0 * with_prompt + (n - with_prompt);
  CHECK(*s.prefix_block_reuse_fraction == Approx(2.0 * (with_prompt - 4) / blocks).epsilon(1e-12));
}

TEST_CASE("a prompt pool: every request repeats one of N prompts, whole, with its hashes",
          "[trace][generator]") {
  // aiperf's synthetic client: 5 prompts drawn once, each request picks one uniformly.
  WorkloadOptions w = synthetic(ArrivalProcess::kPoisson, 5.0, 5000, 3);
  w.synthetic.prompt = parse_length_dist("uniform:20:100", {});
  w.synthetic.output = parse_length_dist("uniform:1:50", {});
  w.synthetic.shared_prefix.block_tokens = 16;
  w.synthetic.prompt_pool = 5;
  const auto rs = read_all(*Workload(w).open());
  REQUIRE(rs.size() == 5000);
  // Entry -> its lengths and hashes (keyed by the first hash): exactly 5, each used ~1/5.
  std::map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> entries;
  std::map<std::uint64_t, int> uses;
  std::map<std::uint64_t, std::uint64_t> owner;  // hash -> the entry holding it
  for (const auto& r : rs) {
    REQUIRE(r.prefix_block_tokens == 16);
    REQUIRE(static_cast<std::int64_t>(r.prefix_hashes.size()) == (r.prompt_tokens + 15) / 16);
    const std::uint64_t key = r.prefix_hashes.front();
    const auto [it, fresh] = entries.emplace(key, std::pair{r.prompt_tokens, r.output_tokens});
    CHECK(it->second == std::pair{r.prompt_tokens, r.output_tokens});  // a repeat is whole
    ++uses[key];
    for (std::size_t i = 0; i < r.prefix_hashes.size(); ++i) {
      CHECK(r.prefix_hashes[i] == key + i);
      const auto [o, new_hash] = owner.emplace(r.prefix_hashes[i], key);
      CHECK(o->second == key);  // no hash is in two entries
    }
  }
  CHECK(entries.size() == 5);
  for (const auto& [key, n] : uses) CHECK(n == Approx(1000).margin(5 * std::sqrt(800.0)));
  // Deterministic; another seed draws other prompts.
  const auto again = read_all(*Workload(w).open());
  CHECK(again.front().prefix_hashes == rs.front().prefix_hashes);
  CHECK(again.back().prompt_tokens == rs.back().prompt_tokens);
  // The stats see the reuse: all but the first use of each entry.
  const TraceStats s = stats_of(w);
  REQUIRE(s.prefix_block_reuse_fraction);
  CHECK(*s.prefix_block_reuse_fraction > 0.99);
}

TEST_CASE("a prompt pool is validated: range, and not with shared system prompts",
          "[trace][generator]") {
  WorkloadOptions w = synthetic(ArrivalProcess::kPoisson, 5.0, 10, 3);
  w.synthetic.prompt_pool = -1;
  CHECK_THROWS_WITH(Workload(w),
                    Catch::Contains("synthetic.prompt_pool") && Catch::Contains("--prompt-pool"));
  w.synthetic.prompt_pool = 4;
  w.synthetic.shared_prefix = {0.5, 2, 1024, 512};
  CHECK_THROWS_WITH(Workload(w), Catch::Contains("does not combine"));
}
