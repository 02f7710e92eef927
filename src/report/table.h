#pragma once
// Plain-text tables for people and RFC 4180 CSV for spreadsheets, from the same rows.

#include <string>
#include <vector>

namespace kvsim::report {

enum class Align { kLeft, kRight };

class Table {
 public:
  // Column headers; numeric-looking columns are right-aligned unless set_align says otherwise.
  explicit Table(std::vector<std::string> headers);

  void set_title(std::string title) { title_ = std::move(title); }
  void set_align(std::size_t column, Align align);
  // A row must have as many cells as there are headers (asserted).
  void add_row(std::vector<std::string> cells);
  // A horizontal rule before the next row.
  void add_separator();

  std::size_t num_rows() const { return rows_.size(); }

  // Aligned columns separated by two spaces, header underlined, optional title line first.
  std::string render() const;
  // Header line then one line per row; separators and the title are left out.
  std::string render_csv() const;

 private:
  std::string title_;
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<bool> align_set_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// A two-column "field  value" table, the usual shape for one result.
class KeyValueTable {
 public:
  void set_title(std::string title) { title_ = std::move(title); }
  void add(std::string key, std::string value, std::string note = "");
  // A row whose value is text (a batch's make-up, a provenance): left-aligned where the value
  // column starts, and not counted in its width, so a long line does not push the numbers right.
  void add_text(std::string key, std::string text);
  void add_section(std::string heading);
  std::string render() const;

 private:
  struct Row {
    std::string key, value, note;
    bool section = false;
    bool text = false;  // add_text
  };
  std::string title_;
  std::vector<Row> rows_;
};

// Quotes a CSV cell when needed (comma, quote, CR or LF inside).
std::string csv_escape(const std::string& cell);
// One CSV line (with trailing '\n') from cells.
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace kvsim::report
