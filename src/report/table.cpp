#include "report/table.h"

#include <algorithm>

#include "common/assert.h"

namespace kvsim::report {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != ',' && c != '.' && c != '-' && c != '+' && c != '%' && c != ' ' && c != 'x' &&
               c != 'e' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) {
      return false;
    }
  }
  return digit && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+' || s[0] == '.');
}

// Display width of UTF-8 text: counts code points, not bytes (×, µ, — take one column).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string pad(const std::string& s, std::size_t width, Align align) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return align == Align::kLeft ? s + fill : fill + s;
}

}  // namespace

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)),
      align_(headers_.size(), Align::kLeft),
      align_set_(headers_.size(), false) {}

void Table::set_align(std::size_t column, Align align) {
  KVSIM_ASSERT(column < align_.size(), "set_align: no such column");
  align_[column] = align;
  align_set_[column] = true;
}

void Table::add_row(std::vector<std::string> cells) {
  KVSIM_ASSERT(cells.size() == headers_.size(), "add_row: cell count differs from header count");
  rows_.push_back(std::move(cells));
}

void Table::add_separator() {
  rows_.emplace_back();
}

std::string Table::render() const {
  const std::size_t n = headers_.size();
  std::vector<std::size_t> width(n, 0);
  std::vector<Align> align = align_;
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = display_width(headers_[c]);
    bool numeric = true, any = false;
    for (const auto& row : rows_) {
      if (row.empty()) continue;
      width[c] = std::max(width[c], display_width(row[c]));
      if (!row[c].empty() && row[c] != "-") {
        any = true;
        numeric = numeric && looks_numeric(row[c]);
      }
    }
    if (!align_set_[c]) align[c] = (any && numeric) ? Align::kRight : Align::kLeft;
  }
  std::size_t total = 0;
  for (std::size_t c = 0; c < n; ++c) total += width[c] + (c + 1 < n ? 2 : 0);

  std::string out;
  if (!title_.empty()) out += title_ + "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < n; ++c) {
      l += pad(cells[c], width[c], align[c]);
      if (c + 1 < n) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) {
    if (row.empty()) {
      out += std::string(total, '-') + "\n";
    } else {
      line(row);
    }
  }
  return out;
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_escape(cells[i]);
  }
  return out + "\n";
}

std::string Table::render_csv() const {
  std::string out = csv_line(headers_);
  for (const auto& row : rows_) {
    if (!row.empty()) out += csv_line(row);
  }
  return out;
}

void KeyValueTable::add(std::string key, std::string value, std::string note) {
  rows_.push_back({std::move(key), std::move(value), std::move(note), false, false});
}

void KeyValueTable::add_text(std::string key, std::string text) {
  rows_.push_back({std::move(key), std::move(text), "", false, true});
}

void KeyValueTable::add_section(std::string heading) {
  rows_.push_back({std::move(heading), "", "", true, false});
}

std::string KeyValueTable::render() const {
  // Values are right-aligned (numbers line up); text rows start where the column starts and do
  // not widen it.
  std::size_t kw = 0, vw = 0;
  for (const auto& r : rows_) {
    if (r.section) continue;
    kw = std::max(kw, display_width(r.key));
    if (!r.text) vw = std::max(vw, display_width(r.value));
  }
  std::string out;
  if (!title_.empty()) out += title_ + "\n";
  for (const auto& r : rows_) {
    if (r.section) {
      out += "\n" + r.key + "\n";
      continue;
    }
    std::string l = "  " + pad(r.key, kw, Align::kLeft) + "  " +
                    (r.text ? r.value : pad(r.value, vw, Align::kRight));
    if (!r.note.empty()) l += "  " + r.note;
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

}  // namespace kvsim::report
