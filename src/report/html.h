#pragma once
// --html FILE on `simulate`, `compare` and `plan`: one self-contained HTML page per run (inline
// CSS, an inline script written here that draws SVG charts, the data as an inline JSON block; no
// network, no CDN). Deterministic: same result, same bytes.
//
// What each page shows:
//  - simulate: headline numbers; latency CDFs (TTFT, TPOT, E2E, from the percentile histograms:
//    201 quantiles, as accurate as the report's percentiles); the KV memory timeline per GPU,
//    stacked (token states + internal fragmentation, reservation, unallocated) with the
//    time-weighted breakdown in all five classes beside it; running and waiting requests over
//    time; requests completed per replica.
//  - compare: the memory breakdown of every run as side-by-side stacked bars (the
//    PagedAttention Figure 2 view), throughput and latency percentiles as grouped bars, and the
//    TTFT and E2E CDFs of all runs overlaid.
//  - plan: cost per hour against capacity (max sustainable req/s) for every deployment, with the
//    Pareto front (no other deployment is both cheaper and more capable) drawn and listed, and
//    the ranking by cost.
// The page sets <body data-kvsim-rendered="ok"> once every chart is drawn, and records script
// errors in <pre id="kvsim-errors">, so a headless browser test can check both.

#include <string>
#include <vector>

#include "report/compare_report.h"
#include "report/json.h"
#include "report/sim_report.h"

namespace kvsim::report {

// `report` is the simulate report (sim_report_json); `result` supplies the histograms and the
// timeline (drawn when result.timeline is not empty).
std::string simulate_html(const Json& report, const sim::SimResult& result);
std::string compare_html(const std::vector<CompareRun>& runs, const sim::SloOptions& slo);
// `plan` is the plan document (plan_json).
std::string plan_html(const Json& plan);

// Indices (into plan["deployments"]) of the cost-vs-capacity Pareto front: deployments with a
// capacity (max_rate_rps > 0) that no other beats on both cost_per_hour of one deployment
// (replicas × GPUs per replica × price) and max_rate_rps; by ascending cost.
std::vector<std::size_t> cost_capacity_front(const Json& plan);

// The page around `data` (made safe for an inline <script>): title, and the script that draws
// `kind` ("simulate" | "compare" | "plan"). Shared by the three writers above.
std::string html_page(const std::string& title, const std::string& kind, const Json& data);

}  // namespace kvsim::report
