#include "trace/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/assert.h"
#include "trace/field_parse.h"

namespace kvsim::trace {

EmpiricalHistogram::EmpiricalHistogram(const IntQuantiles& samples) {
  std::int64_t total = 0;
  for (const auto& [value, count] : samples.histogram()) {
    total += count;
    values_.push_back(value);
    cumulative_.push_back(total);
  }
}

std::int64_t EmpiricalHistogram::sample(Rng& rng) const {
  KVSIM_ASSERT(!values_.empty(), "EmpiricalHistogram::sample on an empty histogram");
  const std::int64_t r = rng.uniform_int(1, cumulative_.back());
  const auto it = std::lower_bound(cumulative_.begin(), cumulative_.end(), r);
  return values_[static_cast<std::size_t>(it - cumulative_.begin())];
}

namespace {

// log1p(x)/x and expm1(x)/x, continuous at 0.
double log1p_over_x(double x) {
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x / 2.0;
}
double expm1_over_x(double x) {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x / 2.0;
}

// Rejection-inversion sampling of Zipf ranks (Hörmann & Derflinger): h(x) = x^(-s), H an
// antiderivative of h, and H's inverse.
struct ZipfHat {
  double s;
  double h(double x) const { return std::exp(-s * std::log(x)); }
  double big_h(double x) const {
    const double lx = std::log(x);
    return expm1_over_x((1.0 - s) * lx) * lx;
  }
  double big_h_inv(double y) const {
    const double t = std::max(-1.0, y * (1.0 - s));
    return std::exp(log1p_over_x(t) * y);
  }
};

}  // namespace

LengthSampler::LengthSampler(const LengthDist& dist, const EmpiricalHistogram* empirical)
    : dist_(dist), empirical_(empirical) {
  if (dist_.kind == LengthKind::kLognormal) {
    const double ratio = dist_.stddev / dist_.mean;
    sigma_ = std::sqrt(std::log1p(ratio * ratio));
    mu_ = std::log(dist_.mean) - sigma_ * sigma_ / 2.0;
  }
  if (dist_.kind == LengthKind::kZipf) {
    // Ranks 1..n with P(k) ∝ k^(-s); H is an antiderivative of h(x) = x^(-s).
    const ZipfHat z{dist_.zipf_exponent};
    const double n = static_cast<double>(dist_.max - dist_.min + 1);
    zipf_h_x1_ = z.big_h(1.5) - 1.0;
    zipf_h_n_ = z.big_h(n + 0.5);
    zipf_s_ = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
  }
  KVSIM_ASSERT(dist_.kind != LengthKind::kEmpirical || (empirical_ && !empirical_->empty()),
               "LengthSampler: empirical distribution without a histogram");
}

std::int64_t LengthSampler::clamp(double x) const {
  const double hi = dist_.max > 0 ? static_cast<double>(dist_.max) : 1e18;
  const double rounded = std::nearbyint(std::clamp(x, static_cast<double>(dist_.min), hi));
  return static_cast<std::int64_t>(rounded);
}

std::int64_t LengthSampler::zipf(Rng& rng) const {
  const ZipfHat z{dist_.zipf_exponent};
  const auto n = static_cast<double>(dist_.max - dist_.min + 1);
  for (;;) {
    const double u = zipf_h_n_ + rng.uniform01() * (zipf_h_x1_ - zipf_h_n_);
    const double x = z.big_h_inv(u);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, n);
    if (k - x <= zipf_s_ || u >= z.big_h(k + 0.5) - z.h(k)) {
      return dist_.min + static_cast<std::int64_t>(k) - 1;
    }
  }
}

std::int64_t LengthSampler::sample(Rng& rng) const {
  switch (dist_.kind) {
    case LengthKind::kFixed:
      return dist_.value;
    case LengthKind::kUniform:
      return rng.uniform_int(dist_.min, dist_.max);
    case LengthKind::kNormal:
      return clamp(dist_.mean + dist_.stddev * rng.normal());
    case LengthKind::kLognormal:
      return clamp(std::exp(mu_ + sigma_ * rng.normal()));
    case LengthKind::kZipf:
      return zipf(rng);
    case LengthKind::kEmpirical:
      return empirical_->sample(rng);
  }
  KVSIM_ASSERT(false, "LengthSampler: unknown kind");
  return 0;
}

