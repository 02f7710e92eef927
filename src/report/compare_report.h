#pragma once
// `kvsim compare`: one workload through several allocators and/or schedulers, side by side.
//
// JSON "kvsim.compare/v1": {schema, kvsim_version, command, runs: [kvsim.report/v1, ...]}, one
// full report per run in the order given, each with an added "label" ("paged / vllm").
// Table: one column per run; memory breakdown, requests completed / rejected / unfinished,
// throughput, latency percentiles, preemptions, with SLOs their attainment, goodput and each
// target met or missed, and the saturation verdict. Each number is followed by its ratio to the
// first column, except where the first column shows as zero in the row's format (no "43962x").
// CSV: a label column, the deployment's inputs (sim_csv_input_header) and the simulate CSV's
// fields, one row per run.

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
