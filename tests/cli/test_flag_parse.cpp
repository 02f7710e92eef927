// cli/flag_parse.cpp: strict flag values; every failure names the flag, what was expected and
// what was given.
#include <string>

#include <catch2/catch.hpp>

#include "cli/flag_parse.h"
#include "common/error.h"

using namespace kvsim;
using namespace kvsim::cli;

namespace {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.location().field + ": " + e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("flag parse: integers and numbers take the whole text", "[cli][flags]") {
  CHECK(int_flag("--seed", "42", "an integer") == 42);
  CHECK(int_flag("--seed", "-7", "an integer") == -7);
  CHECK(double_flag("--rate", "2.5", "a rate") == 2.5);
  CHECK(double_flag("--rate", "1e3", "a rate") == 1000);
  CHECK(error_of([] { int_flag("--seed", "4x", "an integer"); }) ==
        "--seed: expected an integer, got '4x'");
  CHECK(error_of([] { int_flag("--seed", "1.5", "an integer"); }) ==
        "--seed: expected an integer, got '1.5'");
  CHECK(error_of([] { double_flag("--rate", "", "requests per second"); }) ==
        "--rate: expected requests per second, got ''");
  CHECK(flag_error("--x", "bad").location().field == "--x");
}

TEST_CASE("flag parse: lower bounds say positive, non-negative or >= lo", "[cli][flags]") {
  CHECK(int_at_least("--block-size", "16", 1) == 16);
  CHECK(int_at_least("--time-limit", "0", 0) == 0);
  CHECK(int_at_least("--tp", "2", 2) == 2);
  CHECK(error_of([] { int_at_least("--block-size", "0", 1); }) ==
        "--block-size: expected a positive integer, got '0'");
  CHECK(error_of([] { int_at_least("--time-limit", "-1", 0); }) ==
        "--time-limit: expected a non-negative integer, got '-1'");
  CHECK(error_of([] { int_at_least("--tp", "1", 2); }) ==
        "--tp: expected a positive integer >= 2, got '1'");
  CHECK(error_of([] { int_at_least("--tp", "two", 2); }) ==
        "--tp: expected a positive integer >= 2, got 'two'");
}

TEST_CASE("flag parse: ranges are closed, or open at the low end when asked", "[cli][flags]") {
  CHECK(number_in("--util", "1", 0, 1, true, "a fraction in (0, 1]") == 1);
  CHECK(number_in("--watermark", "0", 0, 1, false, "a fraction in [0, 1]") == 0);
  CHECK(error_of([] { number_in("--util", "0", 0, 1, true, "a fraction in (0, 1]"); }) ==
        "--util: expected a fraction in (0, 1], got '0'");
  CHECK(error_of([] { number_in("--util", "1.0001", 0, 1, true, "a fraction in (0, 1]"); }) ==
        "--util: expected a fraction in (0, 1], got '1.0001'");
  CHECK(error_of([] { number_in("--watermark", "nope", 0, 1, false, "a fraction"); }) ==
        "--watermark: expected a fraction, got 'nope'");
}
