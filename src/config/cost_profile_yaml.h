#pragma once
// The `cost_model:` section of a hardware YAML ↔ model::CostProfile.
//
//   cost_model:
//     provenance: {kind: datasheet, device: ..., driver: ..., date: ..., kvsim_version: ...,
//     source: ...} step_overhead_us: 2000 op_classes:
//       gemm:        {compute: 0.7, memory: 0.8, launch_us: 5}
//       attn_decode: {compute: 0.5, memory: {log10_x: [5, 7, 9], y: [0.3, 0.6, 0.8]}, launch_us: 5}
//
// Framework overheads next to step_overhead_us (each 0..1e6 us): seq_overhead_us (per sequence
// scheduled in a step) and prefill_token_overhead_us (per prompt token scheduled in a step), both
// 0 when absent and written only when not 0; provenance.fitted_overheads lists the keys that
// kvsim calibrate --from-run fitted.

#include <string>
#include <string_view>

#include "config/yaml_reader.h"
#include "model/cost_profile.h"

namespace kvsim::config {

// Reads the section; bad values throw kvsim::Error located in the file.
model::CostProfile parse_cost_profile(MapReader& section);

// YAML text of the section (without the "cost_model:" key), indented by `indent` spaces.
std::string emit_cost_profile_yaml(const model::CostProfile& profile, int indent);

// `hardware_yaml` (a hardware YAML's text) with its top-level `cost_model:` section replaced by
// `profile` (appended when absent). Every other line, comments included, is kept as it is; the
// section ends at the next non-blank line that starts in column 1 (a key or a comment).
std::string replace_cost_model_section(std::string_view hardware_yaml,
                                       const model::CostProfile& profile);

}  // namespace kvsim::config
