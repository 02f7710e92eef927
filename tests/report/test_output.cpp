// report/output.cpp: --format parsing and emit(): JSON to --out atomically, the chosen rendering
// to stdout, errors before anything is written.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "report/output.h"
#include "test_util.h"

using namespace kvsim;
using namespace kvsim::report;
using Catch::Matchers::Contains;

namespace {

// What `body` writes to std::cout.
template <typename Body>
std::string stdout_of(Body body) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    body();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}

struct Counting {
  int json = 0, table = 0, csv = 0;
  Renderers renderers(bool with_csv = true) {
    Renderers r;
    r.json = [this] {
      ++json;
      return std::string("{\"a\": 1}\n");
    };
    r.table = [this] {
      ++table;
      return std::string("a  1\n");
    };
    if (with_csv) {
      r.csv = [this] {
        ++csv;
        return std::string("a\n1\n");
      };
    }
    return r;
  }
};

}  // namespace

TEST_CASE("output: formats by name; anything else names --format with a suggestion",
          "[report][output]") {
  CHECK(parse_format("table") == Format::kTable);
  CHECK(parse_format("json") == Format::kJson);
  CHECK(parse_format("csv") == Format::kCsv);
  try {
    parse_format("jsn");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.location().field == "--format");
    CHECK_THAT(e.message(),
               Contains("expected table|json|csv, got 'jsn'") && Contains("did you mean 'json'"));
  }
}

TEST_CASE("output: each rendering is made only when needed", "[report][output]") {
  Counting c;
  CHECK(stdout_of([&] { emit({"table", ""}, c.renderers(), "kv"); }) == "a  1\n");
  CHECK(stdout_of([&] { emit({"csv", ""}, c.renderers(), "kv"); }) == "a\n1\n");
  CHECK(stdout_of([&] { emit({"json", ""}, c.renderers(), "kv"); }) == "{\"a\": 1}\n");
  CHECK(c.json == 1);
  CHECK(c.table == 1);
  CHECK(c.csv == 1);
}

TEST_CASE("output: --out gets the JSON whatever stdout shows", "[report][output]") {
  const std::string dir = test::temp_dir();
  const std::string out = dir + "/r.json";
  Counting c;
  CHECK(stdout_of([&] { emit({"table", out}, c.renderers(), "kv"); }) == "a  1\n");
  CHECK(test::slurp(out) == "{\"a\": 1}\n");
  CHECK(c.json == 1);
  CHECK(stdout_of([&] { emit({"json", out}, c.renderers(), "kv"); }) == "{\"a\": 1}\n");
  CHECK(c.json == 2);  // rendered once for both
}

TEST_CASE("output: a command without CSV, a bad format or an unwritable --out writes nothing",
          "[report][output]") {
  const std::string dir = test::temp_dir();
  const std::string out = dir + "/r.json";
  Counting c;
  std::string printed;
  CHECK_THROWS_WITH(printed = stdout_of([&] {
                      emit({"csv", out}, c.renderers(false), "trace");
                    }),
                    Contains("'trace' has no CSV form; use table or json"));
  CHECK_THROWS_WITH(stdout_of([&] {
                      emit({"yaml", out}, c.renderers(), "kv");
                    }),
                    Contains("got 'yaml'"));
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(c.json + c.table + c.csv == 0);
  CHECK_THROWS_AS(stdout_of([&] {
                    emit({"table", dir + "/no/such/dir/r.json"}, c.renderers(), "kv");
                  }),
                  Error);
  CHECK(c.table == 0);  // nothing printed before the failed write
  CHECK(printed.empty());
}
