// Mooncake JSONL: one object per line,
//   {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, ...]}
// timestamp in milliseconds; each hash id is one 512-token prompt block. A small hand-written
// parser (the hot path of replaying these traces): it accepts any JSON object, skipping keys
// it does not use, and rejects malformed lines with the column of the first bad character.
#include <string>

#include "trace/file_readers.h"

namespace kvsim::trace {
namespace {

constexpr std::int64_t kMooncakeBlockTokens = 512;

class MooncakeReader final : public FileReaderBase {
 public:
  explicit MooncakeReader(const TraceFileOptions& options)
      : FileReaderBase(options, TraceFormat::kMooncake) {}

  bool next(RequestSpec& out) override {
    std::string_view line;
    while (lines_.next(line)) {
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      ++stats_.rows_read;
      RowError error;
      if (parse_line(line, out, error)) {
        out.id = static_cast<std::uint64_t>(stats_.requests++);
        return true;
      }
      bad_row(error);
    }
    check_any_request();
    return false;
  }

  TraceColumns columns() const override { return {false, true}; }

 private:
  // Cursor over one line. Methods return false after filling error_.
  struct Cursor {
    std::string_view s;
    std::size_t pos = 0;
    RowError* error = nullptr;

    int column() const { return static_cast<int>(pos) + 1; }
    void skip_ws() {
      while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
    }
    bool fail(std::string_view field, const std::string& message) {
      *error = {column(), std::string(field), message};
      return false;
    }
    std::string got() const {
      if (pos >= s.size()) return "the end of the line";
      return "'" + std::string(1, s[pos]) + "'";
    }
    bool expect(char c, std::string_view field) {
      skip_ws();
      if (pos < s.size() && s[pos] == c) {
        ++pos;
        return true;
      }
      return fail(field, std::string("expected '") + c + "', got " + got());
    }
    // A JSON string's raw content (escapes kept as written; keys we use have none).
    bool string(std::string_view& out, std::string_view field) {
      skip_ws();
      if (pos >= s.size() || s[pos] != '"') return fail(field, "expected a '\"', got " + got());
      const std::size_t begin = ++pos;
      while (pos < s.size() && s[pos] != '"') {
        if (s[pos] == '\\') ++pos;
        ++pos;
      }
      if (pos >= s.size()) return fail(field, "expected a closing '\"', got the end of the line");
      out = s.substr(begin, pos - begin);
      ++pos;
      return true;
    }
    // The text of a number token (validated by the caller's parser).
    std::string_view number_token() {
      skip_ws();
      const std::size_t begin = pos;
      while (pos < s.size()) {
        const char c = s[pos];
        if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
          ++pos;
        } else {
          break;
        }
      }
      return s.substr(begin, pos - begin);
    }
    // Any JSON value (for keys we do not use).
    bool skip_value(std::string_view field, int depth = 0) {
      skip_ws();
      if (pos >= s.size()) return fail(field, "expected a value, got the end of the line");
      if (depth > 64) return fail(field, "expected JSON nested at most 64 deep");
      const char c = s[pos];
      if (c == '"') {
        std::string_view ignored;
        return string(ignored, field);
      }
      if (c == '{' || c == '[') {
        const char close = c == '{' ? '}' : ']';
        ++pos;
        skip_ws();
        if (pos < s.size() && s[pos] == close) {
          ++pos;
          return true;
        }
        for (;;) {
          if (c == '{') {
            std::string_view key;
            if (!string(key, field) || !expect(':', field)) return false;
          }
          if (!skip_value(field, depth + 1)) return false;
          skip_ws();
          if (pos < s.size() && s[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < s.size() && s[pos] == close) {
            ++pos;
            return true;
          }
          return fail(field, std::string("expected ',' or '") + close + "', got " + got());
        }
      }
      for (const std::string_view literal : {"true", "false", "null"}) {
        if (s.substr(pos, literal.size()) == literal) {
          pos += literal.size();
          return true;
        }
      }
      const std::size_t begin = pos;
      const std::string_view number = number_token();
      if (number.empty()) {
        pos = begin;
        return fail(field, "expected a JSON value, got " + got());
      }
      return true;
    }
  };

  bool parse_count_value(Cursor& c, const char* key, std::int64_t& out, bool allow_zero) {
    c.skip_ws();
    const int column = c.column();
    const std::string_view token = c.number_token();
    const std::string_view shown =
        token.empty() ? c.s.substr(c.pos, std::min<std::size_t>(12, c.s.size() - c.pos)) : token;
    return check_tokens(token.empty() ? shown : token, column, key, out, *c.error, allow_zero);
  }

  // What one line has given so far.
  struct LineState {
    bool have_timestamp = false, have_input = false, have_output = false, have_hashes = false;
    TimeNs timestamp = 0;
    int timestamp_column = 0;
  };

