#pragma once
// One request of a workload, as every reader and generator yields it, and the streaming
// interface they share. Readers hold O(1) state: memory never grows with the trace length.

#include <cstdint>
#include <string>
#include <vector>

#include "common/int_math.h"
#include "common/units.h"

namespace kvsim::trace {

struct RequestSpec {
  std::uint64_t id = 0;            // 0-based position in the workload, in arrival order
  TimeNs arrival_ns = 0;           // relative to the first request (>= 0, non-decreasing)
  std::int64_t prompt_tokens = 0;  // >= 1
  std::int64_t output_tokens = 0;  // >= 1
  std::string session_id;          // empty when the source has none
  // Content ids of the prompt's leading blocks, `prefix_block_tokens` tokens each (Mooncake
  // hash_ids: 512). Two requests with the same id at the same position share that prefix block.
  // Ids past the ceil(prompt_tokens / prefix_block_tokens) the prompt needs are its output's
  // blocks, in order (a conversation's next turn begins with this turn's prompt and output):
  // they are cached as they fill. Empty when the source has none.
  std::vector<std::uint64_t> prefix_hashes;
  std::int64_t prefix_block_tokens = 0;  // 0 when prefix_hashes is empty
};

// The prefix hashes the prompt itself needs, ceil(prompt_tokens / prefix_block_tokens); hashes
// past them are its output's (RequestSpec::prefix_hashes). 0 without hashes.
inline std::int64_t prompt_hash_blocks(const RequestSpec& r) {
  return r.prefix_block_tokens > 0 ? ceil_div(r.prompt_tokens, r.prefix_block_tokens) : 0;
}

// What a reader saw, for reports ("rows skipped", "prompts truncated").
struct ReaderStats {
  std::int64_t rows_read = 0;         // data rows seen (header excluded)
  std::int64_t requests = 0;          // requests yielded
  std::int64_t bad_rows_skipped = 0;  // malformed rows skipped under --skip-bad-rows
  std::int64_t failed_requests =
      0;  // rows that record a failed request (BurstGPT: 0 response tokens)
  std::int64_t truncated_prompts = 0;  // prompts cut to --max-model-len
  // Rows whose arrival went backwards by at most the reader's tolerance (1 ms) and were moved up
  // to the previous arrival (float rounding in the source); farther back is a bad row.
  std::int64_t clamped_arrivals = 0;
};

// Optional columns a source's requests may carry (a trace writer picks its header from this).
struct TraceColumns {
  bool session_id = false;
  bool prefix_hashes = false;
};

// Interface: a source of requests in arrival order (a file reader, a generator, a transform).
class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Fills `out` with the next request and returns true; false at the end. Throws kvsim::Error
  // (file, line, column) on bad input unless the reader was told to skip bad rows.
  virtual bool next(RequestSpec& out) = 0;
  virtual ReaderStats stats() const = 0;
  // Short description for reports, e.g. "azure-csv ../shared/data/.../conv.csv".
  virtual std::string describe() const = 0;
  // Which optional RequestSpec fields this source fills. Default: none.
  virtual TraceColumns columns() const { return {}; }
};

}  // namespace kvsim::trace
