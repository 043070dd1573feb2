#include <twocs/sweep/sweep.hpp>

#include <csignal>
#include <unistd.h>

#include "columns.hpp"
#include "local_transport.hpp"
#include "results_file.hpp"
#include "sweep_loop.hpp"
#ifdef TWOCS_HAVE_MPI
#include "mpi_transport.hpp"
#endif

namespace twocs::sweep {
namespace {

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) { stop_requested = 1; }
pid_t watched_parent = 0; // an MPI rank's launcher (mpirun or its daemon); 0: none watched

/// SIGINT or SIGTERM (mpirun forwards Ctrl-C as SIGTERM), or, for an MPI rank, its launcher
/// gone (mpirun killed with -9): this rank is an orphan and must stop writing.
bool should_stop() { return stop_requested != 0 || (watched_parent != 0 && ::getppid() != watched_parent); }

/// SIGINT and SIGTERM stop the sweep between scenarios; restored when the sweep ends.
class StopSignals {
public:
  explicit StopSignals(bool watch_parent) {
    stop_requested = 0;
    watched_parent = watch_parent ? ::getppid() : 0;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    watched_parent = 0;
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

private:
  struct sigaction old_int_ {
  }, old_term_{};
};

/// The scenarios of the CSV's earlier run; on an MPI job, every rank learns whether rank 0
/// could read it (a CSV of another study stops all of them).
std::set<std::size_t> prepare(const config::Study& study, const SweepOptions& options, const MpiJob* job) {
  std::set<std::size_t> done;
  const auto read_csv = [&] { done = detail::prepare_results(options.output, detail::csv_header(study), study); };
  if (job)
    job->everywhere([&] {
      if (job->rank() == 0) read_csv();
    });
  else
    read_csv();
  return done;
}

void finish_work_dir(const SweepOptions& options) {
  std::error_code ignored;
  std::filesystem::remove_all(options.work_dir, ignored);
}

} // namespace

SweepTotals run_sweep(const config::Study& study, const SweepOptions& options, std::ostream& progress_out,
                      const MpiJob* job) {
  const bool distributed = job && job->size() > 1;
#ifdef TWOCS_HAVE_MPI
  if (distributed && job->rank() != 0) {
    (void)prepare(study, options, job); // throws PeerFailed when rank 0 cannot use the CSV
    const StopSignals signals(true);
    SweepTotals totals{study.scenario_count(), 0, 0, 0, false};
    totals.interrupted = detail::run_mpi_worker(study, options, totals, should_stop);
    finish_work_dir(options);
    return totals;
  }
#endif
  const std::set<std::size_t> done = prepare(study, options, job);
  SweepTotals totals{study.scenario_count(), done.size(), 0, 0, false};
  detail::LocalTransport local(study, options, done, progress_out);
  const StopSignals signals(distributed);
#ifdef TWOCS_HAVE_MPI
  if (distributed)
    totals.interrupted = detail::run_mpi_coordinator(study, options, local, should_stop);
  else
#endif
    totals.interrupted = detail::run_loop(study, options, local, should_stop);
  local.close();
  totals.ran = local.ran();
  totals.failed = local.failed();
  finish_work_dir(options);
  if (!totals.interrupted) detail::sort_results(options.output);
  return totals;
}

} // namespace twocs::sweep
