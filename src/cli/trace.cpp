// `kvsim trace stats|gen|convert`: summarise a workload, generate a synthetic trace, convert a
// trace to the native CSV format.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/workload_flags.h"
#include "common/atomic_file.h"
#include "common/error.h"
#include "report/trace_report.h"
#include "trace/native_writer.h"
#include "trace/trace_stats.h"
#include "trace/workload.h"

namespace kvsim::cli {
namespace {

struct TraceCommandState {
  WorkloadFlags workload;
  report::OutputOptions output;
  std::string file;       // stats / convert: positional input
  std::string out_trace;  // gen: --out-trace; convert: --to
};

// The workload from a positional FILE (stats, convert) or the workload flags.
trace::WorkloadOptions resolve_options(const TraceCommandState& st, const char* command) {
  if (st.file.empty()) return workload_options_from_flags(st.workload);
  for (const auto* o : st.workload.all_options) {
    const bool conflicts = o->count() > 0 && (o->check_lname("trace") ||
                                              std::find(st.workload.generator_options.begin(),
                                                        st.workload.generator_options.end(),
                                                        o) != st.workload.generator_options.end());
    if (conflicts) {
      throw Error(ErrorLocation{"", 0, 0, o->get_name()},
                  std::string("expected either a FILE argument or workload flags for 'kvsim ") +
                      command + "', got both");
    }
  }
  trace::WorkloadOptions base;
  base.source = trace::WorkloadOptions::Source::kTrace;
  base.trace.path = st.file;
  return workload_options_from_flags(st.workload, base, true);
}

// Streams the workload into `sink` as native CSV (when given) and summarises what was written.
struct Drained {
  trace::TraceStats stats;
  std::string source;
};
Drained drain(const trace::Workload& workload, std::FILE* sink, const std::string& sink_name) {
  auto reader = workload.open();
  std::unique_ptr<trace::NativeCsvWriter> writer;
  if (sink != nullptr) {
    writer = std::make_unique<trace::NativeCsvWriter>(sink, reader->columns(), sink_name);
  }
  trace::TraceStatsAccumulator acc;
  trace::RequestSpec r;
  while (reader->next(r)) {
    acc.add(r);
    if (writer) writer->write(r);
  }
  if (writer) writer->flush();
  return {acc.finish(reader->stats()), reader->describe()};
}

void emit_stats(const TraceCommandState& st, const Drained& d, const trace::Workload& workload,
                const char* command, const std::string& output_path) {
  const auto json = [&] {
    report::Json j = report::trace_stats_json(d.stats, command, d.source, workload.resolved());
    if (!output_path.empty()) j["output"] = output_path;
    return report::dump(j);
  };
  report::emit(st.output,
               {json, [&] { return report::trace_stats_table(d.stats, d.source); },
                [&] { return report::trace_stats_csv(d.stats, d.source); }},
               command);
}

void run_stats(const TraceCommandState& st) {
  const trace::Workload workload(resolve_options(st, "trace stats"));
  const Drained d = drain(workload, nullptr, "");
  emit_stats(st, d, workload, "trace stats", "");
}

// Writes the workload to `path` atomically (or to stdout when empty) and reports on it.
void write_trace(const TraceCommandState& st, const trace::Workload& workload, const char* command,
                 const std::string& path) {
  if (path.empty()) {
    if (!st.output.format.empty()) {
      throw Error(ErrorLocation{"", 0, 0, "--format"},
                  "expected --out-trace FILE with --format: without it the trace itself is "
                  "written to stdout");
    }
    std::cout.flush();
    const Drained d = drain(workload, stdout, "<stdout>");
    std::fflush(stdout);
    if (!st.output.out_path.empty()) {
      write_file_atomically(
          st.output.out_path,
          report::dump(report::trace_stats_json(d.stats, command, d.source, workload.resolved())));
    }
    return;
  }
  trace::AtomicOutputFile file(path);
  const Drained d = drain(workload, file.file(), path);
  file.commit();
  emit_stats(st, d, workload, command, path);
}

void run_gen(const TraceCommandState& st) {
  trace::WorkloadOptions options = resolve_options(st, "trace gen");
  if (options.source != trace::WorkloadOptions::Source::kSynthetic) {
    throw Error(ErrorLocation{"", 0, 0, "--trace"},
                "expected generator flags for 'kvsim trace gen' (--rate, --prompt-len, ...); "
                "to rewrite a trace use 'kvsim trace convert FILE --to OUT'");
  }
  const trace::Workload workload(std::move(options));
  write_trace(st, workload, "trace gen", st.out_trace);
}

void run_convert(const TraceCommandState& st) {
  if (st.file.empty() && st.workload.trace.empty()) {
    throw Error(ErrorLocation{"", 0, 0, "FILE"}, "expected a trace file to convert");
  }
  const trace::Workload workload(resolve_options(st, "trace convert"));
  write_trace(st, workload, "trace convert", st.out_trace);
}

}  // namespace

void register_trace(CLI::App& app) {
  auto* command = app.add_subcommand("trace", "Trace tools: stats, gen, convert");
  command->require_subcommand(1);

  auto stats_state = std::make_shared<TraceCommandState>();
  auto* stats = command->add_subcommand(
      "stats",
      "Summarise a trace (or a synthetic workload): rate, burstiness, length percentiles, "
      "prefix reuse");
  stats->add_option("file", stats_state->file, "Trace file (any supported format)");
  add_workload_flags(stats, stats_state->workload, WorkloadFlagScope::kTraceTool);
  add_output_flags(stats, stats_state->output);
  stats->callback([stats_state] { run_stats(*stats_state); });

  auto gen_state = std::make_shared<TraceCommandState>();
  auto* gen = command->add_subcommand(
      "gen", "Generate a synthetic workload as a native CSV trace (stdout, or --out-trace FILE)");
  gen->add_option("--out-trace", gen_state->out_trace,
                  "Write the trace to FILE (atomically) and print its statistics")
      ->each([](const std::string& path) { check_output_path(path, "--out-trace"); });
  add_workload_flags(gen, gen_state->workload, WorkloadFlagScope::kTraceTool);
  add_output_flags(gen, gen_state->output);
  gen->callback([gen_state] { run_gen(*gen_state); });

  auto convert_state = std::make_shared<TraceCommandState>();
  auto* convert = command->add_subcommand(
      "convert", "Convert a trace (Azure, Mooncake, BurstGPT, Vidur, native) to native CSV");
  convert->add_option("file", convert_state->file, "Trace file to convert");
  convert->add_option("--to", convert_state->out_trace, "Native CSV file to write (atomically)")
      ->each([](const std::string& path) { check_output_path(path, "--to"); })
      ->required();
  add_workload_flags(convert, convert_state->workload, WorkloadFlagScope::kTraceTool);
  add_output_flags(convert, convert_state->output);
  convert->callback([convert_state] { run_convert(*convert_state); });
}

}  // namespace kvsim::cli
