#include <twocs/sweep/mpi_job.hpp>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#ifdef TWOCS_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace twocs::sweep {
namespace {

/// The world rank from the variables Open MPI (and other PMIx/PMI launchers) set; -1 if none.
int rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return -1;
}

} // namespace

int MpiJob::launched_rank() { return std::max(0, rank_from_environment()); }

#ifdef TWOCS_HAVE_MPI

bool MpiJob::built_with_mpi() { return true; }

namespace {

/// libsimgrid.so defines MPI_* as well (SMPI); the program links libmpi first (CMakeLists.txt).
/// Should a build lose that order, say so rather than start SimGrid's MPI under mpirun.
void check_mpi_is_open_mpi() {
  Dl_info info{};
  const auto address = reinterpret_cast<void*>(&MPI_Init);
  if (dladdr(address, &info) != 0 && info.dli_fname && std::string(info.dli_fname).find("simgrid") != std::string::npos)
    throw std::runtime_error(std::string("MPI_Init resolves to ") + info.dli_fname +
                             " (SimGrid's SMPI), not Open MPI: link libmpi before libsimgrid");
}

} // namespace

MpiJob::MpiJob() {
  if (rank_from_environment() < 0) return; // not started by mpirun: no MPI at all (no singleton runtime)
  check_mpi_is_open_mpi();
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  finalize_ = true;
}

MpiJob::~MpiJob() {
  if (finalize_) MPI_Finalize();
}

void MpiJob::everywhere(const std::function<void()>& step) const {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  if (size_ == 1) {
    if (error) std::rethrow_exception(error);
    return;
  }
  int failed[2] = {error ? 1 : 0, error && rank_ == 0 ? 1 : 0}; // any rank, rank 0
  MPI_Allreduce(MPI_IN_PLACE, failed, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (error && (rank_ == 0 || failed[1] == 0)) std::rethrow_exception(error);
  if (failed[0] != 0) throw PeerFailed("another MPI rank failed; its message says why");
}

#else

bool MpiJob::built_with_mpi() { return false; }
MpiJob::MpiJob() = default;
MpiJob::~MpiJob() = default;
void MpiJob::everywhere(const std::function<void()>& step) const { step(); }

#endif

} // namespace twocs::sweep
