// plan/cluster.cpp (the single-process build the tests link): one rank, MPI only when launched.
#include <stdlib.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "plan/cluster.h"

using namespace kvsim::plan;

namespace {

// Sets an environment variable for the scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("cluster: a single process is rank 0 of 1 and its collectives return at once",
          "[plan][cluster]") {
  const SingleProcess p;
  CHECK(p.rank() == 0);
  CHECK(p.size() == 1);
  CHECK(p.local_size() == 1);
  CHECK(p.all_ok(true));
  CHECK_FALSE(p.all_ok(false));
  CHECK(p.gather_at_root("rows") == std::vector<std::string>{"rows"});
  p.barrier();
}

TEST_CASE("cluster: an MPI launcher is recognised by its environment", "[plan][cluster]") {
  const ScopedEnv a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr),
      c("PMIX_RANK", nullptr), d("PMI_RANK", nullptr);
  CHECK_FALSE(launched_by_mpi());
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    const ScopedEnv set(name, "2");
    CHECK(launched_by_mpi());
  }
  CHECK_FALSE(launched_by_mpi());
}

TEST_CASE("cluster: without MPI the session's world is the single process", "[plan][cluster]") {
  CHECK_FALSE(built_with_mpi());                          // kvsim_tests links kvsim_cluster_single
  const ScopedEnv launched("OMPI_COMM_WORLD_SIZE", "2");  // even under a launcher
  const MpiSession session;
  CHECK_FALSE(session.active());
  CHECK(session.world().rank() == 0);
  CHECK(session.world().size() == 1);
}
