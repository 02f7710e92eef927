#pragma once
// One-line warnings on stderr for flags that do nothing in the configuration chosen (vLLM warns
// the same way): the run goes on, the user learns what was ignored. Each warns at most once.

#include <vector>

#include "cli/serving_flags.h"
#include "memory/allocator.h"

namespace kvsim::cli {

// Before the run: --cv without gamma arrivals; --placement when every allocator used is paged
// (`allocators`: those the command will run); prefix caching on a workload whose source has no
// prefix hashes (nothing could ever be shared); the prefill instances' settings without
// --prefill-replicas; serial sessions on a workload without session ids.
void warn_inert_flags(const SimCommandFlags& flags, const PreparedRun& run,
                      const std::vector<memory::AllocatorKind>& allocators);

}  // namespace kvsim::cli
