#pragma once
// The fitted part of a hardware profile: how far below its datasheet roofline each class of
// kernel runs, and where those numbers come from. Plain data; cost/ evaluates it and fits it,
// config/ reads and writes it (the `cost_model:` section of a hardware YAML).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvsim::model {

// A piecewise-linear function of x (e.g. log10 of an op's FLOPs or bytes), clamped at both ends.
// Empty knots: the constant `value` everywhere.
struct EfficiencyCurve {
  double value = 1.0;           // used when knots_x is empty
  std::vector<double> knots_x;  // strictly increasing
  std::vector<double> knots_y;  // same size as knots_x, each in (0, 1]

  double at(double x) const;
};

// One op class (gemm, attn_prefill, attn_decode, allreduce, memcpy, elementwise).
struct OpClassProfile {
  EfficiencyCurve compute;      // η_c: achieved / peak FLOP/s, against log10(FLOPs)
  EfficiencyCurve memory;       // η_m: achieved / peak bytes/s, against log10(bytes)
  double launch_latency_s = 0;  // added once per kernel
};

// Measured times of one family of kernel shapes (an op class, a dtype and the fixed dimensions),
// kept so that shapes inside the measured range are interpolated rather than modelled: log time
// is interpolated linearly in log x1 (the token dimension) and, between measured x2 lines, in
// log(1 + x2). Which dimensions are fixed and which are x1/x2 depends on the op class (see
// cost/ops.h: gemm x1 = m; attn_prefill x1 = q_len, x2 = kv_len; attn_decode x1 = batch,
// x2 = kv_len; allreduce and memcpy x1 = bytes).
struct MeasuredTable {
  struct Point {
    double x1 = 0;
    double x2 = 0;      // 0 for one-dimensional tables
    double time_s = 0;  // > 0
  };
  std::string op;                                           // op class name
  std::string dtype;                                        // dtype name (model/dtype.h)
  std::vector<std::pair<std::string, std::int64_t>> shape;  // fixed dimensions, by name
  std::vector<Point> points;  // sorted by (x2, x1), no duplicate (x2, x1)
};

// A fitted profile's error on measurements held out of its fit (kvsim calibrate --holdout):
// absolute percentage errors of predicted against measured kernel times.
struct HeldOutError {
  std::int64_t rows = 0;
  double median_ape = 0;  // percent
  double p90_ape = 0;     // percent, nearest rank
};

struct CostProvenance {
  std::string kind = "datasheet";  // "datasheet" | "calibrated" | "imported"
  std::string device;              // GPU name the numbers were measured on
  std::string driver;
  std::string date;  // ISO 8601
  std::string kvsim_version;
  std::string source;  // measurement file or datasheet reference
  // Rows held out of the fit and scored: the fraction, the split's seed, and the error per op
  // class (empty when nothing was held out).
  // Op classes whose curves were fitted to measurements; the others keep the base profile's
  // datasheet guesses. Empty for a datasheet profile.
  std::vector<std::string> fitted_op_classes;
  // Framework-overhead terms (step_overhead_us, seq_overhead_us, prefill_token_overhead_us,
  // frontend_latency_us) fitted to a real run's latencies (kvsim calibrate --from-run); empty
  // otherwise.
  std::vector<std::string> fitted_overheads;
  double held_out_fraction = 0;
  std::int64_t held_out_seed = 0;
  std::map<std::string, HeldOutError> held_out;
};

struct CostProfile {
  CostProvenance provenance;
  std::map<std::string, OpClassProfile> op_classes;  // keyed by op class name
  // CPU time per engine step (scheduling, input preparation, sampling) that the GPU does not
  // hide. Default 1 ms: vLLM's per-step host overhead is ~0.5-2 ms for batches of tens of
  // sequences. A YAML without step_overhead_us keeps this default.
  double step_overhead_s = 0.001;
  // CPU time per sequence scheduled in a step (input preparation, block tables, sampling
  // bookkeeping grow with the batch), s. Default 0: only a fit from a real run sets it.
  double seq_overhead_s = 0;
  // CPU time per prompt token scheduled in a step (tokenized input copied to the GPU, position
  // and slot mappings), s. Default 0: only a fit from a real run sets it.
  double prefill_token_overhead_s = 0;
  // CPU time per context token of the step's sequences (each sequence's tokens once the step
  // has run: a decode's context and new token, a prefill chunk's cached and new tokens): block
  // tables built and shipped to the workers each step grow with it. Default 0. DistServe's
  // simulator models its engine's (and early vLLM's) Ray workers with 0.1 µs per token on top of 2
  // ms per step.
  double context_token_overhead_s = 0;
  // Per request, s: the serving front end's time between the client and the engine that no step
  // hides (the HTTP request parsed, the prompt tokenized and handed to the engine process, the
  // first token detokenized and streamed back). It adds to TTFT and E2E, not to TPOT or ITL; the
  // simulator delays each request's arrival at the scheduler by it. Default 0: only a fit from a
  // real run (kvsim calibrate --from-run) sets it.
  double frontend_latency_s = 0;
  // Host time per layer to issue a step's kernels one by one, s: a step that runs without a CUDA
  // graph (vLLM's --enforce-eager, a step above the largest capture size, a prefill under
  // cudagraph_mode FULL_DECODE_ONLY) cannot end before the host has issued its layers' kernels,
  // so it lasts at least layers × this (kernels launch asynchronously: the GPU's time hides it up
  // to there). A property of the GPU's kernel stack (how many kernels a layer is and what each
  // launch costs the host). Default 0: not modelled unless the profile has it.
  double eager_layer_host_s = 0;
  std::vector<MeasuredTable> tables;  // exact-shape measurements; empty for datasheet profiles
};

}  // namespace kvsim::model
