#pragma once
// Buffered line-by-line reading of a text file with O(longest line) memory, for trace readers.
// Accepts LF and CRLF endings, a final line without a terminator, and a UTF-8 BOM.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::trace {

// Invariants: buffer_[begin_, end_) holds bytes read from the file and not yet returned;
// line_number_ counts the lines returned so far.
class LineReader {
 public:
  // Opens `path`; throws kvsim::Error naming it when it cannot be opened or is a directory.
  explicit LineReader(std::string path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its "\n" or "\r\n" (the view is valid until the next call). Returns
  // false at the end of the file. Throws kvsim::Error on a read error or a line over 64 MiB.
  bool next(std::string_view& line);

  // 1-based number of the line last returned (0 before the first).
  std::int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  bool fill();  // reads more bytes; false at EOF

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_number_ = 0;
};

}  // namespace kvsim::trace
