#include "trace/workload.h"

#include <charconv>
#include <cmath>

#include "common/enum_names.h"
#include "common/strings.h"
#include "trace/file_readers.h"
#include "trace/generator.h"
#include "trace/line_reader.h"
#include "trace/trace_stats.h"

namespace kvsim::trace {
namespace {

const std::vector<std::string>& length_kind_names() {
  static const std::vector<std::string> kNames = {"fixed",     "uniform", "normal",
                                                  "lognormal", "zipf",    "empirical"};
  return kNames;
}

// Shortest text that reads back as the same double ("161.31", "0.5", "1e+20").
std::string number_text(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

Error option_error(const std::string& field, const std::string& message) {
  return Error(ErrorLocation{"", 0, 0, field}, message);
}

bool unset(const LengthDist& dist) {
  return dist.kind == LengthKind::kFixed && dist.value == 0;
}

// The length histograms and rate of a trace, in one streaming pass.
std::shared_ptr<const EmpiricalLengths> read_empirical(const TraceFileOptions& file) {
  auto reader = open_trace_file(file);
  IntQuantiles prompt, output;
  TraceStatsAccumulator acc;
  RequestSpec r;
  while (reader->next(r)) {
    prompt.add(r.prompt_tokens);
    output.add(r.output_tokens);
    acc.add(r);
  }
  if (prompt.empty()) {
    throw Error(ErrorLocation{file.path, 0, 0, ""},
                "expected at least one request in the trace to take lengths from, got none");
  }
  auto lengths = std::make_shared<EmpiricalLengths>();
  lengths->prompt = EmpiricalHistogram(prompt);
  lengths->output = EmpiricalHistogram(output);
  const TraceStats stats = acc.finish(reader->stats());
  lengths->requests = stats.requests;
  lengths->rate_rps = stats.rate_rps;
  return lengths;
}

// Replaces kAuto by the detected format (so reports show it); throws for a missing file.
void resolve_format(TraceFileOptions& file) {
  if (file.path.empty() || file.format != TraceFormat::kAuto) return;
  LineReader probe(file.path);
  std::string_view first;
  if (!probe.next(first)) {
    throw Error(ErrorLocation{file.path, 0, 0, ""}, "expected a trace, got an empty file");
  }
  file.format = detect_trace_format(file.path, first);
}

}  // namespace

constexpr EnumNames<ArrivalProcess, 4> kArrivalProcessNames{{{
    {ArrivalProcess::kPoisson, "poisson"},
    {ArrivalProcess::kGamma, "gamma"},
    {ArrivalProcess::kConstant, "constant"},
    {ArrivalProcess::kReplay, "replay"},
}}};

std::string_view arrival_process_name(ArrivalProcess process) {
  return kArrivalProcessNames.name(process);
}

LengthDist parse_length_dist(std::string_view spec, const ErrorLocation& where) {
  const std::string text(trim(spec));
  const auto fail = [&](const std::string& what) -> Error {
    return Error(where, "expected " + what + ", got '" + text + "'");
  };
  const auto parts = split(text, ':');
  LengthDist dist;
  if (parts.size() == 1) {
    if (const auto n = parse_int(parts[0])) {
      dist.kind = LengthKind::kFixed;
      dist.value = *n;
      validate_length_dist(dist, where);
      return dist;
    }
  }
  const std::string kind = to_lower(trim(parts[0]));
  const auto integer = [&](std::size_t i, const char* what) {
    const auto v = parse_int(parts[i]);
    if (!v) throw fail(std::string("an integer ") + what + " in field " + std::to_string(i + 1));
    return *v;
  };
  const auto real = [&](std::size_t i, const char* what) {
    const auto v = parse_double(parts[i]);
    if (!v) throw fail(std::string("a number ") + what + " in field " + std::to_string(i + 1));
    return *v;
  };
  if (kind == "fixed" && parts.size() == 2) {
    dist.kind = LengthKind::kFixed;
    dist.value = integer(1, "N");
  } else if (kind == "uniform" && parts.size() == 3) {
    dist.kind = LengthKind::kUniform;
    dist.min = integer(1, "MIN");
    dist.max = integer(2, "MAX");
  } else if ((kind == "normal" || kind == "lognormal") &&
             (parts.size() == 3 || parts.size() == 5)) {
    dist.kind = kind == "normal" ? LengthKind::kNormal : LengthKind::kLognormal;
    dist.mean = real(1, "MEAN");
    dist.stddev = real(2, "STD");
    if (parts.size() == 5) {
      dist.min = integer(3, "MIN");
      dist.max = integer(4, "MAX");
    }
  } else if (kind == "zipf" && parts.size() == 4) {
    dist.kind = LengthKind::kZipf;
    dist.zipf_exponent = real(1, "S");
    dist.min = integer(2, "MIN");
    dist.max = integer(3, "MAX");
  } else if (kind == "empirical" && parts.size() == 1) {
    dist.kind = LengthKind::kEmpirical;
  } else {
    throw fail(
        "a length distribution: N, fixed:N, uniform:MIN:MAX, normal:MEAN:STD[:MIN:MAX], "
        "lognormal:MEAN:STD[:MIN:MAX], zipf:S:MIN:MAX or empirical" +
        did_you_mean(kind, length_kind_names()));
  }
  validate_length_dist(dist, where);
  return dist;
}

std::string to_spec(const LengthDist& d) {
  switch (d.kind) {
    case LengthKind::kFixed:
      return "fixed:" + std::to_string(d.value);
    case LengthKind::kUniform:
      return "uniform:" + std::to_string(d.min) + ":" + std::to_string(d.max);
    case LengthKind::kNormal:
    case LengthKind::kLognormal: {
      std::string out = d.kind == LengthKind::kNormal ? "normal:" : "lognormal:";
      out += number_text(d.mean) + ":" + number_text(d.stddev);
      if (d.min != 1 || d.max != 0)
        out += ":" + std::to_string(d.min) + ":" + std::to_string(d.max);
      return out;
    }
    case LengthKind::kZipf:
      return "zipf:" + number_text(d.zipf_exponent) + ":" + std::to_string(d.min) + ":" +
             std::to_string(d.max);
    case LengthKind::kEmpirical:
      return "empirical";
  }
  return "?";
}

void validate_length_dist(const LengthDist& d, const ErrorLocation& where) {
  const auto fail = [&](const std::string& message) { throw Error(where, message); };
  const std::string spec = to_spec(d);
  switch (d.kind) {
    case LengthKind::kFixed:
      if (d.value < 1 || d.value > kMaxRequestTokens) {
        fail("expected a length of at least 1 token, got " + std::to_string(d.value));
      }
      break;
    case LengthKind::kUniform:
    case LengthKind::kZipf:
      if (d.min < 1 || d.max < d.min || d.max > kMaxRequestTokens) {
        fail("expected 1 <= MIN <= MAX, got '" + spec + "'");
      }
      if (d.kind == LengthKind::kZipf && !(d.zipf_exponent > 0.0 && d.zipf_exponent <= 100.0)) {
        fail("expected a Zipf exponent S in (0, 100], got '" + spec + "'");
      }
      break;
    case LengthKind::kNormal:
    case LengthKind::kLognormal:
      if (!(d.mean > 0.0) || !(d.stddev >= 0.0) || !std::isfinite(d.mean) ||
          !std::isfinite(d.stddev) || d.mean > 1e9) {
        fail("expected MEAN > 0 and STD >= 0, got '" + spec + "'");
      }
      if (d.min < 1 || (d.max != 0 && d.max < d.min) || d.max > kMaxRequestTokens) {
        fail("expected clamps 1 <= MIN <= MAX (MAX 0 = none), got '" + spec + "'");
      }
      break;
    case LengthKind::kEmpirical:
      break;
  }
}

void apply_workload_defaults(WorkloadOptions& options) {
  if (options.source != WorkloadOptions::Source::kSynthetic) return;
  SyntheticOptions& s = options.synthetic;
  if (!s.lengths_from.path.empty()) {
    if (unset(s.prompt)) s.prompt.kind = LengthKind::kEmpirical;
    if (unset(s.output)) s.output.kind = LengthKind::kEmpirical;
  }
  if (s.arrival == ArrivalProcess::kReplay && s.arrival_trace.path.empty()) {
    s.arrival_trace = s.lengths_from;
  }
}

namespace {

void check_trace_file(const TraceFileOptions& f, const std::string& field) {
  if (f.prefix_block_tokens < 1) {
    throw option_error(
        field + ".prefix_block_tokens",
        "expected a positive --prefix-block-tokens, got " + std::to_string(f.prefix_block_tokens));
  }
}

// Rate, cv and the workload's end, unless arrivals are replayed from a trace. A closed loop
// needs no rate (0 = every request ready at time 0).
void check_arrivals(const SyntheticOptions& s, bool has_lengths, bool closed_loop) {
  if (s.arrival == ArrivalProcess::kReplay) {
    if (s.arrival_trace.path.empty() && !has_lengths) {
      throw option_error("synthetic.arrival_trace",
                         "expected a trace to replay arrivals from (--arrival-trace or "
                         "--lengths-from)");
    }
    return;
  }
  if (!std::isfinite(s.rate_rps) || s.rate_rps < 0.0 ||
      (s.rate_rps == 0.0 && !has_lengths && !closed_loop)) {
    throw option_error(
        "synthetic.rate",
        "expected a positive request rate (--rate, requests/s), got " + number_text(s.rate_rps));
  }
  if (s.arrival == ArrivalProcess::kGamma && !(s.cv > 0.0 && s.cv <= 1000.0)) {
    throw option_error(
        "synthetic.cv",
        "expected a coefficient of variation (--cv) in (0, 1000], got " + number_text(s.cv));
  }
  if (s.num_requests == 0 && s.duration_s == 0.0 && !has_lengths) {
    throw option_error("synthetic.num_requests",
                       "expected --num-requests or --duration (or --lengths-from) to end "
                       "the workload");
  }
}

void check_length_dist(const LengthDist& d, bool has_lengths, const std::string& field,
                       const char* flag) {
  if (unset(d)) {
    throw option_error(field, std::string("expected a length distribution (") + flag +
                                  " SPEC, or --lengths-from FILE)");
  }
  if (d.kind == LengthKind::kEmpirical && !has_lengths) {
    throw option_error(field,
                       std::string("expected --lengths-from FILE for ") + flag + " empirical");
  }
  validate_length_dist(d, ErrorLocation{"", 0, 0, field});
}

void check_shared_prefix(const SharedPrefixOptions& sp) {
  if (!(sp.fraction >= 0.0 && sp.fraction <= 1.0)) {
    throw option_error("synthetic.shared_prefix.fraction",
                       "expected a fraction in [0, 1] (--shared-prefix-fraction), got " +
                           number_text(sp.fraction));
  }
  if (sp.fraction > 0.0) {
    if (sp.num_prompts < 1 || sp.num_prompts > 1'000'000) {
      throw option_error("synthetic.shared_prefix.num_prompts",
                         "expected 1 to 1,000,000 system prompts (--shared-prefix-prompts), "
                         "got " +
                             std::to_string(sp.num_prompts));
    }
    if (sp.block_tokens < 1) {
      throw option_error("synthetic.shared_prefix.block_tokens",
                         "expected a positive block size (--prefix-block-tokens), got " +
                             std::to_string(sp.block_tokens));
    }
    if (sp.prompt_tokens < sp.block_tokens || sp.prompt_tokens > kMaxRequestTokens / 2) {
      throw option_error("synthetic.shared_prefix.prompt_tokens",
                         "expected a system prompt of at least one prefix block (" +
                             std::to_string(sp.block_tokens) +
                             " tokens, --prefix-block-tokens) so that it can be shared "
                             "(--shared-prefix-tokens), got " +
                             std::to_string(sp.prompt_tokens));
    }
  }
}

void check_synthetic(const SyntheticOptions& s, bool closed_loop) {
  const bool has_lengths = !s.lengths_from.path.empty();
  if (!s.lengths_from.path.empty()) check_trace_file(s.lengths_from, "synthetic.lengths_from");
  if (!s.arrival_trace.path.empty()) check_trace_file(s.arrival_trace, "synthetic.arrival_trace");
  check_arrivals(s, has_lengths, closed_loop);
  if (s.num_requests < 0) {
    throw option_error("synthetic.num_requests",
                       "expected a non-negative count, got " + std::to_string(s.num_requests));
  }
  if (!std::isfinite(s.duration_s) || s.duration_s < 0.0 || s.duration_s > 1e9) {
    throw option_error("synthetic.duration_s", "expected a non-negative duration in seconds, got " +
                                                   number_text(s.duration_s));
  }
  check_length_dist(s.prompt, has_lengths, "synthetic.prompt_tokens", "--prompt-len");
  check_length_dist(s.output, has_lengths, "synthetic.output_tokens", "--output-len");
  check_shared_prefix(s.shared_prefix);
  if (s.prompt_pool < 0 || s.prompt_pool > 10'000'000) {
    throw option_error("synthetic.prompt_pool",
                       "expected 0 (off) to 10,000,000 pooled prompts (--prompt-pool), got " +
                           std::to_string(s.prompt_pool));
  }
  if (s.prompt_pool > 0 && s.shared_prefix.fraction > 0.0) {
    throw option_error("synthetic.prompt_pool",
                       "a prompt pool (--prompt-pool) repeats whole prompts; it does not combine "
                       "with shared system prompts (--shared-prefix-fraction)");
  }
  if (s.prompt_pool > 0 && s.shared_prefix.block_tokens < 1) {
    throw option_error("synthetic.shared_prefix.block_tokens",
                       "expected a positive block size (--prefix-block-tokens), got " +
                           std::to_string(s.shared_prefix.block_tokens));
  }
}

void check_transforms(const TransformOptions& t) {
  if (!(t.rate_scale > 0.0) || !std::isfinite(t.rate_scale) || t.rate_scale > 1e9) {
    throw option_error("rate_scale",
                       "expected a positive --rate-scale, got " + number_text(t.rate_scale));
  }
  if (t.max_requests < 0) {
    throw option_error("max_requests", "expected a non-negative --max-requests, got " +
                                           std::to_string(t.max_requests));
  }
  if (t.window_start_ns < 0 || t.window_end_ns <= t.window_start_ns) {
    throw option_error("time_window", "expected 0 <= START < END for --time-window");
  }
  if (t.max_model_len != 0 && (t.max_model_len < 2 || t.max_model_len > kMaxRequestTokens)) {
    throw option_error("max_model_len",
                       "expected a --max-model-len of at least 2 tokens to truncate to, got " +
                           std::to_string(t.max_model_len));
  }
}

}  // namespace

void validate_workload(const WorkloadOptions& o) {
  if (o.max_concurrency < 0 || o.max_concurrency > 100'000'000) {
    throw option_error("max_concurrency",
                       "expected a count in [0, 100,000,000] (--max-concurrency; 0 = open loop), "
                       "got " +
                           std::to_string(o.max_concurrency));
  }
  if (o.source == WorkloadOptions::Source::kTrace) {
    if (o.trace.path.empty()) {
      throw option_error("trace", "expected a trace file (--trace FILE) or a synthetic workload");
    }
    check_trace_file(o.trace, "trace");
  } else {
    check_synthetic(o.synthetic, o.max_concurrency > 0);
  }
  check_transforms(o.transforms);
}

Workload::Workload(WorkloadOptions options) : resolved_(std::move(options)) {
  if (resolved_.source == WorkloadOptions::Source::kSynthetic) {
    SyntheticOptions& s = resolved_.synthetic;
    const bool has_lengths = !s.lengths_from.path.empty();
    apply_workload_defaults(resolved_);
    validate_workload(resolved_);
    resolve_format(s.arrival_trace);
    resolve_format(s.lengths_from);
    if (has_lengths) {
      lengths_ = read_empirical(s.lengths_from);
      if (s.arrival != ArrivalProcess::kReplay) {
        if (s.rate_rps == 0.0 && resolved_.max_concurrency == 0) {
          if (!lengths_->rate_rps) {
            throw Error(ErrorLocation{s.lengths_from.path, 0, 0, ""},
                        "expected a trace with a defined mean rate (two requests at different "
                        "times) to take --rate from; pass --rate");
          }
          s.rate_rps = *lengths_->rate_rps;
        }
        if (s.num_requests == 0 && s.duration_s == 0.0) s.num_requests = lengths_->requests;
      }
    }
  } else {
    validate_workload(resolved_);
    resolve_format(resolved_.trace);
  }
}

Workload::~Workload() = default;
Workload::Workload(const Workload&) = default;
Workload& Workload::operator=(const Workload&) = default;

std::unique_ptr<TraceReader> Workload::open(double rate_factor) const {
  std::unique_ptr<TraceReader> source;
  if (resolved_.source == WorkloadOptions::Source::kTrace) {
    source = open_trace_file(resolved_.trace);
  } else {
    const SyntheticOptions& s = resolved_.synthetic;
    std::unique_ptr<TraceReader> arrivals;
    if (s.arrival == ArrivalProcess::kReplay) arrivals = open_trace_file(s.arrival_trace);
    source = make_synthetic_reader(s, lengths_, std::move(arrivals));
  }
  TransformOptions transforms = resolved_.transforms;
  transforms.rate_scale *= rate_factor;
  return make_transform_reader(std::move(source), transforms);
}

std::unique_ptr<TraceReader> open_workload(const WorkloadOptions& options) {
  return Workload(options).open();
}

std::unique_ptr<TraceReader> open_trace_file(const TraceFileOptions& file) {
  TraceFileOptions resolved = file;
  resolve_format(resolved);
  if (resolved.format == TraceFormat::kMooncake) return make_mooncake_reader(resolved);
  return make_csv_reader(resolved, resolved.format);
}

}  // namespace kvsim::trace
