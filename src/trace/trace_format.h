#pragma once
// The trace file formats kvsim reads, their names on the command line, and auto-detection.

#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kvsim::trace {

enum class TraceFormat {
  kAuto,      // detect from the header (and the extension for JSONL)
  kNative,    // arrival_s,prompt_tokens,output_tokens[,session_id,prefix_hashes]
  kAzure,     // TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference trace 2023/2024)
  kMooncake,  // JSONL {"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}
  kBurstGpt,  // Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type[,...]
  kVidur,     // arrived_at,num_prefill_tokens,num_decode_tokens (Vidur / Splitwise processed)
};

// "auto", "native", "azure", "mooncake", "burstgpt", "vidur".
std::string_view format_name(TraceFormat format);
// Every accepted name, in the order above.
std::vector<std::string> trace_format_names();
// A name (case-insensitive; "splitwise" is an alias of "vidur") → format. Throws kvsim::Error
// at `where` with a "did you mean" suggestion otherwise.
TraceFormat parse_trace_format(std::string_view name, const ErrorLocation& where);

// The header columns a CSV format reads (nullptr: the format has none of that kind); all nullptr
// for kAuto and kMooncake. Detection looks for the arrival, prompt and output columns.
struct CsvColumns {
  const char* arrival = nullptr;
  const char* prompt = nullptr;
  const char* output = nullptr;
  const char* session = nullptr;
  const char* hashes = nullptr;
};
CsvColumns csv_columns(TraceFormat format);

// The format of a file from its first line (header, or a JSON object) and its extension.
// `first_line` has any BOM and line terminator removed. Throws kvsim::Error naming the file
// (line 1) when no format matches, listing what was expected.
TraceFormat detect_trace_format(const std::string& path, std::string_view first_line);

}  // namespace kvsim::trace