namespace {

// Stream ids for Rng::derive: each purpose has its own stream, so changing one distribution
// does not shift the draws of another.
enum : std::uint64_t {
  kArrivalStream = 1,
  kPromptStream,
  kOutputStream,
  kPrefixStream,
  kPoolStream
};

class SyntheticReader final : public TraceReader {
 public:
  SyntheticReader(const SyntheticOptions& options, std::shared_ptr<const EmpiricalLengths> lengths,
                  std::unique_ptr<TraceReader> arrivals)
      : options_(options),
        lengths_(std::move(lengths)),
        arrivals_(std::move(arrivals)),
        prompt_(options.prompt, lengths_ ? &lengths_->prompt : nullptr),
        output_(options.output, lengths_ ? &lengths_->output : nullptr),
        arrival_rng_(Rng::derive(options.seed, kArrivalStream)),
        prompt_rng_(Rng::derive(options.seed, kPromptStream)),
        output_rng_(Rng::derive(options.seed, kOutputStream)),
        prefix_rng_(Rng::derive(options.seed, kPrefixStream)),
        pool_rng_(Rng::derive(options.seed, kPoolStream)) {
    KVSIM_ASSERT(options.arrival != ArrivalProcess::kReplay || arrivals_ != nullptr,
                 "replay without an arrival trace");
    const auto& sp = options_.shared_prefix;
    if (sp.fraction > 0.0) {
      shared_blocks_ = sp.prompt_tokens / sp.block_tokens;
      next_unique_hash_ = static_cast<std::uint64_t>(sp.num_prompts * shared_blocks_);
    }
    if (options_.duration_s > 0.0) {
      duration_ns_ = static_cast<TimeNs>(std::llround(options_.duration_s * 1e9));
    }
    build_pool();
  }

  bool next(RequestSpec& out) override {
    if (options_.num_requests > 0 && count_ >= options_.num_requests) return false;
    TimeNs arrival = 0;
    if (!next_arrival(arrival)) return false;
    if (duration_ns_ > 0 && arrival >= duration_ns_) return false;
    out.id = static_cast<std::uint64_t>(count_);
    out.arrival_ns = arrival;
    out.session_id.clear();
    out.prefix_hashes.clear();
    out.prefix_block_tokens = 0;
    if (pool_.empty()) {
      out.prompt_tokens = prompt_.sample(prompt_rng_);
      out.output_tokens = output_.sample(output_rng_);
      add_shared_prefix(out);
    } else {
      take_from_pool(out);
    }
    ++count_;
    return true;
  }

  ReaderStats stats() const override {
    ReaderStats s;
    if (arrivals_) {
      s = arrivals_->stats();
      s.truncated_prompts = 0;
    }
    s.rows_read = arrivals_ ? s.rows_read : count_;
    s.requests = count_;
    return s;
  }

  std::string describe() const override {
    std::ostringstream out;
    out << "synthetic " << arrival_process_name(options_.arrival);
    if (options_.arrival == ArrivalProcess::kReplay) {
      out << " (" << arrivals_->describe() << ")";
    } else {
      if (options_.rate_rps == 0.0) {
        out << " rate=unlimited (all at time 0)";
      } else {
        out << " rate=" << options_.rate_rps << "/s";
      }
      if (options_.arrival == ArrivalProcess::kGamma) out << " cv=" << options_.cv;
    }
    out << " prompt=" << to_spec(options_.prompt) << " output=" << to_spec(options_.output);
    if (options_.shared_prefix.fraction > 0.0) {
      out << " shared_prefix=" << options_.shared_prefix.fraction << "x"
          << options_.shared_prefix.num_prompts << "x" << options_.shared_prefix.prompt_tokens;
    }
    if (options_.prompt_pool > 0) out << " prompt_pool=" << options_.prompt_pool;
    out << " seed=" << options_.seed;
    return out.str();
  }

