#include "plan/cluster.h"

#include <cstdlib>
#include <limits>

#include "common/assert.h"
#include "common/error.h"

#if defined(KVSIM_HAVE_MPI)
#include <mpi.h>
#endif

namespace kvsim::plan {

bool built_with_mpi() {
#if defined(KVSIM_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

bool launched_by_mpi() {
  // Open MPI, PMI-1/2 launchers (MPICH Hydra, Slurm), PMIx.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

#if defined(KVSIM_HAVE_MPI)
namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(std::string("MPI failure in ") + what);
}

class MpiWorld final : public Cluster {
 public:
  MpiWorld() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
    MPI_Comm_free(&local);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  bool all_ok(bool ok) const override {
    int mine = ok ? 1 : 0, all = 0;
    check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce");
    return all != 0;
  }
  std::vector<std::string> gather_at_root(const std::string& mine) const override {
    KVSIM_ASSERT(mine.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "MPI gather payload over 2 GiB");
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::vector<int> displs;
    std::string all;
    if (rank_ == 0) {
      displs.resize(size_);
      long long total = 0;
      for (int r = 0; r < size_; ++r) {
        displs[r] = static_cast<int>(total);
        total += lens[r];
      }
      KVSIM_ASSERT(total <= std::numeric_limits<int>::max(), "MPI gather total over 2 GiB");
      all.resize(static_cast<std::size_t>(total));
    }
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                      0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    if (rank_ == 0) {
      for (int r = 0; r < size_; ++r) out.push_back(all.substr(displs[r], lens[r]));
    }
    return out;
  }
  void barrier() const override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

 private:
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace
#endif

MpiSession::MpiSession() {
#if defined(KVSIM_HAVE_MPI)
  if (!launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  KVSIM_ASSERT(!initialized, "MpiSession: MPI already initialised");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  mpi_world_ = std::make_unique<MpiWorld>();
#endif
}

MpiSession::~MpiSession() {
#if defined(KVSIM_HAVE_MPI)
  if (mpi_world_) {
    mpi_world_.reset();
    MPI_Finalize();
  }
#endif
}

}  // namespace kvsim::plan
