#include <catch2/catch.hpp>

#include "common/error.h"
#include "config/yaml_reader.h"
#include "test_util.h"

using kvsim::Error;
using kvsim::config::load_yaml_text;
using kvsim::config::MapReader;

using kvsim::test::error_of;

TEST_CASE("MapReader reads typed fields and reports bad ones with location", "[config]") {
  const auto root =
      load_yaml_text("name: x\nattention:\n  kv_heads: -8\n  q_heads: 64\n", "m.yaml");
  MapReader r(root, "m.yaml");
  CHECK(r.get_string("name") == "x");
  MapReader att = r.get_map("attention");
  CHECK(att.get_positive_int("q_heads") == 64);
  CHECK(error_of([&] { att.get_positive_int("kv_heads"); }) ==
        "m.yaml:3:13: attention.kv_heads: expected a positive integer, got '-8'");
}

TEST_CASE("MapReader rejects unknown keys with a suggestion", "[config]") {
  const auto root = load_yaml_text("kv_head: 8\nq_heads: 64\n", "m.yaml");
  MapReader r(root, "m.yaml");
  r.optional_int("kv_heads");
  r.get_int("q_heads");
  CHECK(error_of([&] { r.finish(); }) ==
        "m.yaml:1:1: kv_head: unknown key 'kv_head', did you mean 'kv_heads'?");
}

TEST_CASE("MapReader reports a missing field and a wrong type", "[config]") {
  const auto root = load_yaml_text("layers: eighty\n", "m.yaml");
  MapReader r(root, "m.yaml");
  CHECK(error_of([&] { r.get_int("hidden_size"); }) ==
        "m.yaml:1:1: hidden_size: missing required field");
  CHECK(error_of([&] { r.get_int("layers"); }) ==
        "m.yaml:1:9: layers: expected an integer, got 'eighty'");
}

TEST_CASE("YAML syntax errors carry line and column", "[config]") {
  const std::string msg = error_of([] { load_yaml_text("a: [1, 2\nb: 3\n", "bad.yaml"); });
  CHECK(msg.rfind("bad.yaml:", 0) == 0);
  CHECK(msg.find("invalid YAML") != std::string::npos);
}