  TraceColumns columns() const override {
    return {false, options_.shared_prefix.fraction > 0.0 || options_.prompt_pool > 0};
  }

 private:
  bool next_arrival(TimeNs& arrival) {
    // No rate (a closed loop's default, validate_workload allows it only there): every request
    // is ready at time 0 and the client's concurrency paces them.
    if (options_.rate_rps == 0.0 && options_.arrival != ArrivalProcess::kReplay) {
      arrival = 0;
      return true;
    }
    switch (options_.arrival) {
      case ArrivalProcess::kReplay: {
        if (!arrivals_->next(replay_scratch_)) return false;
        arrival = replay_scratch_.arrival_ns;
        return true;
      }
      case ArrivalProcess::kConstant: {
        const long double t =
            static_cast<long double>(count_) * 1e9L / static_cast<long double>(options_.rate_rps);
        arrival = static_cast<TimeNs>(std::llround(t));
        return true;
      }
      case ArrivalProcess::kPoisson:
      case ArrivalProcess::kGamma: {
        if (count_ > 0) {
          double gap_s = 0.0;
          if (options_.arrival == ArrivalProcess::kPoisson) {
            gap_s = arrival_rng_.exponential(options_.rate_rps);
          } else {
            const double shape = 1.0 / (options_.cv * options_.cv);
            gap_s = arrival_rng_.gamma(shape, 1.0 / (options_.rate_rps * shape));
          }
          const double gap_ns = std::min(gap_s * 1e9, 1e17);
          clock_ns_ += static_cast<TimeNs>(std::llround(gap_ns));
        }
        arrival = clock_ns_;
        return true;
      }
    }
    return false;
  }

  // The pool's entries, each with its lengths and its own range of prefix hashes, drawn from the
  // prompt and output streams as the same number of requests would draw them.
  void build_pool() {
    if (options_.prompt_pool <= 0) return;
    const std::int64_t block = options_.shared_prefix.block_tokens;
    pool_.reserve(static_cast<std::size_t>(options_.prompt_pool));
    std::uint64_t first_hash = 0;
    for (std::int64_t e = 0; e < options_.prompt_pool; ++e) {
      PoolEntry entry;
      entry.prompt_tokens = prompt_.sample(prompt_rng_);
      entry.output_tokens = output_.sample(output_rng_);
      entry.first_hash = first_hash;
      first_hash += static_cast<std::uint64_t>((entry.prompt_tokens + block - 1) / block);
      pool_.push_back(entry);
    }
  }

  void take_from_pool(RequestSpec& out) {
    const PoolEntry& entry = pool_[static_cast<std::size_t>(
        pool_rng_.uniform_int(0, static_cast<std::int64_t>(pool_.size()) - 1))];
    const std::int64_t block = options_.shared_prefix.block_tokens;
    out.prompt_tokens = entry.prompt_tokens;
    out.output_tokens = entry.output_tokens;
    const std::int64_t blocks = (entry.prompt_tokens + block - 1) / block;
    out.prefix_hashes.reserve(static_cast<std::size_t>(blocks));
    for (std::int64_t i = 0; i < blocks; ++i) {
      out.prefix_hashes.push_back(entry.first_hash + static_cast<std::uint64_t>(i));
    }
    out.prefix_block_tokens = block;
  }

  void add_shared_prefix(RequestSpec& out) {
    const auto& sp = options_.shared_prefix;
    if (sp.fraction <= 0.0) return;
    std::int64_t system_prompt = -1;
    // Two draws per request, always, so the stream does not depend on the outcome.
    const double u = prefix_rng_.uniform01();
    const std::int64_t k = prefix_rng_.uniform_int(0, sp.num_prompts - 1);
    if (u < sp.fraction) {
      system_prompt = k;
      out.prompt_tokens += sp.prompt_tokens;
    }
    const std::int64_t blocks = (out.prompt_tokens + sp.block_tokens - 1) / sp.block_tokens;
    out.prefix_hashes.reserve(static_cast<std::size_t>(blocks));
    for (std::int64_t i = 0; i < blocks; ++i) {
      if (system_prompt >= 0 && i < shared_blocks_) {
        out.prefix_hashes.push_back(static_cast<std::uint64_t>(system_prompt * shared_blocks_ + i));
      } else {
        out.prefix_hashes.push_back(next_unique_hash_++);
      }
    }
    out.prefix_block_tokens = sp.block_tokens;
  }

