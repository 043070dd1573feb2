// Private: the signals that stop a sweep between scenarios (SIGINT, SIGTERM, SIGHUP), caught
// while a sweep runs and restored after it, and, for an MPI rank, its launcher's death.
#pragma once

#include <csignal>

namespace twocs::sweep::detail {

/// Catches SIGINT, SIGTERM and SIGHUP for its lifetime (mpirun forwards Ctrl-C as SIGTERM; a
/// closed terminal sends SIGHUP). A SIGHUP ignored when the sweep started (`nohup`) stays
/// ignored. One at a time per process.
class StopSignals {
public:
  /// `watch_parent`: an MPI rank, which also stops when its launcher (mpirun or its daemon)
  /// is gone (mpirun killed with -9): it is then an orphan and must stop writing.
  explicit StopSignals(bool watch_parent);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

/// Whether the sweep was asked to stop (a signal, or an MPI rank's launcher gone).
[[nodiscard]] bool stop_requested();

/// The signal that asked the sweep to stop; 0 when none did (or the launcher is gone).
[[nodiscard]] int stop_signal();

/// In a forked child, before it runs its scenario (exec'd or not, SweepOptions::run_in_child):
/// the default actions again, so that a signal to the child stops it. Async-signal-safe.
void default_stop_signals();

/// Blocks SIGINT, SIGTERM and SIGHUP (around fork: a child never runs the sweep's handler);
/// returns the mask before.
[[nodiscard]] sigset_t block_stop_signals();
void restore_signal_mask(const sigset_t& mask);
/// In the forked child, after default_stop_signals(): the signals held meanwhile arrive now.
void unblock_stop_signals();

} // namespace twocs::sweep::detail
