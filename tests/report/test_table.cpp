// report/table.cpp: aligned text tables, key-value tables and RFC 4180 CSV from the same rows.
#include <string>

#include <catch2/catch.hpp>

#include "report/table.h"

using namespace kvsim::report;

namespace {

std::string sp(std::size_t n) {
  return std::string(n, ' ');
}

}  // namespace

TEST_CASE("table: numeric columns align right, text left; rules span the table",
          "[report][table]") {
  Table t({"name", "tokens"});
  t.set_title("Requests");
  t.add_row({"a", "1,024"});
  t.add_separator();
  t.add_row({"longer", "5"});
  CHECK(t.num_rows() == 3);
  const std::string rule(14, '-');
  CHECK(t.render() ==
        "Requests\n"
        "name    tokens\n" +
            rule + "\n" + "a" + sp(8) + "1,024\n" + rule + "\n" + "longer" + sp(7) + "5\n");
  t.set_align(1, Align::kLeft);
  t.set_align(0, Align::kRight);
  CHECK(t.render() ==
        "Requests\n"
        "  name  tokens\n" +
            rule + "\n" + sp(5) + "a  1,024\n" + rule + "\n" + "longer  5\n");
}

TEST_CASE("table: width counts UTF-8 code points; '-' cells do not make a column text",
          "[report][table]") {
  Table t({"x", "ratio"});
  t.add_row({"µs", "-"});
  t.add_row({"×", "8.0x"});
  CHECK(t.render() == "x   ratio\n---------\nµs      -\n×    8.0x\n");
}

TEST_CASE("table: CSV has the header and rows, no title or separators, cells quoted as needed",
          "[report][table][csv]") {
  Table t({"id", "note"});
  t.set_title("ignored");
  t.add_row({"1", "a,b"});
  t.add_separator();
  t.add_row({"2", "say \"hi\""});
  t.add_row({"3", "two\nlines"});
  CHECK(t.render_csv() == "id,note\n1,\"a,b\"\n2,\"say \"\"hi\"\"\"\n3,\"two\nlines\"\n");
  CHECK(csv_escape("plain") == "plain");
  CHECK(csv_escape("cr\r") == "\"cr\r\"");
  CHECK(csv_escape("") == "");
  CHECK(csv_line({"a", "", "c"}) == "a,,c\n");
}

TEST_CASE("key-value table: keys left, values right, notes after, sections as headings",
          "[report][table]") {
  KeyValueTable t;
  t.set_title("KV cache");
  t.add("model", "llama");
  t.add("kv bytes", "327,680", "per token");
  t.add_section("Memory");
  t.add("free", "1");
  CHECK(t.render() ==
        "KV cache\n"
        "  model" +
            sp(7) + "llama\n" +
            "  kv bytes  327,680  per token\n"
            "\nMemory\n"
            "  free" +
            sp(12) + "1\n");
}

TEST_CASE("key-value table: a text row starts where the values do and does not widen them",
          "[report][table]") {
  KeyValueTable t;
  t.add("step time", "53.4 ms");
  t.add_text("batch", "prefill 100, prefill 200, decode 4 × context 100");
  t.add("tokens/s", "5691");
  // The numbers align on the widest value (7 columns); the text neither pads nor widens.
  CHECK(t.render() ==
        "  step time  53.4 ms\n"
        "  batch      prefill 100, prefill 200, decode 4 × context 100\n"
        "  tokens/s      5691\n");
}
