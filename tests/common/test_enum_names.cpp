// common/enum_names.h: one table per enum, read both ways.
#include <catch2/catch.hpp>

#include "common/enum_names.h"
#include "cost/ops.h"
#include "memory/allocator.h"
#include "model/dtype.h"
#include "model/model_spec.h"
#include "trace/trace_format.h"

using namespace kvsim;

namespace {

enum class Colour { kRed, kGreen, kBlue, kUnnamed };
constexpr EnumNames<Colour, 4> kColours{{{
    {Colour::kRed, "red"},
    {Colour::kGreen, "green"},
    {Colour::kBlue, "blue"},
    {Colour::kBlue, "navy"},  // an alias: parsed, never printed
}}};

}  // namespace

TEST_CASE("EnumNames reads a table both ways", "[common][enum]") {
  STATIC_REQUIRE(kColours.name(Colour::kGreen) == "green");
  STATIC_REQUIRE(kColours.parse("red") == Colour::kRed);
  CHECK(kColours.name(Colour::kBlue) == "blue");  // the first row of a value
  CHECK(kColours.parse("navy") == Colour::kBlue);
  CHECK(kColours.name(Colour::kUnnamed) == "?");
  CHECK_FALSE(kColours.parse("Red").has_value());  // exact match only
  CHECK(kColours.names() == std::vector<std::string>{"red", "green", "blue", "navy"});
}

TEST_CASE("Every enum table round-trips its names", "[common][enum]") {
  for (const std::string& n : memory::allocator_kind_names()) {
    CHECK(memory::allocator_kind_name(*memory::parse_allocator_kind(n)) == n);
  }
  for (const std::string& n : memory::placement_names()) {
    CHECK(memory::placement_name(*memory::parse_placement(n)) == n);
  }
  for (const std::string& n : cost::op_class_names()) {
    CHECK(cost::op_class_name(*cost::parse_op_class(n)) == n);
  }
  for (const std::string& n : model::dtype_names()) {
    CHECK(model::dtype_name(*model::parse_dtype(n)) == n);
  }
  for (const std::string& n : trace::trace_format_names()) {
    CHECK(trace::format_name(trace::parse_trace_format(n, {})) == n);
  }
  CHECK(model::layer_kind_name(model::LayerKind::kSlidingWindow) == "sliding");
  CHECK(model::attention_kind_name(model::AttentionKind::kMla) == "mla");
  CHECK(model::block_kind_name(model::BlockKind::kMamba) == "mamba");
  CHECK(model::block_kind_name(model::BlockKind::kLinearAttentionMlp) == "linear_attention_mlp");
}
