// The HTML page around a report's data: CSS and a small SVG charting script (line, stacked
// area, bar and scatter charts, tables; html_page.js, embedded at build time), all inline. No
// network: nothing is fetched.
#include <string>

#include "report/html.h"
#include "report/html_script.h"  // generated from html_page.js (src/CMakeLists.txt)

namespace kvsim::report {
namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON that cannot end the <script> element it sits in.
std::string script_safe(std::string json) {
  std::string out;
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<') {
      out += "\\u003c";
    } else {
      out += json[i];
    }
  }
  return out;
}

constexpr const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.sub{color:#555;margin:0 0 16px}.grid{display:flex;flex-wrap:wrap;gap:16px}
.card{border:1px solid #ddd;border-radius:6px;padding:8px;background:#fafafa}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f0f0f0}
tr.front td{font-weight:600}.note{color:#777;font-style:italic}
#kvsim-errors{color:#b00;background:#fee;padding:8px}
svg text{font-size:11px;fill:#333}svg .title{font-size:13px;font-weight:600}
)CSS";

}  // namespace

std::string html_page(const std::string& title, const std::string& kind, const Json& data) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<link rel=\"icon\" href=\"data:,\">\n<title>" + escape_html(title) + "</title>\n";
  page += "<style>" + std::string(kStyle) + "</style>\n</head>\n";
  page += "<body data-kind=\"" + escape_html(kind) + "\">\n<h1>" + escape_html(title) + "</h1>\n";
  page += "<p class=\"sub\">kvsim " + escape_html(KVSIM_VERSION) +
          " · self-contained report: every chart is drawn by the script below, nothing is "
          "fetched</p>\n";
  page += "<pre id=\"kvsim-errors\" hidden></pre>\n<div id=\"charts\"></div>\n";
  page += "<script type=\"application/json\" id=\"kvsim-data\">" + script_safe(data.dump()) +
          "</script>\n";
  page += "<script>" + std::string(kHtmlScript) + "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace kvsim::report
