// report/html_page.cpp: the page shell: escaped title, data that cannot close its script, nothing
// fetched from the network.
#include <catch2/catch.hpp>

#include "report/html.h"

using namespace kvsim::report;

TEST_CASE("html: the page is self-contained and its data cannot close the script",
          "[report][html]") {
  const std::string page =
      html_page("a <b> & \"c\"", "plan", Json{{"label", "</script><script>alert(1)"}});
  CHECK(page.find("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>") != std::string::npos);
  CHECK(page.find("</script><script>alert") == std::string::npos);
  CHECK(page.find("\\u003c/script>\\u003cscript>alert(1)") != std::string::npos);
  for (const char* fetch : {"src=", "href=\"http", "url(", "@import", "fetch(", "XMLHttpRequest"}) {
    CHECK(page.find(fetch) == std::string::npos);
  }
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
}
