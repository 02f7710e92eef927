#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build kvsim with CUDA, run the kernel-vs-CPU-reference checks
# ("[gpu]" tests), a short calibration of one model's shapes, and print one table: kernel, shape,
# time, achieved TB/s or TFLOP/s, and the fraction of the measured copy bandwidth (bandwidth-bound
# kernels) or of the best GEMM rate (compute-bound kernels). Sized for under 5 minutes.
#
#   scripts/gpu-check.sh [MODEL] [GPU]     defaults: llama-3-8b, and the GPU guessed from the
#                                          device name (pass a shipped name or YAML otherwise)
# Outputs under build-gpu/gpu-check/: profile.yaml, profile.measurements.csv, report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-llama-3-8b}
gpu=${2:-}
start=$(date +%s)

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU visible (nvidia-smi -L failed); nothing to check" >&2
  exit 1
fi
nvidia-smi -L >&2

echo "== build (CUDA on)" >&2
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVSIM_CUDA=ON >/dev/null
cmake --build build-gpu -j "$(nproc)" --target kvsim kvsim_tests

echo "== kernels against their CPU references" >&2
build-gpu/tests/kvsim_tests "[kernels]" --success --reporter compact | tail -n 3

echo "== short calibration of $model" >&2
out=build-gpu/gpu-check
mkdir -p "$out"
gpu_flag=()
[ -n "$gpu" ] && gpu_flag=(--gpu "$gpu")
build-gpu/kvsim calibrate --device 0 --model "$model" "${gpu_flag[@]}" --quick --tp-sizes 1,2 \
  --out "$out/profile.yaml" --report "$out/report.json" --format table

echo "gpu-check: done in $(( $(date +%s) - start )) s; profile in $out/profile.yaml" >&2
