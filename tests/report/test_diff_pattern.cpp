// report/diff_pattern.cpp: the glob patterns of --only, --ignore and per-metric rules.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "report/diff.h"

using kvsim::Error;
using namespace kvsim::report;

TEST_CASE("diff: glob patterns", "[report][diff]") {
  CHECK(path_matches("kvsim_version", "kvsim_version"));
  CHECK_FALSE(path_matches("kvsim_version", "kvsim_versions"));
  CHECK(path_matches("summary.*.p99", "summary.ttft_s.p99"));
  CHECK_FALSE(path_matches("summary.*", "summaryx.ttft_s"));
  CHECK(path_matches("summary.*", "summary.ttft_s.p99"));  // ancestor summary.ttft_s
  CHECK_FALSE(path_matches("*.p99", "summary.ttft_s.p99"));
  CHECK(path_matches("**.p99", "summary.ttft_s.p99"));
  CHECK(path_matches("runs[*].summary", "runs[12].summary.ttft_s.p99"));
  CHECK(path_matches("runs[1]", "runs[1].x"));
  CHECK_FALSE(path_matches("runs[1]", "runs[10].x"));
  CHECK(path_matches("timeline", "timeline[3].t"));
  CHECK(path_matches("ttft_s.p9?", "ttft_s.p95"));
}

TEST_CASE("diff: glob matching is linear: no exponential backtracking", "[report][diff]") {
  const std::string key(60, 'a');
  CHECK_FALSE(path_matches("*a*a*a*a*a*a*a*a*a*b", key));
  CHECK(path_matches("*a*a*a*a*a*a*a*a*a*a", key));
  CHECK_FALSE(path_matches("**a**a**a**a**a**a**a**a**a**b", key + "." + key));
  // Semantics kept: '*' stays within a segment, '**' crosses, a leading '**.' may match nothing.
  CHECK(glob_matches("**.p99", "p99"));
  CHECK(glob_matches("**.p99", "a.b.p99"));
  CHECK_FALSE(glob_matches("**.p99", "xp99"));
  CHECK_FALSE(glob_matches("a*c", "ab.c"));
  CHECK(glob_matches("a**c", "ab.c"));
  CHECK(glob_matches("a***c", "ab.c"));
  CHECK(glob_matches("", ""));
  CHECK_FALSE(glob_matches("", "a"));
  CHECK(glob_matches("*", ""));
}
