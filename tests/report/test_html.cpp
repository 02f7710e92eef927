// The --html pages of simulate, compare and plan, rendered by a real browser (headless
// Chromium): no console message, no script error, every chart drawn, a screenshot that is not
// blank. Skips with a message when chromium is not installed (scripts/setup installs it).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::slurp;
using kvsim::test::source_dir;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;

namespace {

std::string chromium_binary() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return name;
  }
  return "";
}

std::string chromium_command(const std::string& browser, const std::string& dir) {
  return browser + " --headless --no-sandbox --disable-gpu --no-first-run " +
         "--disable-background-networking --disable-extensions --user-data-dir=" + dir +
         "/profile --enable-logging=stderr --v=0 --virtual-time-budget=10000 ";
}

struct Rendered {
  std::string dom;
  std::string log;
  std::uintmax_t png_bytes = 0;
};

Rendered render(const std::string& browser, const std::string& html, const std::string& png) {
  const std::string dir = temp_dir();
  Rendered r;
  const std::string base = chromium_command(browser, dir);
  const std::string url = "file://" + std::filesystem::absolute(html).string();
  const std::string dump =
      base + "--dump-dom '" + url + "' > " + dir + "/dom.html 2> " + dir + "/dom.log";
  REQUIRE(std::system(dump.c_str()) == 0);
  r.dom = slurp(dir + "/dom.html");
  r.log = slurp(dir + "/dom.log");
  const std::string shot = base + "--hide-scrollbars --window-size=1280,2600 --screenshot=" + png +
                           " '" + url + "' > " + dir + "/shot.log 2>&1";
  REQUIRE(std::system(shot.c_str()) == 0);
  r.log += slurp(dir + "/shot.log");
  r.png_bytes = std::filesystem::exists(png) ? std::filesystem::file_size(png) : 0;
  return r;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Where the screenshots go: KVSIM_HTML_SCREENSHOTS (to look at them), else a temp folder.
std::string shot_dir() {
  const char* env = std::getenv("KVSIM_HTML_SCREENSHOTS");
  if (env != nullptr && *env != '\0') {
    std::filesystem::create_directories(env);
    return env;
  }
  return temp_dir();
}

void check_page(const std::string& browser, const std::string& html, const std::string& name,
                std::size_t min_charts, std::uintmax_t blank_bytes) {
  INFO(name);
  const std::string page = slurp(html);
  REQUIRE(!page.empty());
  // Self-contained: nothing to fetch (the only URL is the SVG namespace name).
  for (const char* fetch : {"src=", "href=\"http", "url(", "@import", "fetch(", "XMLHttpRequest"}) {
    CHECK(page.find(fetch) == std::string::npos);
  }
  const Rendered r = render(browser, html, shot_dir() + "/" + name + ".png");
  INFO(r.log);
  CHECK(r.dom.find("data-kvsim-rendered=\"ok\"") != std::string::npos);
  CHECK(r.dom.find("<pre id=\"kvsim-errors\" hidden=\"\"></pre>") != std::string::npos);
  CHECK(r.log.find(":CONSOLE") == std::string::npos);  // any console message at all
  CHECK(count(r.dom, "<svg") >= min_charts);
  // Not blank: charts compress far worse than an empty white page of the same size (about
  // 15 KB at 1280 × 2600; the sparsest page, plan, is 100 KB).
  CHECK(r.png_bytes > 3 * blank_bytes);
}

}  // namespace

TEST_CASE("html: simulate, compare and plan pages render in headless Chromium",
          "[report][html][browser]") {
  const std::string browser = chromium_binary();
  if (browser.empty()) {
    WARN("chromium not installed (scripts/setup installs it): browser test skipped");
    return;
  }
  const std::string dir = temp_dir();
  const std::string blank = write_temp_file(dir, "blank.html", "<!DOCTYPE html><html></html>");
  const Rendered empty = render(browser, blank, dir + "/blank.png");
  REQUIRE(empty.png_bytes > 0);

  const std::string root = source_dir();
  const std::string trace = root + "/traces/sharegpt_like.csv";
  auto r = run_kvsim({"simulate",
                      "--model",
                      "llama-3-8b",
                      "--gpu",
                      "l4",
                      "--trace",
                      trace,
                      "--rate-scale",
                      "2",
                      "--replicas",
                      "2",
                      "--max-requests",
                      "300",
                      "--slo-ttft",
                      "2000",
                      "--slo-tpot",
                      "100",
                      "--html",
                      dir + "/sim.html",
                      "--format",
                      "json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"timeline\"") == std::string::npos);  // the page's timeline stays out
  check_page(browser, dir + "/sim.html", "simulate", 7, empty.png_bytes);

  r = run_kvsim({"compare", "--config", root + "/configs/scenarios/opt-13b-a100-sharegpt.yaml",
                 "--allocator", "contiguous-max,contiguous-pow2,contiguous-oracle,paged",
                 "--time-limit", "60", "--html", dir + "/compare.html", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  check_page(browser, dir + "/compare.html", "compare", 5, empty.png_bytes);

  const std::string sweep = write_temp_file(
      dir, "sweep.yaml",
      "model: llama-3-8b\ngpu: [h100-sxm, a100-80gb, l4]\ntensor_parallel_size: [1, 2]\n"
      "serving: {max_num_seqs: 16}\ncost_model: roofline\n"
      "slo: {ttft_ms: 1000, tpot_ms: 60, percentile: 95}\nseed: 3\n"
      "workload:\n  synthetic: {arrival: poisson, rate: 4, num_requests: 300,\n"
      "    prompt_tokens: \"uniform:50:1500\", output_tokens: \"uniform:10:300\"}\n"
      "plan: {target_rate: 20}\n");
  r = run_kvsim({"plan", "--config", sweep, "--search-tolerance", "0.1", "--no-progress", "--html",
                 dir + "/plan.html", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  check_page(browser, dir + "/plan.html", "plan", 1, empty.png_bytes);
}

TEST_CASE("html: a script error is caught and shown, so the browser test can see it",
          "[report][html][browser]") {
  const std::string browser = chromium_binary();
  if (browser.empty()) {
    WARN("chromium not installed: browser test skipped");
    return;
  }
  // The checks above see console output and an unfinished page: a page that logs an error and
  // never marks itself rendered fails both.
  const std::string dir = temp_dir();
  const std::string bad = write_temp_file(
      dir, "bad.html",
      "<!DOCTYPE html><html><body data-kind=\"plan\"><pre id=\"kvsim-errors\" hidden></pre>"
      "<div id=\"charts\"></div><script>console.error('boom');</script></body></html>");
  const Rendered r = render(browser, bad, dir + "/bad.png");
  CHECK(r.log.find(":CONSOLE") != std::string::npos);
  CHECK(r.dom.find("data-kvsim-rendered") == std::string::npos);
}