  bool parse_timestamp(Cursor& c, LineState& st, RowError& error) {
    c.skip_ws();
    st.timestamp_column = c.column();
    const std::string_view token = c.number_token();
    const ParseStatus status = parse_decimal_ns(token, kNsPerMs, st.timestamp);
    if (status != ParseStatus::kOk) {
      error = {st.timestamp_column, "timestamp",
               "expected a non-negative number of milliseconds, got " +
                   (token.empty() ? c.got() : quote_value(token))};
      return false;
    }
    return true;
  }

  // The value of `key` (at key_column); unknown keys are skipped, known ones taken once.
  bool parse_member(Cursor& c, std::string_view key, int key_column, LineState& st,
                    RequestSpec& out, RowError& error) {
    const auto duplicate = [&](bool& seen) {
      if (seen) {
        error = {key_column, std::string(key), "expected each key once, got it twice"};
        return false;
      }
      seen = true;
      return true;
    };
    if (key == "timestamp") return duplicate(st.have_timestamp) && parse_timestamp(c, st, error);
    if (key == "input_length") {
      return duplicate(st.have_input) &&
             parse_count_value(c, "input_length", out.prompt_tokens, false);
    }
    if (key == "output_length") {
      return duplicate(st.have_output) &&
             parse_count_value(c, "output_length", out.output_tokens, false);
    }
    if (key == "hash_ids") return duplicate(st.have_hashes) && parse_hashes(c, out);
    return c.skip_value(key);
  }

  // The required keys are there and the hash ids fit the prompt.
  bool check_complete(std::string_view line, const LineState& st, const RequestSpec& out,
                      RowError& error) const {
    const int end_column = static_cast<int>(line.size());
    for (const auto& [seen, key] :
         {std::pair{st.have_timestamp, "timestamp"}, std::pair{st.have_input, "input_length"},
          std::pair{st.have_output, "output_length"}}) {
      if (!seen) {
        error = {end_column, key, std::string("expected a key '") + key + "' in the object"};
        return false;
      }
    }
    if (st.have_hashes) {
      const std::int64_t max_blocks =
          (out.prompt_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
      if (static_cast<std::int64_t>(out.prefix_hashes.size()) > max_blocks) {
        error = {hashes_column_, "hash_ids",
                 "expected at most " + std::to_string(max_blocks) + " hash ids for " +
                     std::to_string(out.prompt_tokens) + " input tokens (512 per block), got " +
                     std::to_string(out.prefix_hashes.size())};
        return false;
      }
    }
    return true;
  }

  bool parse_line(std::string_view line, RequestSpec& out, RowError& error) {
    Cursor c{line, 0, &error};
    LineState st;
    out.prefix_hashes.clear();
    out.session_id.clear();
    if (!c.expect('{', "")) return false;
    c.skip_ws();
    bool empty = c.pos < line.size() && line[c.pos] == '}';
    if (empty) ++c.pos;
    while (!empty) {
      std::string_view key;
      c.skip_ws();
      const int key_column = c.column();
      if (!c.string(key, "") || !c.expect(':', key)) return false;
      if (!parse_member(c, key, key_column, st, out, error)) return false;
      c.skip_ws();
      if (c.pos < line.size() && line[c.pos] == ',') {
        ++c.pos;
        continue;
      }
      if (c.pos < line.size() && line[c.pos] == '}') {
        ++c.pos;
        break;
      }
      return c.fail("", "expected ',' or '}', got " + c.got());
    }
    c.skip_ws();
    if (c.pos != line.size()) {
      return c.fail("", "expected the end of the line after the JSON object, got " + c.got());
    }
    if (!check_complete(line, st, out, error)) return false;
    out.prefix_block_tokens = out.prefix_hashes.empty() ? 0 : kMooncakeBlockTokens;
    return order_arrival(st.timestamp, true, st.timestamp_column, "timestamp", out.arrival_ns,
                         error);
  }

  bool parse_hashes(Cursor& c, RequestSpec& out) {
    c.skip_ws();
    hashes_column_ = c.column();
    if (!c.expect('[', "hash_ids")) return false;
    c.skip_ws();
    if (c.pos < c.s.size() && c.s[c.pos] == ']') {
      ++c.pos;
      return true;
    }
    for (;;) {
      c.skip_ws();
      const int column = c.column();
      const std::string_view token = c.number_token();
      std::uint64_t value = 0;
      if (parse_u64(token, value) != ParseStatus::kOk) {
        *c.error = {column, "hash_ids",
                    "expected a non-negative integer hash id, got " +
                        (token.empty() ? c.got() : quote_value(token))};
        return false;
      }
      out.prefix_hashes.push_back(value);
      c.skip_ws();
      if (c.pos < c.s.size() && c.s[c.pos] == ',') {
        ++c.pos;
        continue;
      }
      if (c.pos < c.s.size() && c.s[c.pos] == ']') {
        ++c.pos;
        return true;
      }
      return c.fail("hash_ids", "expected ',' or ']', got " + c.got());
    }
  }

  int hashes_column_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> make_mooncake_reader(const TraceFileOptions& options) {
  return std::make_unique<MooncakeReader>(options);
}

}  // namespace kvsim::trace
