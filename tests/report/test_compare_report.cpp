// report/compare_report.cpp: the compare table, seen through `kvsim compare --format table`.
#include <string>

#include <catch2/catch.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::source_dir;

TEST_CASE("cli: the compare table shows unfinished requests, SLO rows, no ratio to zero",
          "[cli][habits]") {
  const auto r = run_kvsim({"compare", "--config",
                            source_dir() + "/configs/scenarios/opt-13b-a100-sharegpt.yaml",
                            "--allocator", "paged,contiguous-max", "--time-limit", "30",
                            "--slo-ttft", "2000", "--slo-tpot", "200", "--format", "table"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("unfinished (at the time limit)") != std::string::npos);
  CHECK(r.out.find("SLO attainment") != std::string::npos);
  CHECK(r.out.find("goodput (req/s)") != std::string::npos);
  CHECK(r.out.find("TTFT p99 <= 2000 ms") != std::string::npos);
  CHECK(r.out.find("all SLOs met") != std::string::npos);
  // Paged has no external fragmentation: the contiguous column gets no ratio to 0.0%.
  const std::size_t line = r.out.find("KV external fragmentation");
  REQUIRE(line != std::string::npos);
  const std::string ext = r.out.substr(line, r.out.find('\n', line) - line);
  CHECK(ext.find("x)") == std::string::npos);
  CHECK(r.out.find("KV token states") != std::string::npos);
}
