#pragma once
// `kvsim compare`: one workload through several allocators and/or schedulers, side by side.
//
// JSON "kvsim.compare/v1": {schema, kvsim_version, command, runs: [kvsim.report/v1, ...]}, one
// full report per run in the order given, each with an added "label" ("paged / vllm").
// Table: one column per run; memory breakdown, throughput, latency percentiles, preemptions and
// the saturation verdict, each number followed by its ratio to the first column. CSV: a label
// column and the simulate CSV's fields, one row per run.

#include <string>
#include <vector>

#include "report/json.h"
#include "report/sim_report.h"

namespace kvsim::report {

struct CompareRun {
  std::string label;
  SimReportInputs inputs;
  sim::SimResult result;
};

Json compare_json(const std::vector<CompareRun>& runs, const sim::SloOptions& slo);
std::string compare_table(const std::vector<CompareRun>& runs, const sim::SloOptions& slo);
std::string compare_csv(const std::vector<CompareRun>& runs, const sim::SloOptions& slo);

}  // namespace kvsim::report
