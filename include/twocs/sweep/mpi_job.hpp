// The MPI job a `twocs sweep` process belongs to when started by mpirun: rank 0 coordinates
// (reads and writes the CSV, hands out scenarios), every rank runs scenarios. Without mpirun,
// or in a twocs built without MPI, the process is alone: rank 0 of 1.
#pragma once

#include <functional>
#include <stdexcept>

namespace twocs::sweep {

/// Another rank failed and reported why; rank 0 says so, other ranks leave quietly.
class PeerFailed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class MpiJob {
public:
  /// Joins the MPI job (MPI_Init) when started by mpirun and built with MPI.
  MpiJob();
  /// Leaves it (MPI_Finalize), unless abandon() was called.
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  /// Whether this twocs was built with MPI (CMake found it).
  [[nodiscard]] static bool built_with_mpi();
  /// The rank mpirun gave this process, read from its environment (0 without mpirun): in a
  /// twocs built without MPI, every copy but rank 0 leaves the sweep to rank 0.
  [[nodiscard]] static int launched_rank();
  /// Collective: runs `step` on every rank. When it throws on some rank, every rank leaves:
  /// the error is rethrown where it should be reported (rank 0, or the failing ranks when
  /// rank 0 succeeded), PeerFailed elsewhere; so an error all ranks meet is reported once.
  void everywhere(const std::function<void()>& step) const;
  /// After an interruption: exit without MPI_Finalize, which would wait for ranks mpirun kills.
  void abandon() { finalize_ = false; }

private:
  int rank_ = 0;
  int size_ = 1;
  bool finalize_ = false;
};

} // namespace twocs::sweep
