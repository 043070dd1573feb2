// `twocs sweep`: runs every scenario of a study, each in its own process (a crash or a hang
// fails that scenario's row, never the sweep), several at once, and appends one CSV row per
// scenario as it finishes. Rerunning the same sweep resumes it: finished rows are kept and
// their scenarios not rerun.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <twocs/config/study.hpp>
#include <twocs/sweep/mpi_job.hpp>

namespace twocs::sweep {

struct SweepOptions {
  std::filesystem::path program;  // the twocs executable that runs one scenario (`twocs run`)
  std::filesystem::path output;   // the results CSV
  std::filesystem::path work_dir; // scratch files of running scenarios (created, then removed)
  std::size_t jobs = 1;           // scenarios running at once
  double timeout_s = 0;           // per scenario; 0: none
  bool terminal = false;          // progress as a redrawn bar (a terminal) or one line per scenario
  /// Set: each scenario's forked child calls this with `twocs run`'s arguments and exits with
  /// what it returns, instead of executing `program` (the Python module, whose process is
  /// python3, runs scenarios in-process this way). Empty: the child executes `program`.
  std::function<int(const std::vector<std::string>& argv)> run_in_child;
};

/// A scenario whose process was stopped from outside the sweep by `signal` (SIGINT, SIGTERM or
/// SIGHUP sent to it alone): it has no row, and a rerun runs it.
struct LeftOut {
  std::size_t scenario = 0;
  int signal = 0;
};

struct SweepTotals {
  std::size_t scenarios = 0;
  std::size_t already_done = 0; // found in the CSV, not rerun
  std::size_t ran = 0;
  std::size_t failed = 0;   // any status but ok
  bool interrupted = false; // stopped early, or scenarios left out: the CSV is resumable, not complete
  int stop_signal = 0;      // the signal that stopped the sweep (SIGINT, SIGTERM, SIGHUP); 0: none
  std::vector<LeftOut> left_out;
  std::vector<std::string> notes; // "CSV:LINE: note: ..." on the earlier run's CSV (a torn last line dropped)
};

/// Runs the study's unfinished scenarios; `progress` receives the bar or lines. Stops early,
/// leaving the CSV resumable, on SIGINT, SIGTERM or SIGHUP. Throws InputError for an unusable
/// output: a CSV that another sweep is writing (CSV.lock), a line twocs never wrote, a disk
/// that fills; the CSV then keeps every finished row and no part of another.
/// In an MPI job (`job` of more than one rank) every rank calls it: rank 0 reads and writes
/// the CSV and hands out scenarios, all ranks run them, each with `options.jobs` at once; the
/// totals of other ranks count only their own scenarios. Throws PeerFailed on ranks other
/// than the one that failed.
SweepTotals run_sweep(const config::Study& study, const SweepOptions& options, std::ostream& progress,
                      const MpiJob* job = nullptr);

/// The scratch folder of the sweep run by process `pid`: `<parent>/twocs-sweep-<pid>`.
[[nodiscard]] std::filesystem::path work_dir_of(const std::filesystem::path& parent, long pid);

/// Removes the scratch folders in `parent` left by sweeps whose process no longer exists (killed
/// with SIGKILL, so they could not clean up); folders of live processes are kept. Returns how
/// many were removed.
std::size_t remove_stale_work_dirs(const std::filesystem::path& parent);

} // namespace twocs::sweep
