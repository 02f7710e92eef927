// trace/python_literal.cpp: the Python literal reader under DistServe's .exp files: values with
// their positions, an optional summary block, and located errors.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "trace/python_literal.h"

using namespace kvsim;
using namespace kvsim::trace;
using Kind = PyValue::Kind;

namespace {

PyValue parse(const std::string& text) {
  std::vector<std::pair<std::string, double>> summary;
  return parse_python_literal(text, "r.exp", summary);
}

// "line:column field: message" of the error parsing `text`.
std::string error_at(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    const ErrorLocation& l = e.location();
    CHECK(l.file == "r.exp");
    return std::to_string(l.line) + ":" + std::to_string(l.column) + " " + l.field + ": " +
           e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("python literal: scalars, lists, tuples and dicts with their positions",
          "[trace][python]") {
  const PyValue v = parse(
      "[{'id': 7, \"ok\": True, 'none': None},  # a comment\n"
      " (2.5, -1e3, 'a\\'b\\n'), nan, inf, False,]");
  REQUIRE(v.kind == Kind::kList);
  CHECK(v.line == 1);
  CHECK(v.column == 1);
  REQUIRE(v.items.size() == 5);  // the trailing comma is allowed
  const PyValue& d = v.items[0];
  REQUIRE(d.kind == Kind::kDict);
  CHECK(d.keys == std::vector<std::string>{"id", "ok", "none"});
  CHECK(d.column == 2);
  REQUIRE(dict_get(d, "id"));
  CHECK(dict_get(d, "id")->number == 7);
  CHECK(dict_get(d, "id")->column == 9);
  CHECK(dict_get(d, "ok")->kind == Kind::kBool);
  CHECK(dict_get(d, "ok")->boolean);
  CHECK(dict_get(d, "none")->kind == Kind::kNone);
  CHECK(dict_get(d, "missing") == nullptr);
  const PyValue& t = v.items[1];
  REQUIRE(t.kind == Kind::kList);  // a tuple reads as a list
  CHECK(t.line == 2);
  CHECK(t.column == 2);
  REQUIRE(t.items.size() == 3);
  CHECK(t.items[0].number == 2.5);
  CHECK(t.items[1].number == -1000);
  CHECK(t.items[2].kind == Kind::kString);
  CHECK(t.items[2].text == "a'b\n");
  CHECK(std::isnan(v.items[2].number));
  CHECK(std::isinf(v.items[3].number));
  CHECK(v.items[4].kind == Kind::kBool);
  CHECK_FALSE(v.items[4].boolean);
  CHECK(parse("[]").items.empty());
  CHECK(parse("{}").keys.empty());
}

TEST_CASE("python literal: the summary block after the literal gives its numbers in order",
          "[trace][python]") {
  std::vector<std::pair<std::string, double>> summary;
  const PyValue v = parse_python_literal("[1]\n{\n\tavg_latency: 0.25\n\tthroughput :  12\n}\n",
                                         "r.exp", summary);
  CHECK(v.items.size() == 1);
  REQUIRE(summary.size() == 2);
  CHECK(summary[0] == std::pair<std::string, double>{"avg_latency", 0.25});
  CHECK(summary[1] == std::pair<std::string, double>{"throughput", 12});
}

TEST_CASE("python literal: malformed input is an error at its line and column", "[trace][python]") {
  CHECK(error_at("[1 2]") == "1:4 : expected ',' or ']'");
  CHECK(error_at("(1,\n 2") == "2:3 : expected ',' or ')'");
  CHECK(error_at("{1: 2}") == "1:3 : expected a string key");
  CHECK(error_at("{'a' 2}") == "1:6 a: expected ':' after the key");
  CHECK(error_at("['abc") == "1:6 : unterminated string");
  CHECK(error_at("[null]") ==
        "1:2 : unexpected name 'null', expected a number, string, list, dict, None, True or False");
  CHECK(error_at("") == "1:1 : unexpected end of file, expected a value");
  CHECK(error_at("[1] [2]") == "1:5 : unexpected text after the literal");
  CHECK(error_at("[1]\n{\n x 1\n}") == "3:2 : expected 'key: number' in the summary block");
  CHECK(error_at("[1]\n{\n x: 'a'\n}") == "3:8 x: expected a number");
  CHECK(error_at("[1]\n{\n x: 1\n") == "4:1 : unterminated summary block, expected '}'");
  CHECK(error_at("[@]") == "1:2 : expected a value");
}
