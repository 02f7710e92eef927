#pragma once
// Streaming readers of trace files (one per format family) and what they share: line reading,
// the arrival-order check, and bad-row handling. Use open_trace_file (trace/workload.h).

#include <memory>
#include <string>

#include "common/units.h"
#include "trace/field_parse.h"
#include "trace/line_reader.h"
#include "trace/request.h"
#include "trace/trace_format.h"
#include "trace/workload.h"

namespace kvsim::trace {

// How far a row's arrival may go back before it is an error (float rounding in exports); rows
// within it are moved up to the previous arrival and counted as clamped_arrivals.
inline constexpr TimeNs kArrivalBackwardsTolerance = kNsPerMs;
// Upper bound on prompt or output tokens in one request: larger values are bad rows.
inline constexpr std::int64_t kMaxRequestTokens = 1'000'000'000;
// Upper bound on the columns of a CSV trace header.
inline constexpr std::size_t kMaxHeaderColumns = 10'000;

// The part every file reader shares.
// Invariants: yielded arrivals are relative to the first yielded request and non-decreasing;
// stats_.requests counts the requests yielded.
class FileReaderBase : public TraceReader {
 public:
  FileReaderBase(const TraceFileOptions& options, TraceFormat format);

  ReaderStats stats() const override { return stats_; }
  std::string describe() const override;

 protected:
  // Call last, once every other field of the row is valid. Checks the row's absolute arrival
  // against the previous row's; on success records it, sets `relative_ns` (relative to the first
  // request, clamped up when within tolerance) and returns true. `is_request` is false for rows
  // that are not replayed (failed requests): they are ordered but do not set the time origin.
  // On a backward step beyond tolerance fills `error` and returns false.
  bool order_arrival(TimeNs absolute_ns, bool is_request, int column, std::string_view field,
                     TimeNs& relative_ns, RowError& error);
  // A bad row: throws unless skipping, in which case counts it.
  void bad_row(const RowError& error);
  // Call at the end of the file: throws kvsim::Error ("no requests") when the file yielded none
  // (a header-only trace, or every row skipped or failed), which would otherwise make an
  // all-zero report that looks like a result.
  void check_any_request() const;
  // Prompt / output token count: 1..kMaxRequestTokens. Fills `error` on failure.
  static bool check_tokens(std::string_view text, int column, std::string_view field,
                           std::int64_t& out, RowError& error, bool allow_zero = false);

  LineReader lines_;
  TraceFileOptions options_;
  TraceFormat format_;
  ReaderStats stats_;

 private:
  bool have_previous_ = false;
  TimeNs previous_ns_ = 0;  // absolute arrival of the previous ordered row
  bool have_first_ = false;
  TimeNs first_ns_ = 0;  // absolute arrival of the first request
};

// CSV formats: native, azure, burstgpt, vidur. Reads and checks the header in the constructor.
std::unique_ptr<TraceReader> make_csv_reader(const TraceFileOptions& options, TraceFormat format);
// Mooncake JSONL.
std::unique_ptr<TraceReader> make_mooncake_reader(const TraceFileOptions& options);

}  // namespace kvsim::trace
