#!/usr/bin/env bash
# `mpirun -np 2 kvsim plan ...` must write byte-identical JSON to a single-process run, with and
# without a resume file. Run by ctest (kvsim.plan.mpi_two_ranks); exits 77 (skipped) with a
# message when kvsim was built without MPI or no MPI launcher was found.
# Usage: test_plan_mpi.sh KVSIM_BINARY MPIEXEC HAVE_MPI(ON|OFF)
set -euo pipefail
kvsim="$1"
mpiexec="${2:-}"
have_mpi="${3:-OFF}"
if [ "$have_mpi" != "ON" ] && [ "$have_mpi" != "1" ] && [ "$have_mpi" != "TRUE" ]; then
  echo "skipped: kvsim was built without MPI (KVSIM_MPI=OFF or MPI not found)"
  exit 77
fi
if [ -z "$mpiexec" ] || ! command -v "$mpiexec" >/dev/null 2>&1; then
  echo "skipped: no MPI launcher (mpiexec/mpirun) found"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/sweep.yaml" <<'YAML'
model: llama-3-8b
gpu: [h100-sxm, a100-80gb, l40s]
tensor_parallel_size: 1
block_size: [16, 32]
serving: {max_num_seqs: 16}
cost_model: roofline
slo: {ttft_ms: 1000, tpot_ms: 40, percentile: 95}
seed: 3
workload:
  synthetic: {arrival: poisson, rate: 4, num_requests: 300, prompt_tokens: "uniform:50:1500",
              output_tokens: "uniform:10:300"}
plan: {target_rate: 20, search: {tolerance: 0.05}}
YAML
# Open MPI refuses to run as root without these; oversubscribe lets 2 ranks share fewer cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# MPI's own allocations at exit are not ours to report (ASan builds).
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
plan=(plan --config "$work/sweep.yaml" --format json --no-progress)

"$kvsim" "${plan[@]}" --jobs 1 >"$work/single.json" 2>"$work/single.err"
"$mpiexec" -np 2 "$kvsim" "${plan[@]}" --jobs 1 --out "$work/mpi_out.json" >"$work/mpi.json" \
  2>"$work/mpi.err" || { cat "$work/mpi.err"; exit 1; }
cmp "$work/single.json" "$work/mpi.json" || { echo "FAIL: 2 ranks differ from 1 process"; exit 1; }
cmp "$work/single.json" "$work/mpi_out.json" || { echo "FAIL: --out differs"; exit 1; }
grep -q "2 ranks" "$work/mpi.err" || { echo "FAIL: did not run on 2 ranks:"; cat "$work/mpi.err"; exit 1; }

# Resume over MPI: both ranks append to one results file; a second run resumes all of it.
"$mpiexec" -np 2 "$kvsim" "${plan[@]}" --resume "$work/results.jsonl" >"$work/mpi_r1.json" \
  2>"$work/mpi_r1.err" || { cat "$work/mpi_r1.err"; exit 1; }
[ "$(wc -l <"$work/results.jsonl")" -eq 6 ] || { echo "FAIL: results file"; exit 1; }
"$mpiexec" -np 2 "$kvsim" "${plan[@]}" --resume "$work/results.jsonl" >"$work/mpi_r2.json" \
  2>"$work/mpi_r2.err" || { cat "$work/mpi_r2.err"; exit 1; }
grep -q "(6 resumed)" "$work/mpi_r2.err" || { echo "FAIL: not resumed:"; cat "$work/mpi_r2.err"; exit 1; }
cmp "$work/single.json" "$work/mpi_r1.json" && cmp "$work/single.json" "$work/mpi_r2.json" ||
  { echo "FAIL: resumed MPI plan differs"; exit 1; }
echo "ok: 2 MPI ranks (fresh and resumed) wrote the same $(wc -c <"$work/single.json") bytes as one process"
