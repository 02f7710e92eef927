// The shared file-reader base and the CSV trace formats: native, azure, burstgpt, vidur.
#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "common/format.h"
#include "common/strings.h"
#include "trace/file_readers.h"

namespace kvsim::trace {

FileReaderBase::FileReaderBase(const TraceFileOptions& options, TraceFormat format)
    : lines_(options.path), options_(options), format_(format) {}

std::string FileReaderBase::describe() const {
  return std::string(format_name(format_)) + " " + options_.path;
}

bool FileReaderBase::order_arrival(TimeNs absolute_ns, bool is_request, int column,
                                   std::string_view field, TimeNs& relative_ns, RowError& error) {
  TimeNs ordered = absolute_ns;
  bool clamped = false;
  if (have_previous_ && absolute_ns < previous_ns_) {
    if (previous_ns_ - absolute_ns > kArrivalBackwardsTolerance) {
      error = {column, std::string(field),
               "expected arrivals in non-decreasing order, got " +
                   format_ns_as_seconds(previous_ns_ - absolute_ns) +
                   " s before the previous row's (sort the trace by arrival)"};
      return false;
    }
    ordered = previous_ns_;
    clamped = true;
  }
  have_previous_ = true;
  previous_ns_ = ordered;
  if (clamped) ++stats_.clamped_arrivals;
  if (is_request && !have_first_) {
    have_first_ = true;
    first_ns_ = ordered;
  }
  relative_ns = have_first_ ? ordered - first_ns_ : 0;
  return true;
}

void FileReaderBase::bad_row(const RowError& error) {
  if (!options_.skip_bad_rows) throw row_error(options_.path, lines_.line_number(), error);
  ++stats_.bad_rows_skipped;
}

void FileReaderBase::check_any_request() const {
  if (stats_.requests > 0) return;
  std::string detail = "the file has no rows after the header";
  if (stats_.rows_read > 0) {
    detail = std::to_string(stats_.rows_read) + " rows read, " +
             std::to_string(stats_.bad_rows_skipped) + " skipped as bad, " +
             std::to_string(stats_.failed_requests) + " failed requests";
  } else if (format_ == TraceFormat::kMooncake) {
    detail = "the file has no rows";
  }
  throw Error(ErrorLocation{options_.path, static_cast<int>(lines_.line_number()), 0, ""},
              "no requests (" + detail + ")");
}

bool FileReaderBase::check_tokens(std::string_view text, int column, std::string_view field,
                                  std::int64_t& out, RowError& error, bool allow_zero) {
  const ParseStatus status = parse_count(text, out);
  const char* expected = allow_zero ? "expected a non-negative integer (tokens), got "
                                    : "expected a positive integer (tokens), got ";
  if (status != ParseStatus::kOk || (out == 0 && !allow_zero)) {
    error = {column, std::string(field), expected + quote_value(text)};
    return false;
  }
  if (out > kMaxRequestTokens) {
    error = {
        column, std::string(field),
        "expected at most " + with_commas(kMaxRequestTokens) + " tokens, got " + quote_value(text)};
    return false;
  }
  return true;
}

namespace {

struct Field {
  std::string_view text;
  int column = 0;  // 1-based position of the field's first character in the line
};

// Splits one CSV line (RFC 4180 quoting; quoted fields are unescaped into `scratch`, which is
// reserved so views stay valid). False with `error` on a malformed quote.
bool split_csv(std::string_view line, std::vector<Field>& fields, std::string& scratch,
               RowError& error) {
  fields.clear();
  if (line.find('"') == std::string_view::npos) {
    std::size_t start = 0;
    for (;;) {
      const void* comma = std::memchr(line.data() + start, ',', line.size() - start);
      if (comma == nullptr) {
        fields.push_back({line.substr(start), static_cast<int>(start) + 1});
        return true;
      }
      const auto pos = static_cast<std::size_t>(static_cast<const char*>(comma) - line.data());
      fields.push_back({line.substr(start, pos - start), static_cast<int>(start) + 1});
      start = pos + 1;
    }
  }
  scratch.clear();
  scratch.reserve(line.size());
  std::size_t pos = 0;
  for (;;) {
    const int column = static_cast<int>(pos) + 1;
    std::size_t p = pos;
    while (p < line.size() && line[p] == ' ') ++p;
    if (p < line.size() && line[p] == '"') {
      const std::size_t begin = scratch.size();
      ++p;
      for (;;) {
        if (p >= line.size()) {
          error = {column, "",
                   "expected a closing '\"' in this line (quoted fields cannot span lines)"};
          return false;
        }
        if (line[p] == '"') {
          if (p + 1 < line.size() && line[p + 1] == '"') {
            scratch.push_back('"');
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        scratch.push_back(line[p++]);
      }
      while (p < line.size() && line[p] == ' ') ++p;
      if (p < line.size() && line[p] != ',') {
        error = {static_cast<int>(p) + 1, "", "expected ',' after a quoted field"};
        return false;
      }
      fields.push_back({std::string_view(scratch).substr(begin), column});
    } else {
      const std::size_t comma = line.find(',', pos);
      const std::size_t stop = comma == std::string_view::npos ? line.size() : comma;
      const std::string_view text = line.substr(pos, stop - pos);
      if (text.find('"') != std::string_view::npos) {
        error = {column, "", "expected a '\"' only at the start of a quoted field"};
        return false;
      }
      fields.push_back({text, column});
      p = stop;
    }
    if (p >= line.size()) return true;
    pos = p + 1;  // past the comma
    if (pos == line.size()) {
      fields.push_back({std::string_view(), static_cast<int>(pos) + 1});
      return true;
    }
  }
}

// Which header column feeds which request field, per format.
struct Layout {
  int arrival = -1, prompt = -1, output = -1, session = -1, hashes = -1;
  bool datetime = false;           // azure: date-time strings, else decimal seconds
  bool zero_output_fails = false;  // burstgpt: 0 response tokens = a failed request
  std::vector<std::string> names;  // header cells
};

class CsvTraceReader final : public FileReaderBase {
 public:
  CsvTraceReader(const TraceFileOptions& options, TraceFormat format)
      : FileReaderBase(options, format) {
    read_header();
  }

  bool next(RequestSpec& out) override {
    std::string_view line;
    while (lines_.next(line)) {
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank line
      ++stats_.rows_read;
      RowError error;
      const RowResult result = parse_row(line, out, error);
      if (result == RowResult::kRequest) {
        out.id = static_cast<std::uint64_t>(stats_.requests++);
        return true;
      }
      if (result == RowResult::kFailed) {
        ++stats_.failed_requests;
        continue;
      }
      bad_row(error);
    }
    check_any_request();
    return false;
  }

  TraceColumns columns() const override { return {layout_.session >= 0, layout_.hashes >= 0}; }

 private:
  enum class RowResult { kRequest, kFailed, kBad };

  void read_header() {
    std::string_view line;
    const std::string format_text = std::string(format_name(format_));
    if (!lines_.next(line)) {
      throw Error(ErrorLocation{options_.path, 1, 0, ""},
                  "expected a " + format_text + " CSV header, got an empty file");
    }
    RowError error;
    if (!split_csv(line, fields_, scratch_, error)) {
      throw row_error(options_.path, 1, error);
    }
    for (const auto& f : fields_) layout_.names.emplace_back(trim(f.text));
    const CsvColumns names = csv_columns(format_);
    const auto find = [&](const char* name) -> int {
      if (name == nullptr) return -1;
      const auto it = std::find(layout_.names.begin(), layout_.names.end(), name);
      return it == layout_.names.end() ? -1 : static_cast<int>(it - layout_.names.begin());
    };
    if (layout_.names.size() > kMaxHeaderColumns) {
      throw Error(ErrorLocation{options_.path, 1, fields_[kMaxHeaderColumns].column, ""},
                  "expected at most " + std::to_string(kMaxHeaderColumns) +
                      " columns in the header, got " + std::to_string(layout_.names.size()));
    }
    std::unordered_set<std::string_view> seen;
    for (std::size_t i = 0; i < layout_.names.size(); ++i) {
      if (!seen.insert(layout_.names[i]).second) {
        throw Error(ErrorLocation{options_.path, 1, fields_[i].column, layout_.names[i]},
                    "expected each column once in the header, got it twice");
      }
    }
    layout_.arrival = find(names.arrival);
    layout_.prompt = find(names.prompt);
    layout_.output = find(names.output);
    layout_.session = find(names.session);
    layout_.hashes = find(names.hashes);
    layout_.datetime = format_ == TraceFormat::kAzure;
    layout_.zero_output_fails = format_ == TraceFormat::kBurstGpt;
    for (const auto& [index, required] :
         {std::pair{layout_.arrival, names.arrival}, std::pair{layout_.prompt, names.prompt},
          std::pair{layout_.output, names.output}}) {
      if (index < 0) {
        throw Error(ErrorLocation{options_.path, 1, 1, required},
                    "expected a column '" + std::string(required) + "' in the " + format_text +
                        " header, got '" + std::string(line.substr(0, 120)) + "'" +
                        did_you_mean(required, layout_.names));
      }
    }
    if (format_ == TraceFormat::kNative) {
      // The native format is ours: unknown columns are typos, not extra data.
      const std::vector<std::string> known = {names.arrival, names.prompt, names.output,
                                              names.session, names.hashes};
      for (std::size_t i = 0; i < layout_.names.size(); ++i) {
        if (std::find(known.begin(), known.end(), layout_.names[i]) == known.end()) {
          throw Error(ErrorLocation{options_.path, 1, fields_[i].column, layout_.names[i]},
                      "expected one of the native columns (" + join(known, ", ") +
                          "), got an unknown column" + did_you_mean(layout_.names[i], known));
        }
      }
    }
    if (layout_.hashes >= 0 && options_.prefix_block_tokens <= 0) {
      throw Error(
          ErrorLocation{options_.path, 1, fields_[static_cast<std::size_t>(layout_.hashes)].column,
                        "prefix_hashes"},
          "expected a positive --prefix-block-tokens for the prefix_hashes column");
    }
  }

  RowResult parse_row(std::string_view line, RequestSpec& out, RowError& error) {
    if (!split_csv(line, fields_, scratch_, error)) return RowResult::kBad;
    const std::size_t expected = layout_.names.size();
    if (fields_.size() != expected) {
      if (fields_.size() < expected) {
        error = {static_cast<int>(line.size()) + 1, layout_.names[fields_.size()],
                 "expected " + std::to_string(expected) + " columns as in the header, got " +
                     std::to_string(fields_.size())};
      } else {
        error = {fields_[expected].column, "",
                 "expected " + std::to_string(expected) + " columns as in the header, got " +
                     std::to_string(fields_.size())};
      }
      return RowResult::kBad;
    }
    const Field& arrival = fields_[static_cast<std::size_t>(layout_.arrival)];
    const std::string& arrival_name = layout_.names[static_cast<std::size_t>(layout_.arrival)];
    TimeNs absolute = 0;
    if (layout_.datetime) {
      if (!parse_datetime_ns(arrival.text, absolute)) {
        error = {
            arrival.column, arrival_name,
            "expected a date-time 'YYYY-MM-DD HH:MM:SS.fffffff', got " + quote_value(arrival.text)};
        return RowResult::kBad;
      }
    } else {
      const ParseStatus status = parse_decimal_ns(arrival.text, kNsPerSecond, absolute);
      if (status != ParseStatus::kOk) {
        error = {arrival.column, arrival_name,
                 std::string(status == ParseStatus::kOutOfRange
                                 ? "expected seconds below 9.2e9, got "
                                 : "expected a non-negative number of seconds, got ") +
                     quote_value(arrival.text)};
        return RowResult::kBad;
      }
    }
    const Field& prompt = fields_[static_cast<std::size_t>(layout_.prompt)];
    if (!check_tokens(prompt.text, prompt.column,
                      layout_.names[static_cast<std::size_t>(layout_.prompt)], out.prompt_tokens,
                      error)) {
      return RowResult::kBad;
    }
    const Field& output = fields_[static_cast<std::size_t>(layout_.output)];
    if (!check_tokens(output.text, output.column,
                      layout_.names[static_cast<std::size_t>(layout_.output)], out.output_tokens,
                      error, layout_.zero_output_fails)) {
      return RowResult::kBad;
    }
    const bool failed = layout_.zero_output_fails && out.output_tokens == 0;
    out.session_id.clear();
    if (layout_.session >= 0) {
      out.session_id.assign(trim(fields_[static_cast<std::size_t>(layout_.session)].text));
    }
    out.prefix_hashes.clear();
    out.prefix_block_tokens = 0;
    if (layout_.hashes >= 0 &&
        !parse_hashes(fields_[static_cast<std::size_t>(layout_.hashes)], out, error)) {
      return RowResult::kBad;
    }
    if (!order_arrival(absolute, !failed, arrival.column, arrival_name, out.arrival_ns, error)) {
      return RowResult::kBad;
    }
    return failed ? RowResult::kFailed : RowResult::kRequest;
  }

  bool parse_hashes(const Field& field, RequestSpec& out, RowError& error) {
    std::string_view text = field.text;
    const std::string_view trimmed = trim(text);
    if (trimmed.empty()) return true;
    const std::int64_t block = options_.prefix_block_tokens;
    std::size_t start = 0;
    for (;;) {
      const std::size_t semi = text.find(';', start);
      const std::size_t stop = semi == std::string_view::npos ? text.size() : semi;
      const std::string_view item = text.substr(start, stop - start);
      std::uint64_t value = 0;
      if (parse_u64(item, value) != ParseStatus::kOk) {
        error = {
            field.column + static_cast<int>(start), "prefix_hashes",
            "expected ';'-separated non-negative integer block hashes, got " + quote_value(item)};
        return false;
      }
      out.prefix_hashes.push_back(value);
      if (semi == std::string_view::npos) break;
      start = semi + 1;
    }
    // Hashes past the prompt's blocks are its output's (RequestSpec::prefix_hashes).
    const std::int64_t max_blocks = (out.prompt_tokens + out.output_tokens + block - 1) / block;
    if (static_cast<std::int64_t>(out.prefix_hashes.size()) > max_blocks) {
      error = {field.column, "prefix_hashes",
               "expected at most " + std::to_string(max_blocks) + " block hashes for " +
                   std::to_string(out.prompt_tokens) + " prompt and " +
                   std::to_string(out.output_tokens) + " output tokens at " +
                   std::to_string(block) + " tokens per block (--prefix-block-tokens), got " +
                   std::to_string(out.prefix_hashes.size())};
      return false;
    }
    out.prefix_block_tokens = block;
    return true;
  }

  Layout layout_;
  std::vector<Field> fields_;
  std::string scratch_;
};

}  // namespace

std::unique_ptr<TraceReader> make_csv_reader(const TraceFileOptions& options, TraceFormat format) {
  return std::make_unique<CsvTraceReader>(options, format);
}

}  // namespace kvsim::trace