  SyntheticOptions options_;
  std::shared_ptr<const EmpiricalLengths> lengths_;
  std::unique_ptr<TraceReader> arrivals_;
  LengthSampler prompt_, output_;
  Rng arrival_rng_, prompt_rng_, output_rng_, prefix_rng_, pool_rng_;
  struct PoolEntry {
    std::int64_t prompt_tokens = 0, output_tokens = 0;
    std::uint64_t first_hash = 0;  // its blocks' hashes are first_hash, first_hash + 1, ...
  };
  std::vector<PoolEntry> pool_;  // SyntheticOptions::prompt_pool entries
  std::int64_t count_ = 0;
  TimeNs clock_ns_ = 0;
  TimeNs duration_ns_ = 0;  // 0 = no limit
  std::int64_t shared_blocks_ = 0;
  std::uint64_t next_unique_hash_ = 0;
  RequestSpec replay_scratch_;
};

class TransformReader final : public TraceReader {
 public:
  TransformReader(std::unique_ptr<TraceReader> source, const TransformOptions& transforms)
      : source_(std::move(source)), t_(transforms) {}

  bool next(RequestSpec& out) override {
    if (done_ || (t_.max_requests > 0 && emitted_ >= t_.max_requests)) return false;
    while (source_->next(out)) {
      if (out.arrival_ns < t_.window_start_ns) continue;
      if (out.arrival_ns >= t_.window_end_ns) break;
      if (!have_origin_) {
        have_origin_ = true;
        origin_ns_ = out.arrival_ns;
      }
      TimeNs t = out.arrival_ns - origin_ns_;
      if (t_.rate_scale != 1.0) {
        t = static_cast<TimeNs>(
            std::llround(static_cast<long double>(t) / static_cast<long double>(t_.rate_scale)));
      }
      out.arrival_ns = t;
      truncate(out);
      out.id = static_cast<std::uint64_t>(emitted_++);
      return true;
    }
    done_ = true;
    return false;
  }

  ReaderStats stats() const override {
    ReaderStats s = source_->stats();
    s.requests = emitted_;
    s.truncated_prompts += truncated_;
    return s;
  }

  std::string describe() const override { return source_->describe(); }
  TraceColumns columns() const override { return source_->columns(); }

 private:
  void truncate(RequestSpec& out) {
    const std::int64_t limit = t_.max_model_len;
    if (limit <= 0 || out.prompt_tokens + out.output_tokens <= limit) return;
    ++truncated_;
    if (out.output_tokens <= limit - 1) {
      out.prompt_tokens = limit - out.output_tokens;
    } else {
      out.prompt_tokens = 1;
      out.output_tokens = limit - 1;
    }
    if (!out.prefix_hashes.empty() && out.prefix_block_tokens > 0) {
      const std::int64_t blocks = prompt_hash_blocks(out);
      if (static_cast<std::int64_t>(out.prefix_hashes.size()) > blocks) {
        out.prefix_hashes.resize(static_cast<std::size_t>(blocks));
      }
    }
  }

  std::unique_ptr<TraceReader> source_;
  TransformOptions t_;
  bool done_ = false;
  bool have_origin_ = false;
  TimeNs origin_ns_ = 0;
  std::int64_t emitted_ = 0;
  std::int64_t truncated_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> make_synthetic_reader(const SyntheticOptions& options,
                                                   std::shared_ptr<const EmpiricalLengths> lengths,
                                                   std::unique_ptr<TraceReader> arrivals) {
  return std::make_unique<SyntheticReader>(options, std::move(lengths), std::move(arrivals));
}

std::unique_ptr<TraceReader> make_transform_reader(std::unique_ptr<TraceReader> source,
                                                   const TransformOptions& transforms) {
  return std::make_unique<TransformReader>(std::move(source), transforms);
}

}  // namespace kvsim::trace
