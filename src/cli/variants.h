#pragma once
// Which executable runs a command line. The main `kvsim` links neither CUDA nor MPI libraries,
// so every command starts in milliseconds (cuBLASLt's initialisers alone cost ~0.2 s and
// ~200 MB on each launch). Two siblings, built next to it when their part is found, carry them:
//
//   kvsim-device   CUDA kernels, cuBLAS(Lt), NCCL (KVSIM_CUDA, nvcc found): `calibrate --device`
//   kvsim-mpi      MPI (KVSIM_MPI, MPI found): `plan` started by an MPI launcher
//
// Both are the whole CLI with another backend; either can be run directly. `kvsim` hands such a
// command line to its sibling with execv: same arguments, same environment, same process (so an
// MPI launcher's rank stays the process it started: `mpirun -np 4 kvsim plan ...` works).

namespace kvsim::cli {

// Execs the sibling that `argv` needs, when this executable lacks the part and the sibling
// exists next to it (/proc/self/exe). Returns when no hand-over applies or it failed; the
// command then runs here and reports what is missing (e.g. "built without CUDA").
void exec_sibling_if_needed(int argc, char** argv);

}  // namespace kvsim::cli
