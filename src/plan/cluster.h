#pragma once
// The processes a sweep is sharded over: MPI ranks when kvsim was built with MPI
// (KVSIM_HAVE_MPI) and launched by an MPI launcher (mpirun/mpiexec/srun), else one process.
// This is the only place that includes <mpi.h>.
//
//   plan::MpiSession session;           // in the command, before any Cluster call
//   const plan::Cluster& world = session.world();
//   ... world.rank(), world.gather_at_root(...)
//
// Collective calls (all_ok, gather_at_root, barrier) must be made by every rank in the same
// order; with one process they return at once.

#include <memory>
#include <string>
#include <vector>

namespace kvsim::plan {

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;  // 0 .. size()-1
  virtual int size() const = 0;  // >= 1
  // Processes sharing this machine (for the default thread count per process); >= 1.
  virtual int local_size() const = 0;
  // True on every rank when `ok` is true on every rank (logical AND over ranks).
  virtual bool all_ok(bool ok) const = 0;
  // Rank 0 receives every rank's `mine` in rank order; the other ranks receive an empty vector.
  virtual std::vector<std::string> gather_at_root(const std::string& mine) const = 0;
  virtual void barrier() const = 0;
};

// A single process: rank 0 of 1.
class SingleProcess final : public Cluster {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  bool all_ok(bool ok) const override { return ok; }
  std::vector<std::string> gather_at_root(const std::string& mine) const override { return {mine}; }
  void barrier() const override {}
};

// True when this binary was built with MPI support.
bool built_with_mpi();

// True when the environment says an MPI launcher started this process (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE, PMIX_RANK, ...). A plain `kvsim plan` never initialises MPI.
bool launched_by_mpi();

// Owns MPI's lifetime for one command: initialises it (MPI_THREAD_FUNNELED) when built with MPI
// and launched by a launcher, finalises it in the destructor. Otherwise world() is SingleProcess.
// At most one live session per process.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  const Cluster& world() const {
    if (mpi_world_) return *mpi_world_;
    return single_;
  }
  bool active() const { return mpi_world_ != nullptr; }  // MPI was initialised by this session

 private:
  std::unique_ptr<Cluster> mpi_world_;
  SingleProcess single_;
};

}  // namespace kvsim::plan
